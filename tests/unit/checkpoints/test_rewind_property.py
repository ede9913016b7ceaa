"""Property: whatever a session does over several turns — Write and Edit, and Bash with sed -i, rm, mv,
mkdir -p, chmod +x, ln -s, heredocs and python3 writing bytes — restoring any earlier checkpoint gives back
exactly the tree this test recorded when that checkpoint was taken (bytes, executable bits, link targets)."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.checkpoints.session import attach_checkpoints
from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover

from .trees import Snapshot, snapshot

FILES = ["a.txt", "b.txt", "d/c.txt", "d/e/run.sh"]
LINKS = ["link", "d/link"]
TEXT = st.text(alphabet="ab \n", max_size=12)


def _q(path: str) -> str:
    return shlex.quote(path)


def _in_dir(path: str) -> str:
    parent = str(Path(path).parent)
    return "" if parent == "." else f"mkdir -p {_q(parent)} && "


def _bash(kind: str, path: str, other: str, text: str, data: bytes) -> str:
    if kind == "sed":
        return f"sed -i 's/a/b/g' {_q(path)}"
    if kind == "rm":
        return f"rm -f {_q(path)}"
    if kind == "mv":
        return f"{_in_dir(other)}mv {_q(path)} {_q(other)}"
    if kind == "mkdir":
        return f"mkdir -p {_q(str(Path(path).parent / 'made'))}"
    if kind == "chmod":
        return f"chmod +x {_q(path)}"
    if kind == "ln":
        return f"{_in_dir(other)}rm -rf {_q(other)} && ln -s {_q(Path(path).name)} {_q(other)}"
    if kind == "heredoc":
        return f"{_in_dir(path)}cat > {_q(path)} <<'END'\n{text}\nEND"
    return f"{_in_dir(path)}python3 -c 'import sys; open(sys.argv[1], \"wb\").write(bytes({list(data)}))' {_q(path)}"


OPERATION = st.one_of(
    st.tuples(st.just("Write"), st.sampled_from(FILES), TEXT),
    st.tuples(st.just("Edit"), st.sampled_from(FILES), TEXT),
    st.tuples(
        st.just("Bash"),
        st.sampled_from(["sed", "rm", "mv", "mkdir", "chmod", "ln", "heredoc", "python"]),
        st.sampled_from(FILES),
        st.sampled_from(FILES + LINKS),
        TEXT,
        st.binary(max_size=8),
    ),
)
TURNS = st.lists(st.lists(OPERATION, min_size=1, max_size=4), min_size=3, max_size=4)


def _uses(operation: tuple[object, ...], root: Path, number: int) -> list[ToolUse]:
    kind = operation[0]
    if kind == "Bash":
        _, what, path, other, text, data = operation
        command = _bash(str(what), str(path), str(other), str(text), bytes(data))  # type: ignore[arg-type]
        return [ToolUse(id=f"toolu_{number}", name="Bash", input={"command": command})]
    _, path, text = operation
    target = str(root / str(path))
    read = ToolUse(id=f"toolu_{number}_read", name="Read", input={"file_path": target})
    if kind == "Write":
        (root / str(path)).parent.mkdir(parents=True, exist_ok=True)
        return [read, ToolUse(id=f"toolu_{number}", name="Write", input={"file_path": target, "content": text})]
    edit = {"file_path": target, "old_string": "a", "new_string": f"<{text}>", "replace_all": True}
    return [read, ToolUse(id=f"toolu_{number}", name="Edit", input=edit)]


def _session(turns: list[list[tuple[object, ...]]]) -> tuple[dict[str, Snapshot], dict[str, Snapshot]]:
    """Run the turns; returns what the test recorded per checkpoint and what each restore gave."""

    async def run() -> tuple[dict[str, Snapshot], dict[str, Snapshot]]:
        with tempfile.TemporaryDirectory() as temp:
            root = Path(temp) / "ws"
            root.mkdir()
            runtime = build_runtime(
                root, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS, read_settings=False)
            )
            checkpoints = attach_checkpoints(runtime.session, Path(temp) / "data")
            recorded: dict[str, Snapshot] = {}

            def note(before: Snapshot, after: Snapshot | None = None) -> None:
                # A checkpoint taken right after a call (agent_since) holds the tree the call left.
                for checkpoint in checkpoints.checkpoints():
                    taken_after = after is not None and checkpoint.agent_since is not None
                    recorded.setdefault(checkpoint.id, after if taken_after and after is not None else before)

            number = 0
            for turn in turns:
                before = snapshot(root)
                assert await checkpoints.begin_turn() is None
                note(before)
                for operation in turn:
                    for use in _uses(operation, root, number):
                        before = snapshot(root)
                        [result] = await runtime.orchestrator.run_turn([use])
                        assert "cannot be rewound" not in result.text()
                        note(before, snapshot(root))
                    number += 1
            restored: dict[str, Snapshot] = {}
            for checkpoint_id in sorted(recorded, reverse=True):
                checkpoints.restore(checkpoint_id, whole_tree=True)
                restored[checkpoint_id] = snapshot(root)
            await runtime.aclose()
            return recorded, restored

    return anyio.run(run)


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TURNS)
def test_every_checkpoint_restores_to_the_recorded_tree(turns: list[list[tuple[object, ...]]]) -> None:
    recorded, restored = _session(turns)
    mismatches = [cid for cid in recorded if restored[cid] != recorded[cid]]
    assert mismatches == [], {cid: (recorded[cid], restored[cid]) for cid in mismatches}
