"""What a Bash command does, decided without running it (pure: no process is started, nothing is written).

    security.py   raw-text checks that run before any parsing (control characters, $IFS, zsh-isms, …)
    quoting.py    a quote-aware scan of raw text; parse.py bashlex's tree → simple commands in source order;
                  plain.py a fast path for the plainest commands that builds the same tree
    classify.py   the verdict for the whole command and each simple command, from the tables in programs/
                  (one module per family of programs: what each reads, writes, and which options it accepts)

The permission engine (`toolgate.permissions`) asks this package what a command does; running it is
`toolgate.shell`, which this package never imports.
"""
