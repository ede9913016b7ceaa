"""Issue 27 §4: the languages read-only programs run (sed, awk) are read by their own grammar. The sed cases
are checked against real GNU sed: every script below hides `e touch MARK` after another construct, and
whenever real sed runs it, the classifier must not call the command read-only (0 false allows)."""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from toolgate.bash.classify import classify

# Constructs after which a parser could wrongly think the script, a regex, a label or a text has ended.
SED_CONSTRUCTS = [
    ":a", ": a", "tend", "t end", "Tend", "b end", "v 4.2", ":b#c", "y/a;/b;/", "s/a/b/", "s;a;b;", "s/[;]/x/",
    "s/a\\/b/c/", "s/a/b/w /dev/null", "a foo", "i\\\nfoo", "/a;b/p", "/}/p", "\\;a;p", "#c", "{p", "1{p}", "l 5",
    "q5", "r in.txt", "F", "z", "s/a/b/2g", "/a/I p", "0~2 p", "W /dev/null",
]  # fmt: skip
SEPARATORS = [";", "\n", "}", " ", "\t", ";}", "\n}"]
LABELS = "\n:a\n:end"


def _run_sed(script: str, cwd: Path) -> None:
    """Real sed in its own process group, killed with everything it started if it loops (`:a;ba`)."""
    process = subprocess.Popen(
        ["sed", "-n", script, "in.txt"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.skipif(shutil.which("sed") is None, reason="needs GNU sed")
def test_no_script_that_makes_real_sed_run_a_command_is_read_only(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("a;b}c/d\nx y\n")
    marker = tmp_path / "MARK"
    ran = 0
    for construct, separator in itertools.product(SED_CONSTRUCTS, SEPARATORS):
        script = f"{construct}{separator}e touch MARK{LABELS}"
        marker.unlink(missing_ok=True)
        _run_sed(script, tmp_path)
        if marker.exists():
            ran += 1
            assert not classify(f"sed -n {shlex.quote(script)} in.txt").read_only, script
    assert ran > 50  # the corpus does reach sed's `e` command often; the assertion above is not vacuous


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("sed -n 't end e touch p\n:end' a.txt", "e command"),
        ("sed -n ':a e touch p' a.txt", "e command"),
        ("sed -n 'bx}e touch p' a.txt", "cannot follow"),
        ("awk 'BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }'", "ARGV"),
        ("awk 'BEGIN { ARGC = 1 } 1' a.txt", "ARGV or ARGC"),
    ],
)
def test_script_text_that_runs_or_reads_elsewhere_is_refused(command: str, why: str) -> None:
    result = classify(command)
    assert not result.read_only and why in result.reason, (command, result.reason)


@pytest.mark.parametrize(
    "command",
    ["sed -n ':a;N;$!ba;p' a.txt", "sed -n '/start/,/end/p' a.txt", "sed 's/a/b/g' a.txt", "awk '{print $1}' a.txt"],
)
def test_everyday_scripts_stay_read_only(command: str) -> None:
    assert classify(command).read_only, command
