"""The memory of Bash analyses (`permissions.bash.Analyses`): what it keeps, and that nothing kept goes stale."""

from __future__ import annotations

from pathlib import Path

from tests.unit.permissions.helpers import bash, make_runtime

from toolgate.bash.classify import classify
from toolgate.permissions.bash import Analyses, ShellClassification


class Counting:
    """The real classifier, counting the commands it was asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, command: str) -> ShellClassification:
        self.asked.append(command)
        return classify(command)


def test_the_same_command_in_the_same_place_is_analysed_once() -> None:
    counting = Counting()
    analyses = Analyses(counting)
    first = analyses.facts("git status", Path("/ws"), Path("/home/u"))
    assert analyses.facts("git status", Path("/ws"), Path("/home/u")) is first
    assert counting.asked == ["git status"]


def test_kept_facts_belong_to_their_directory_and_home() -> None:
    analyses = Analyses(classify)
    assert analyses.facts("cat a.txt", Path("/ws"), Path("/h")).parts[0].reads == [Path("/ws/a.txt")]
    assert analyses.facts("cat a.txt", Path("/ws/sub"), Path("/h")).parts[0].reads == [Path("/ws/sub/a.txt")]
    assert analyses.facts("cat ~/a.txt", Path("/ws"), Path("/h")).parts[0].reads == [Path("/h/a.txt")]
    assert analyses.facts("cat ~/a.txt", Path("/ws"), Path("/other")).parts[0].reads == [Path("/other/a.txt")]


def test_the_memory_is_bounded_and_forgets_the_least_recently_used() -> None:
    counting = Counting()
    analyses = Analyses(counting, size=2)
    for command in ("ls", "pwd", "ls", "date"):  # `ls` was used again, so `pwd` is the one forgotten
        analyses.facts(command, Path("/ws"), Path("/h"))
    analyses.facts("ls", Path("/ws"), Path("/h"))
    analyses.facts("pwd", Path("/ws"), Path("/h"))
    assert counting.asked == ["ls", "pwd", "date", "pwd"]


def test_an_analysis_that_asked_the_file_system_is_not_kept(tmp_path: Path) -> None:
    counting = Counting()
    analyses = Analyses(counting)
    first = analyses.facts("rg foo data", tmp_path, tmp_path / "home")
    assert first.probed_files and first.parts[0].tree_reads == []
    (tmp_path / "data").mkdir()
    again = analyses.facts("rg foo data", tmp_path, tmp_path / "home")
    assert again.parts[0].tree_reads == [tmp_path / "data"]
    assert counting.asked == ["rg foo data", "rg foo data"]


async def test_a_directory_made_between_two_calls_brings_its_deny_rules_into_play(workspace: Path) -> None:
    rt = make_runtime(workspace, deny=["Read(./data/private/**)"])
    try:
        assert (await bash(rt, "rg foo data")).decision == "allow"  # `data` is not there: nothing below to read
        (workspace / "data" / "private").mkdir(parents=True)
        second = await bash(rt, "rg foo data")
        assert second.decision == "ask" and "reads everything below data" in second.reason
    finally:
        await rt.aclose()


async def test_a_command_asked_about_again_after_a_cd_is_judged_where_it_now_runs(workspace: Path) -> None:
    (workspace / "b").mkdir()
    rt = make_runtime(workspace, deny=["Read(./b/a.txt)"])
    try:
        assert (await bash(rt, "cat a.txt")).decision == "allow"
        rt.session.cwd = workspace / "b"
        assert (await bash(rt, "cat a.txt")).decision == "deny"
    finally:
        await rt.aclose()
