"""Undoing the agent's changes to 100 files (a 3-way merge each, the person's lines kept) against a whole-tree
restore of the same 100 files, in the same run on the same store; and listing the changes bar (the same merges,
then each file's hunks) against a whole-tree restore's dry run (its diff): with the person's lines apart from the
agent's (merged in-process), and on the agent's lines (conflicts: git's answers, remembered after the first)."""

from __future__ import annotations

from pathlib import Path

from bench.report import Figure, Report, median_us, time_sync
from toolgate.checkpoints.attribution import undo_agent
from toolgate.checkpoints.changes import ChangesReview, list_changes
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.store import CheckpointStore

FILES = 400
CHANGED = 100
REPEAT = 7


def run(report: Report, workdir: Path) -> None:
    root = workdir / "ws"
    paths = []
    for i in range(FILES):
        path = root / f"pkg{i // 100}" / f"mod{i % 100:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + "value = 1\n" * 20)
        paths.append(path)
    store = CheckpointStore(workdir / "data", root)
    start = store.create("bench", turn=1, kind="turn")
    agent_text = {p: p.read_text().replace("# module", "# agent's module", 1) for p in paths[:CHANGED]}
    for path, text in agent_text.items():
        path.write_text(text)
    store.create("bench", turn=1, tool_use_id="t1", agent_since=start.id)

    def agent_state_and_a_person_line() -> None:
        for path, text in agent_text.items():
            path.write_text(text + "# the person's line\n")

    def undo() -> None:
        agent_state_and_a_person_line()
        done = undo_agent(store, "bench", start.id, turn=1)
        assert len(done.changes) == CHANGED and not done.conflicts

    def whole_tree() -> None:
        agent_state_and_a_person_line()
        restore(store, "bench", start.id, turn=1)

    undo()  # warm up both
    whole_tree()
    undone: list[float] = []
    restored: list[float] = []
    for _ in range(REPEAT):  # in turns: a shared machine's load weighs on both alike
        restored += time_sync(whole_tree, 1, warmup=0)
        undone += time_sync(undo, 1, warmup=0)
    report.add(
        Figure(
            "checkpoints",
            f"undo the agent's changes to {CHANGED} files, keeping the person's lines",
            median_us(undone) / 1000,
            "ms",
            f"whole-tree restore of the {CHANGED} files",
            median_us(restored) / 1000,
            "a git merge-file and two blob reads per file",
        )
    )

    agent_state_and_a_person_line()
    listed: list[float] = []
    previewed: list[float] = []
    for _ in range(REPEAT):
        previewed += time_sync(lambda: restore(store, "bench", start.id, turn=1, dry_run=True), 1, warmup=0)
        listed += time_sync(lambda: list_changes(store, "bench", ChangesReview()), 1, warmup=0)
    assert len(list_changes(store, "bench", ChangesReview()).files) == CHANGED
    report.add(
        Figure(
            "checkpoints",
            f"list the changes bar: {CHANGED} files with the agent's hunks, the person's lines kept out",
            median_us(listed) / 1000,
            "ms",
            f"whole-tree restore's dry run (diff) of the {CHANGED} files",
            median_us(previewed) / 1000,
            "each file's merge (in-process: the edits are apart), then its hunks",
        )
    )

    for path, text in agent_text.items():  # the person rewords the agent's line: a conflict in every file
        path.write_text(text.replace("# agent's module", "# the person's module", 1))
    first = time_sync(lambda: list_changes(store, "bench", ChangesReview()), 1, warmup=0)
    again: list[float] = []
    previewed = []
    for _ in range(REPEAT):
        previewed += time_sync(lambda: restore(store, "bench", start.id, turn=1, dry_run=True), 1, warmup=0)
        again += time_sync(lambda: list_changes(store, "bench", ChangesReview()), 1, warmup=0)
    assert all(entry.conflict for entry in list_changes(store, "bench", ChangesReview()).files)
    for name, samples in (("first time", first), ("again", again)):
        report.add(
            Figure(
                "checkpoints",
                f"list the changes bar: {CHANGED} files in conflict, {name}",
                median_us(samples) / 1000,
                "ms",
                f"whole-tree restore's dry run (diff) of the {CHANGED} files",
                median_us(previewed) / 1000,
                "git merge-file per file the first time; its answers remembered after",
            )
        )
