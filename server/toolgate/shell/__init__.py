"""The shell: deciding whether a Bash command is read-only, and running it.

Deciding (pure, no process is started):
    security.py   raw-text checks that run before any parsing (control characters, $IFS, zsh-isms, …)
    quoting.py    a quote-aware scan of raw text; parse.py bashlex's tree → simple commands in source order
    classify.py   the verdict for the whole command and each simple command, from the tables in programs/
                  (one module per family of programs: what each reads, writes, and which options it accepts)

Running:
    executor.py   one command in /bin/bash: own process group, no stdin, timeout, capped output (output.py)
    host.py       a session's scratch directory and background commands; groups.py stops process groups;
                  watchdog.py stops them when the sidecar dies
    sandbox/      the bubblewrap boundary every command runs under when the sandbox is on (policy.py is pure)

Child environments come from `toolgate.core.child_env` (secrets scrubbed); permission rules and the ladder live in
`toolgate.permissions`, which asks this package what a command does.
"""
