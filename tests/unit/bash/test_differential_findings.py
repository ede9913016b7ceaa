"""What the differential harness (tests/differential) found: commands the classifier called read-only that, run
for real, wrote a file or ran a program outside their table. Each must now not be read-only.

A finding the tables do not handle yet is listed with the reason (`open`) and xfails strictly, so the case turns
green, and must be moved, as soon as the classifier learns it. The harness's bounded sample does not fail on an
open finding's command, nor on the other commands of its class (`covers`, a pattern).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from toolgate.bash.classify import classify


@dataclass(frozen=True, slots=True)
class Finding:
    command: str
    did: str  # what it did when the harness ran it
    open: str | None = None  # why the classifier still calls it read-only (the case xfails until it does not)
    covers: str = ""  # an open finding's class: a pattern for the commands that share it (default: this one)

    def matches(self, command: str) -> bool:
        return command == self.command or (bool(self.covers) and re.search(self.covers, command) is not None)


FINDINGS: tuple[Finding, ...] = (
    Finding("diff --paginate notes.txt README.md", "ran /usr/bin/pr"),
    Finding("diff --pag notes.txt README.md", "ran /usr/bin/pr (an abbreviation of --paginate)"),
    Finding("diff -ul notes.txt README.md", "ran /usr/bin/pr (-l, clustered)"),
    Finding("locale --ch -mv", "ran /usr/bin/gzip -d -c for every compressed character map"),
    Finding("locale --charmaps", "ran /usr/bin/gzip -d -c"),
    Finding("locale src/main.py -m", "ran /usr/bin/gzip -d -c (the option after an operand)"),
    Finding("xxd . -plain", "wrote ./-plain: xxd's options end at its first operand, the second is its output"),
    Finding("xxd src/main.py -nE", "wrote ./-nE"),
    Finding("xxd -Ec notes.txt README.md", "wrote README.md: xxd reads -Ec as -E, its input and output follow"),
    Finding("xxd -c 8 -Ec notes.txt README.md", "the same after an option's value"),
    Finding("git shortlog -sn *", "wrote glob.out: * expanded to a file named --output=glob.out"),
    Finding("file -pn Makefile no*", "ran utimensat on notes.txt: -p sets back the access times of what it read"),
    Finding("file --preserve notes.txt", "the same, --preserve-date abbreviated"),
    Finding("uniq -c .*", "wrote .gitignore: the glob expanded to `.git .gitignore`, and the second is uniq's output"),
    Finding("jobs -x touch notes.txt", "ran touch, which changed notes.txt's times"),
    Finding("jobs -lx touch notes.txt", "the same, -x clustered"),
    Finding("sleep 0.1 & wait -n -p 'a[$(touch pwned.out)]'", "created pwned.out: bash evaluates the name's subscript"),
    Finding("wait -np 'a[$(touch pwned.out)]'", "the same, -p clustered"),
    Finding("git ls-remote .", "ran /bin/sh -c \"git-upload-pack '.'\": `.` is a path, not a remote's name"),
    Finding("git ls-remote ..", "the same, one directory up"),
    Finding(
        "git ls-remote origin",
        "ran /bin/sh -c \"git-upload-pack 'origin'\" (no remote of that name: git took it for a path)",
        open="contacting a remote runs the transport its configuration names (sh and git-upload-pack for a path, "
        "ssh and core.sshCommand, git-remote-https); the table calls ls-remote of a remote's name read-only",
        covers=r"\bgit\b.*\bls-remote\b",
    ),
    Finding(
        "git remote show origin",
        "ran /bin/sh -c \"git-upload-pack 'origin'\"",
        open="git remote show (without -n) contacts the remote, as ls-remote does",
        covers=r"\bgit\b.*\bremote\b.*\bshow\b",
    ),
    Finding("git config *.txt", "rewrote .git/config: the glob became `notes.txt untracked.txt`, a name and a value"),
    Finding("env -vS -iS'{}' LC_ALL=C sort notes.txt", "ran {}: -vS is -v -S, and -S splits its value into a command"),
    Finding("env -vS'touch pwned.out' cat notes.txt", "the same, the value attached"),
    Finding("git log --show-signature -1", "ran gpg --verify on the fixture's signed commit, which wrote ~/.gnupg"),
    Finding("git show --show-sig HEAD", "the same option abbreviated (this git refuses it; the table need not know)"),
    Finding("git show -s --pretty=format:%GS", "ran gpg --verify: %G placeholders check the signature"),
    Finding("git log -1 --format=%GK", "ran gpg --verify"),
    Finding("git log -1 --format %GS", "ran gpg --verify"),
)
OPEN_FINDINGS = tuple(f for f in FINDINGS if f.open is not None)


def _cases() -> list[object]:
    return [
        pytest.param(f, id=f.command, marks=[pytest.mark.xfail(strict=True, reason=f.open)] if f.open else [])
        for f in FINDINGS
    ]


@pytest.mark.parametrize("finding", _cases())
def test_a_differential_finding_is_not_read_only(finding: Finding) -> None:
    verdict = classify(finding.command)
    assert not verdict.read_only, f"{finding.command} {finding.did}, yet: {verdict.reason}"
