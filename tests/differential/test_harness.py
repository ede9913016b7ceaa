"""The harness itself: it must see a write and an exec when there is one, and nothing when there is none.

The runner cases run real bash under real bwrap and strace in a fixture copy (`make apt-setup` installs both).
"""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path

import pytest
from tests.differential import runner, trace
from tests.differential.generate import option_command, spellings
from tests.differential.models import option_models, unique_prefixes
from tests.differential.mutate import MUTATIONS, corpus_commands

from toolgate.bash.programs import EVAL_LIKE, PROGRAMS, WRAPPERS

# --- trace: strace's log as it is printed -------------------------------------------------------------------

LOG = """\
10    execve("/usr/bin/bash", ["bash", "-c", "cd src && touch x"], 0x7ffd /* 9 vars */) = 0
10    openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache>
10    chdir("src")                      = 0
10    clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
11    execve("/usr/bin/ls", ["ls"], 0x5 /* 9 vars */) = -1 ENOENT (No such file or directory)
11    execve("/usr/bin/touch", ["touch", "x"], 0x5 /* 9 vars */) = 0
10    <... clone resumed>, child_tidptr=0x7f) = 11
11    openat(AT_FDCWD, "x", O_WRONLY|O_CREAT|O_NOCTTY|O_NONBLOCK, 0666) = 3</tmp/scratch/repo/src/x>
11    utimensat(3</tmp/scratch/repo/src/x>, NULL, NULL, 0) = 0
11    renameat2(AT_FDCWD, "a \\"b\\"", 4</tmp/private>, "c", RENAME_NOREPLACE) = -1 EROFS (Read-only file system)
11    mkdir("/etc/x", 0777)             = -1 EROFS (Read-only file system)
"""


def test_trace_finds_every_write_resolved_against_the_processs_directory() -> None:
    seen = trace.parse(LOG, "/tmp/scratch/repo")
    assert [(w.call, w.path) for w in seen.writes] == [
        ("openat", "/tmp/scratch/repo/src/x"),
        ("utimensat", "/tmp/scratch/repo/src/x"),
        ("renameat2", '/tmp/scratch/repo/src/a "b"'),
        ("renameat2", "/tmp/private/c"),
        ("mkdir", "/etc/x"),
    ]
    assert seen.writes[-1].describe() == "mkdir /etc/x (failed: -1 EROFS (Read-only file system))"


def test_trace_keeps_every_exec_tried_with_its_result() -> None:
    seen = trace.parse(LOG, "/tmp/scratch/repo")
    assert [(e.path, e.argv, e.result[:2]) for e in seen.execs] == [
        ("/usr/bin/bash", ("bash", "-c", "cd src && touch x"), "0"),
        ("/usr/bin/ls", ("ls",), "-1"),
        ("/usr/bin/touch", ("touch", "x"), "0"),
    ]


def test_split_arguments_keeps_strings_arrays_and_structs_whole() -> None:
    text = '"a, b", ["x", "y,z"], {flags=O_RDONLY, mode=0}, 3'
    assert trace.split_arguments(text) == ['"a, b"', '["x", "y,z"]', "{flags=O_RDONLY, mode=0}", "3"]


# --- generation ----------------------------------------------------------------------------------------------


def test_every_program_with_a_table_has_a_model() -> None:
    models = option_models()
    assert set(models) == {name for name in PROGRAMS if name not in EVAL_LIKE} | set(WRAPPERS)
    assert "--output" in models["time"].forbidden
    assert "--output" in models["sort"].forbidden
    assert "--pre" in models["rg"].forbidden


def test_a_long_option_is_spelled_whole_abbreviated_and_with_its_value_both_ways() -> None:
    assert unique_prefixes("--output", ["--output", "--other", "--verbose"]) == ["--ou", "--out", "--outp", "--outpu"]
    model = option_models()["sort"]
    spelled = spellings("--output", model, random.Random(1), takes_value=True)
    assert any(s.startswith("--output=") for s in spelled)
    shortest = unique_prefixes("--output", model.long_names())[0]
    assert any(s.startswith(f"{shortest} ") for s in spelled)


def test_a_short_option_is_spelled_alone_clustered_and_attached() -> None:
    model = option_models()["sort"]
    spelled = spellings("-o", model, random.Random(3), takes_value=True)
    assert any(len(s.split()[0]) > 2 and s.split()[0].endswith("o") for s in spelled)  # -ro FILE
    assert any(s.startswith("-o") and not s.startswith("-o ") for s in spelled)  # -oFILE


def test_generated_commands_name_their_program() -> None:
    rng = random.Random(5)
    for name, model in option_models().items():
        command = option_command(model, rng)
        assert command.split()[0] == name.split()[0]


def test_each_mutation_changes_some_corpus_command() -> None:
    corpus = corpus_commands()
    rng = random.Random(9)
    for mutation in MUTATIONS:
        changed = [m for c in corpus if (m := mutation(c, rng)) is not None and m != c]
        assert changed, mutation.__name__


def test_only_distinct_commands_the_classifier_calls_read_only_are_run() -> None:
    stream = iter(["touch x", "ls", "git log -1", "ls", "rm -rf src", "cat notes.txt", "wc -l notes.txt"])
    assert runner.read_only_commands(stream, 3) == (["ls", "git log -1", "cat notes.txt"], 6)


# --- the runner, for real ------------------------------------------------------------------------------------


def _outcomes(*commands: str) -> dict[str, runner.Outcome]:
    return {o.command: o for o in runner.run_all(commands)}


def test_the_runner_sees_writes_and_foreign_execs_and_nothing_in_a_plain_read() -> None:
    outcomes = _outcomes(
        "touch planted.out",
        "touch ~/planted",
        "touch /tmp/fine /var/tmp/fine",
        "touch /etc/planted",
        "find . -maxdepth 0 -exec true ';'",
        "cat notes.txt; ls -la src; git log --oneline; git status",
        "echo notes.txt | xargs wc -l",
        "git log --show-signature -1",
        "env no-such-program-here",
    )
    assert [w.path for w in outcomes["touch planted.out"].writes][:1] == ["/tmp/scratch/repo/planted.out"]
    assert [w.path for w in outcomes["touch ~/planted"].writes][:1] == ["/tmp/scratch/home/planted"]
    assert not outcomes["touch /tmp/fine /var/tmp/fine"].is_finding  # private, as in the product's sandbox
    assert [w.path for w in outcomes["touch /etc/planted"].writes][:1] == ["/etc/planted"]
    assert [e.path for e in outcomes["find . -maxdepth 0 -exec true ';'"].execs] == ["/usr/bin/true"]
    plain = outcomes["cat notes.txt; ls -la src; git log --oneline; git status"]
    assert not plain.is_finding, plain.describe()
    assert plain.exit_code == 0
    assert not outcomes["echo notes.txt | xargs wc -l"].is_finding
    # The fixture's signed commit makes git run gpg; an exec that fails is still reported, once per program.
    assert [e.path for e in outcomes["git log --show-signature -1"].execs] == ["/usr/bin/gpg"]
    assert not outcomes["env no-such-program-here"].is_finding


def test_the_sandbox_has_no_network_and_the_host_is_read_only() -> None:
    outcomes = _outcomes("git ls-remote https://example.com/x.git", "mkdir /usr/planted")
    assert outcomes["git ls-remote https://example.com/x.git"].exit_code != 0
    assert outcomes["mkdir /usr/planted"].writes[0].result.startswith("-1 E")


def _running(argv: list[str]) -> bool:
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (entry / "cmdline").read_bytes().split(b"\0")[:-1] == [a.encode() for a in argv]:
                return True
    return False


def test_a_command_that_does_not_end_is_killed_at_the_timeout_with_all_it_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner, "TIMEOUT_S", 1.0)
    started = time.monotonic()
    command = "sleep 61.27 & sleep 62.27"  # durations no other process uses, to find them by
    outcome = _outcomes(command)[command]
    assert outcome.timed_out
    assert time.monotonic() - started < 30
    deadline = time.monotonic() + 10  # the kernel ends a pid namespace's processes when its first one dies
    while (_running(["sleep", "61.27"]) or _running(["sleep", "62.27"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(["sleep", "61.27"])
    assert not _running(["sleep", "62.27"])
