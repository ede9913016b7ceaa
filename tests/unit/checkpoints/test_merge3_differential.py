"""Differential: wherever text.merge3 answers a 3-way merge in-process, the real `git merge-file` (as undo and the
changes bar run it, through the shadow repository's git) merges the same three files cleanly into the same bytes.

`make test` checks the same cases on every run (one fixed seed); `make fuzz` adds twenty fresh seeds. Files of
few distinct lines (so that runs share lines with their surroundings and xdiff has choices to make), CRs and
missing final newlines, empty files, and edits that are apart, adjacent, overlapping, identical, pure insertions
and pure deletions.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from tests.properties import FUZZING, examples

from toolgate.checkpoints.git import ShadowGit
from toolgate.checkpoints.store import CheckpointStore
from toolgate.text.merge3 import merge_apart

CASES = 600
LINES = [b"a\n", b"b\n", b"c\n", b"\n", b"a\r\n", b"  a\n", b"}\n"]


def _file(rng: random.Random, length: int) -> bytes:
    data = b"".join(rng.choice(LINES) for _ in range(length))
    if data and rng.random() < 0.2:
        data = data.rstrip(b"\n")  # no final newline
    return data


def _edit(rng: random.Random, base: bytes) -> bytes:
    """`base` with one to three runs of its lines replaced (each may be empty on either side), or whole."""
    if rng.random() < 0.1:
        return base
    lines = base.splitlines(keepends=True)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        start = rng.randint(0, len(lines))
        end = min(len(lines), start + rng.choice([0, 1, 1, 2, 3]))
        lines[start:end] = [rng.choice([*LINES, b"new\n", b"other\n"]) for _ in range(rng.choice([0, 1, 1, 2]))]
    if lines and rng.random() < 0.1:
        lines[-1] = lines[-1].rstrip(b"\n")
    return b"".join(lines)


def _case(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    base = _file(rng, rng.choice([0, 1, 3, 6, 12, 20]))
    ours = _edit(rng, base)
    theirs = ours if rng.random() < 0.05 else _edit(rng, base)
    return base, ours, theirs


def _git_merge(
    git: ShadowGit, scratch: Path, base: bytes, ours: bytes, theirs: bytes, *options: str
) -> tuple[int, bytes]:
    names = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (scratch / name).write_bytes(data)
        names.append(str(scratch / name))
    done = git.run(["merge-file", "-p", *options, *names], check=False)
    return done.returncode, done.stdout


@pytest.fixture
def git(tmp_path: Path) -> ShadowGit:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return CheckpointStore(tmp_path / "data", workspace).git


@settings(
    max_examples=examples(1),
    phases=tuple(Phase) if FUZZING else (Phase.explicit,),  # `make test`: the fixed seed only
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32 - 1))
@example(seed=20261204)
def test_every_in_process_merge_is_the_one_git_makes(git: ShadowGit, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    answered = 0
    for number in range(CASES):
        base, ours, theirs = _case(rng)
        merged = merge_apart(base, ours, theirs)
        if merged is None:
            continue  # git decides these
        answered += 1
        # Taking the undo (`--theirs`) decides only conflicts, which these are not: the same answer either way.
        options = ["--theirs"] if answered % 4 == 0 else []
        code, out = _git_merge(git, tmp_path, base, ours, theirs, *options)
        assert (code, out) == (0, merged), f"case {number}: base={base!r} ours={ours!r} theirs={theirs!r} {options}"
    assert answered >= CASES // 4  # the cases reach the in-process merge often enough to mean something


def test_edits_git_could_align_in_more_than_one_way_are_left_to_git(git: ShadowGit, tmp_path: Path) -> None:
    # Each of these is one where a guess from "apply both edits" could differ from git (a conflict, or a line the
    # edits share that xdiff may align differently): the function must not answer them.
    undecided = [
        (b"a\nb\nc\n", b"a\nB\nc\n", b"a\nb\nC\n"),  # adjacent runs: git calls it a conflict
        (b"a\nb\nc\n", b"a\nX\nc\n", b"a\nY\nc\n"),  # the same line, two ways
        (b"a\nb\nc\nd\ne\n", b"x\nb\nc\nd\ny\n", b"a\nb\nZ\nd\ne\n"),  # one side's run holds unchanged lines
        (b"a\nb\n", b"a\nb\nb\n", b"a\nB\n"),  # an inserted line equal to its neighbour, next to the other edit
    ]
    for base, ours, theirs in undecided:
        assert merge_apart(base, ours, theirs) is None
    code, _out = _git_merge(git, tmp_path, *undecided[0])
    assert code == 1  # and git, asked, does find the adjacent runs a conflict


def test_the_listing_case_merges_in_process_into_git_s_bytes(git: ShadowGit, tmp_path: Path) -> None:
    # The agent changed the first line, the person then added one at the end: the undo keeps the person's line.
    base = b"# agent's module\n" + b"value = 1\n" * 20
    ours, theirs = base + b"# the person's line\n", b"# module\n" + b"value = 1\n" * 20
    merged = merge_apart(base, ours, theirs)
    assert merged == b"# module\n" + b"value = 1\n" * 20 + b"# the person's line\n"
    assert _git_merge(git, tmp_path, base, ours, theirs) == (0, merged)
