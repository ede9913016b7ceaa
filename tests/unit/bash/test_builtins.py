"""Issue 27 §4: every bash builtin is read with bash's own option parser (short options only, clustered, values
attached or separate, `--` and the first operand end them), and is read-only only in the forms that only print.
Each form that runs a command or evaluates a subscript is named; the printing forms people use stay read-only."""

from __future__ import annotations

import subprocess

import pytest

from toolgate.bash.classify import classify
from toolgate.bash.programs import EVAL_LIKE, PROGRAMS, WRAPPERS

RUNS_OR_SETS = [
    ("jobs -x touch p", "jobs -x runs a command"),
    ("jobs -lx touch p", "jobs -x runs a command"),
    ("wait -p 'a[$(touch p)]'", "subscript"),
    ("wait -npa[i]", "subscript"),
    ("read -a 'a[$(touch p)]' < notes.txt", "subscript"),
    ("read -raa[i] < notes.txt", "subscript"),
    ("read -r -- 'a[$(touch p)]' < notes.txt", "subscript"),
    ("command ls", "command runs"),
    ("command -p rm x", "command runs"),
    ("alias ls='rm -rf'", "alias defines"),
    ("umask 000", "changes the permissions"),
    ("ulimit -n 10", "sets a resource limit"),
    ("shopt -s extglob", "shopt -s"),
    ("shopt -ps dotglob", "shopt -s"),
    ("trap 'touch p' EXIT", "trap sets code"),
    ("trap -- 'touch p' EXIT", "trap sets code"),
    ("history -s 'rm -rf x'", "history"),
    ("history -c", "history"),
    ("kill -9 1", "-9"),
    ("hash -p /tmp/evil ls", "hash -p"),
    ("hash ls", "hash with a name"),
    ("fc -e vi", "fc -e"),
    ("fc -s", "fc -s"),
    ("eval 'touch p'", "eval"),
    ("builtin eval 'touch p'", "builtin runs"),
    ("exec rm x", "exec"),
    ("source x.sh", "source"),
    ("enable -f x.so foo", "enable"),
    ("complete -C 'touch p' foo", "complete"),
    ("bind -x '\"\\C-a\": touch p'", "bind"),
    ("mapfile -C 'touch p' -c 1 arr < notes.txt", "mapfile"),
    ("let 'a[$(touch p)]=1'", "let"),
    ("declare 'a[$(touch p)]=1'", "declare"),
    ("printf -v 'a[$(touch p)]' %s x", "printf -v"),
    ("test -v 'a[$(touch p)]'", "subscript"),
    ("getopts ab x", "getopts"),
]
ONLY_PRINTS = [
    "command -v ls", "command -V git", "command -pv node", "jobs", "jobs -l", "wait", "wait -n", "alias",
    "alias ll", "umask", "umask -S", "ulimit -a", "ulimit -n", "shopt", "shopt -p", "shopt extglob", "trap",
    "trap -p", "trap -p EXIT", "history", "history 20", "kill -l", "kill -l 9", "hash", "hash -t ls", "fc -l",
    "fc -ln -5", "read -r line < notes.txt", "read -ra parts < notes.txt", "type -a ls", "help cd", "dirs -v",
]  # fmt: skip


@pytest.mark.parametrize(("command", "why"), RUNS_OR_SETS)
def test_forms_that_run_or_set_are_not_read_only(command: str, why: str) -> None:
    result = classify(command)
    assert not result.read_only, command
    assert why in result.reason, (command, result.reason)


@pytest.mark.parametrize("command", ONLY_PRINTS)
def test_forms_that_only_print_stay_read_only(command: str) -> None:
    result = classify(command)
    assert result.read_only, (command, result.reason)


def test_every_bash_builtin_is_modelled_or_refused() -> None:
    """Every builtin real bash has (compgen -b) is either refused outright, a wrapper, or has a checker; a
    builtin this list does not know (a newer bash) is not read-only because it is in no table."""
    listed = subprocess.run(["bash", "-c", "compgen -b"], capture_output=True, text=True, check=True).stdout.split()
    assert len(listed) > 50
    for name in listed:
        if name in EVAL_LIKE or name in WRAPPERS:
            assert not classify(f"{name} x").read_only or name == "time", name
        elif name not in PROGRAMS:  # (the options of those in PROGRAMS: test_unknown_options.py)
            assert not classify(f"{name} x").read_only, name
