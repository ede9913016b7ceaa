"""Issue 27 §4/§5: options are read as each program's own parser reads them (long options by exact name or
unambiguous prefix where it uses getopt_long or git's parse-options, clustered short options with attached
or separate values, `--opt=value` and `--opt value`). A file read through an option is a path the ladder
checks; an option that writes, runs a program or changes the system is refused in every spelling."""

from __future__ import annotations

import pytest

from toolgate.bash.classify import classify

READS_THROUGH_AN_OPTION = [
    ("git blame --contents /etc/passwd a.txt", "/etc/passwd"),
    ("git blame --contents=/etc/passwd a.txt", "/etc/passwd"),
    ("git blame --cont=/etc/passwd a.txt", "/etc/passwd"),
    ("git blame -S /etc/revs a.txt", "/etc/revs"),
    ("git blame --ignore-revs-file /etc/revs a.txt", "/etc/revs"),
    ("git grep -f /etc/patterns", "/etc/patterns"),
    ("git grep -nf/etc/patterns", "/etc/patterns"),
    ("git grep --file=/etc/patterns", "/etc/patterns"),
    ("git ls-files -X /etc/excludes", "/etc/excludes"),
    ("git ls-files --exclude-from=/etc/excludes", "/etc/excludes"),
    ("git diff -O/etc/order", "/etc/order"),
    ("git log -p -O /etc/order", "/etc/order"),
    ("grep -rf /etc/patterns .", "/etc/patterns"),
    ("grep --exclude-fr=/etc/patterns x .", "/etc/patterns"),
    ("sort --files0-from=/etc/names", "/etc/names"),
    ("diff --from-file=/etc/passwd a.txt", "/etc/passwd"),
    ("find . -newer /etc/passwd", "/etc/passwd"),
    ("find . -samefile /etc/shadow", "/etc/shadow"),
    ("find . -neweram /etc/hosts", "/etc/hosts"),
]
REFUSED = [
    ("git grep -nO foo", "-O"),
    ("git grep -iOless foo", "-O"),
    ("git log --show-signature", "gpg"),
    ("git show --show-sig HEAD", "gpg"),
    ("git log --format=%GS", "gpg"),
    ("git log --pretty='%h %GS'", "gpg"),
    ("git config --global=x user.name", "takes none"),
    ("git config --local=1 --list", "takes none"),
    ("hostname --file=/etc/hostname", "sets the host name"),
    ("hostname --fil=/etc/hostname", "sets the host name"),
    ("hostname -Fx", "sets the host name"),
    ("hostname -b", "sets the host name"),
    ("hostname box", "sets the host name"),
    ("hostname --f", "sets the host name"),  # ambiguous: --fqdn or --file, so not read-only
    ("date --set=2020-01-01", "system clock"),
    ("date --se=2020-01-01", "system clock"),
    ("date -us 2020-01-01", "system clock"),
    ("sort --outp=f a.txt", "writes"),
    ("sort -rof a.txt", "writes"),
    ("sort --comp a.txt", "sort --comp"),
    ("sed -n --in-pl p a.txt", "sed -i"),
    ("sed -sni p a.txt", "sed -i"),
    ("sed -n --fi=x.sed a.txt", "sed --file"),
    ("sed -n --expr='1e date' a.txt", "e command"),
    ("awk --so='BEGIN { system(\"date\") }'", "system()"),
    ("awk --lo=x 'BEGIN {}'", "awk --load"),
    ("awk -vx=1 -f prog.awk a.txt", "awk -f"),
    ("grep -R token .", "follows symbolic links"),
    ("grep -nR token .", "follows symbolic links"),
    ("grep --derefer token .", "follows symbolic links"),
    ("rg --follow token", "follows symbolic links"),
    ("rg -nL token", "follows symbolic links"),
    # A wildcard can expand to a file named `--output=x` (a differential harness finding: it wrote x).
    ("git shortlog -sn *", "could become an option"),
    ("git log -n *", "could become more arguments"),
    ("git log -S $WORD", "could become more arguments"),
    ("sort -k * a.txt", "could become more arguments"),
    ("sort --key $KEYS a.txt", "could become more arguments"),
]
STAY_READ_ONLY = [
    "git log -Sfoo", "git log -G'o+' --oneline", "git status -uno", "git shortlog -sn", "git grep -on foo",
    "git blame -L 1,5 a.txt", "git log -n 5 -p", "git shortlog -sn HEAD", "hostname -f", "hostname --fqdn",
    "hostname -I",
    "git config --global user.name", "git config --get-regexp alias", "git log --format='%h %s'",
    "sed -n --expr=p a.txt", "sed -nE -e p a.txt", "sed -n -l5 p a.txt", "awk -F: -vx=1 '{print $1, x}' a.txt",
    "awk --field-sep=: '{print $1}' a.txt", "find . -newermt 2024-01-01 -type f",
    "grep -rn token .", "rg -n token", "find -L . -name x",
]  # fmt: skip


@pytest.mark.parametrize(("command", "path"), READS_THROUGH_AN_OPTION)
def test_a_file_read_through_an_option_is_a_read(command: str, path: str) -> None:
    result = classify(command)
    assert path in result.commands[0].read_targets, (command, result.commands[0].read_targets, result.reason)


@pytest.mark.parametrize(("command", "why"), REFUSED)
def test_an_option_that_writes_runs_or_sets_is_refused_in_every_spelling(command: str, why: str) -> None:
    result = classify(command)
    assert not result.read_only, command
    assert why in result.reason, (command, result.reason)


@pytest.mark.parametrize("command", STAY_READ_ONLY)
def test_everyday_forms_stay_read_only(command: str) -> None:
    result = classify(command)
    assert result.read_only, (command, result.reason)
