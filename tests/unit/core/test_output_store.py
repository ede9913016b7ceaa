"""The output store and the runner's hook that moves oversized results into it (the ToolOutput(Grep) tools
that read them back are tested in tests/unit/tools/test_tool_output.py)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.unit.core.tools_for_tests import Big, numbered_lines, oversized_runtime

from toolgate.core.errors import StateError
from toolgate.core.messages import ContentBlock, ImageBlock, ImageSource, TextBlock
from toolgate.core.output_store import OUTPUT_STORE, OutputStore
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1
from toolgate.tools.tool_output import ToolOutputTool

# --- the store on its own -------------------------------------------------------------------------------


def test_round_trip_is_exact(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "outputs")
    text = "crlf\r\nlone cr\r tab\t ünïcödé 🙂\nno final newline"
    entry = store.put(text, source="test")
    assert store.read_text(entry.ref) == text
    assert store.get(f"  {entry.ref} ").ref == entry.ref
    assert entry.path.parent == tmp_path / "outputs"


def test_a_whole_result_keeps_its_images_and_its_text_reads_as_lines(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "outputs", max_entries=1)
    png = ImageBlock(source=ImageSource(media_type="image/png", data="iVBORw0KGgo="))
    blocks: list[ContentBlock] = [TextBlock(text="page 1\nchart below"), png, TextBlock(text="page 2")]
    stored = store.put_result(blocks, source="cleared toolu_1")
    assert store.blocks(stored.ref) == blocks  # the structure, images included
    assert store.read_text(stored.ref) == "page 1\nchart below\n[image image/png, kept with its result]\npage 2"
    plain = store.put_result("just text", source="cleared toolu_2")
    assert store.blocks(plain.ref) == [TextBlock(text="just text")]
    assert list((tmp_path / "outputs").iterdir()) == [plain.path]  # evicting the first took its blocks too


def test_streamed_writers_reserve_their_reference(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    ref1, path1 = store.new_path()
    ref2, path2 = store.new_path()
    assert ref1 != ref2 and path1 != path2
    path1.write_bytes(b"streamed\n")
    entry = store.adopt(ref1, path1, source="Bash")
    assert entry.size_bytes == 9 and store.read_text(ref1) == "streamed\n"
    store.discard(ref2)
    with pytest.raises(StateError):
        store.get(ref2)


def test_oldest_entries_are_evicted_and_then_reported_expired(tmp_path: Path) -> None:
    store = OutputStore(tmp_path, max_entries=3)
    entries = [store.put(f"output {i}", source="test") for i in range(5)]
    assert store.refs() == [e.ref for e in entries[2:]]
    assert not entries[0].path.exists() and not entries[1].path.exists()
    with pytest.raises(StateError, match="expired"):
        store.get(entries[0].ref)
    assert store.read_text(entries[4].ref) == "output 4"


def test_eviction_by_size_keeps_the_newest(tmp_path: Path) -> None:
    store = OutputStore(tmp_path, max_bytes=25)
    first = store.put("a" * 10, source="test")
    second = store.put("b" * 10, source="test")
    third = store.put("c" * 10, source="test")
    assert store.refs() == [second.ref, third.ref]
    with pytest.raises(StateError, match="expired"):
        store.read_text(first.ref)
    huge = store.put("d" * 100, source="test")  # larger than the whole budget: still kept, alone
    assert store.refs() == [huge.ref]


def test_a_file_deleted_behind_the_store_reads_as_expired(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    entry = store.put("x", source="test")
    entry.path.unlink()
    with pytest.raises(StateError, match="expired"):
        store.get(entry.ref)


def test_unknown_reference_lists_recent_ones(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    entry = store.put("x", source="test")
    with pytest.raises(StateError, match=re.escape(entry.ref)):
        store.get("out-00000000")


def test_close_removes_the_files(tmp_path: Path) -> None:
    directory = tmp_path / "outputs"
    store = OutputStore(directory)
    store.put("x", source="test")
    _, pending = store.new_path()
    pending.write_text("half written")
    store.close()
    assert not directory.exists()


# --- the runner's hook -----------------------------------------------------------------------------------


@pytest.fixture
async def rt(tmp_path: Path) -> AsyncIterator[Runtime]:
    runtime = oversized_runtime(tmp_path)
    yield runtime
    await runtime.aclose()


async def test_small_results_pass_untouched(rt: Runtime) -> None:
    result = await run1(rt, "Big", text="x" * 1000)
    assert result.content == "x" * 1000


async def test_oversized_result_becomes_preview_and_reads_back_exactly(rt: Runtime, tmp_path: Path) -> None:
    original = "".join(f"row {i:04d} {'·' * (i % 7)}\r\n" if i % 5 == 0 else f"row {i:04d}\n" for i in range(1, 3001))
    result = await run1(rt, "Big", text=original)
    preview = result.text()
    assert not result.is_error
    ref = re.search(r"stored as (out-[0-9a-f]+)", preview)
    assert ref is not None, preview
    assert f"{len(original):,} characters" in preview and "3,000 lines" in preview
    assert "row 0001" in preview and "row 3000" in preview  # head and tail
    assert "characters not shown" in preview
    assert "ToolOutput(" in preview and "ToolOutputGrep(" in preview
    assert len(preview) < 4_000
    stored = list((tmp_path / "session" / "outputs").iterdir())
    assert [p.name for p in stored] == [f"{ref.group(1)}.txt"]

    lines: list[str] = []
    offset = 1
    while True:
        page = await run1(rt, "ToolOutput", ref=ref.group(1), offset=offset, limit=700)
        assert not page.is_error, page.text()
        numbered = numbered_lines(page.text())
        assert numbered[0][0] == offset
        lines += [text for _, text in numbered]
        offset = numbered[-1][0] + 1
        if "continue with offset" not in page.text():
            break
        assert f"continue with offset {offset}." in page.text()
    assert "\n".join(lines) + "\n" == original

    found = await run1(rt, "ToolOutputGrep", ref=ref.group(1), pattern=r"^row 2999$", context=1)
    assert found.text() == "2998-row 2998\n2999:row 2999\n3000-row 3000 ····\r"


async def test_errors_keep_their_flag_when_stored(rt: Runtime) -> None:
    from toolgate.core.messages import ToolUse

    [result] = await rt.orchestrator.run_turn([ToolUse(id="toolu_err", name="Big", input={"text": "e" * 5000})])
    assert result.is_error and "stored as out-" in result.text()


async def test_results_with_images_are_never_stored(rt: Runtime, tmp_path: Path) -> None:
    result = await run1(rt, "Big", text="y" * 5000, image=True)
    assert isinstance(result.content, list) and len(result.content) == 2
    assert not (tmp_path / "session" / "outputs").exists()


async def test_tools_without_a_cap_are_never_stored(rt: Runtime) -> None:
    result = await run1(rt, "Unlimited", text="z" * 50_000)
    assert result.content == "z" * 50_000


async def test_a_stored_session_keeps_its_outputs_across_runs(tmp_path: Path) -> None:
    """A session with a directory can be resumed, so its references must still resolve then; deleting the
    session (its directory) is what removes them."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    tools = [Big(), ToolOutputTool()]
    runtime = build_runtime(
        workspace, NonInteractiveApprover(), RuntimeOptions(tools=tools, data_dir=tmp_path / "session")
    )
    result = await run1(runtime, "Big", text="q" * 5000)
    [ref] = re.findall(r"out-[0-9a-f]{8}", result.text())[:1]
    await runtime.aclose()
    assert len(list((tmp_path / "session" / "outputs").iterdir())) == 1

    resumed = build_runtime(
        workspace, NonInteractiveApprover(), RuntimeOptions(tools=tools, data_dir=tmp_path / "session")
    )
    again = await run1(resumed, "ToolOutput", ref=ref)
    assert not again.is_error and "q" * 100 in again.text()
    await resumed.aclose()


async def test_default_store_is_temporary_and_made_only_when_needed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(tools=[Big()]))
    await run1(runtime, "Big", text="small")
    assert OUTPUT_STORE not in runtime.session.deps._session.values  # nothing needed storing yet
    result = await run1(runtime, "Big", text="q" * 5000)
    directory = runtime.session.deps.get(OUTPUT_STORE).directory
    assert directory.is_dir()
    assert "No tool that reads stored results is available" in result.text()
    await runtime.aclose()
    assert not directory.exists()


def test_a_persistent_store_keeps_outputs_for_a_resumed_session(tmp_path: Path) -> None:
    directory = tmp_path / "session" / "outputs"
    first = OutputStore(directory, persistent=True)
    kept = first.put("line one\nline two\n", source="Bash toolu_1")
    ref, half_written = first.new_path()
    half_written.write_text("partial")
    first.close()
    assert kept.path.exists() and not half_written.exists()

    resumed = OutputStore(directory, persistent=True)
    assert resumed.read_text(kept.ref) == "line one\nline two\n"
    assert ref not in resumed.refs()
    resumed.close()


def test_a_temporary_store_removes_everything_on_close(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "outputs")
    entry = store.put("x", source="t")
    store.close()
    assert not entry.path.exists() and not (tmp_path / "outputs").exists()
