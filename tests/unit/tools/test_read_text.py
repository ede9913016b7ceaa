"""Read for text files: numbering, ranges, caps, notices, refusals and what it records."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime
from toolgate.testing import run1
from toolgate.tools import read as read_module


async def read(rt: Runtime, **tool_input: object) -> str:
    result = await run1(rt, "Read", **tool_input)
    return result.text()


async def test_lines_are_numbered_from_one_with_a_tab(runtime: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n\tindented\ngamma\n")
    assert await read(runtime, file_path=str(workspace / "a.txt")) == "1\talpha\n2\t\tindented\n3\tgamma"


async def test_no_final_newline_and_blank_lines(runtime: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n\n\ny")
    assert await read(runtime, file_path="a.txt") == "1\tx\n2\t\n3\t\n4\ty"


async def test_offset_and_limit_are_one_based(runtime: Runtime, workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    assert await read(runtime, file_path="n.txt", offset=5, limit=3) == "5\tline 5\n6\tline 6\n7\tline 7"
    assert await read(runtime, file_path="n.txt", offset=0, limit=2) == "1\tline 1\n2\tline 2"
    assert (await read(runtime, file_path="n.txt", offset=19)).endswith("19\tline 19\n20\tline 20")
    assert await read(runtime, file_path="n.txt", limit=1) == "1\tline 1"


async def test_empty_file_and_offset_past_the_end_are_notices_not_errors(runtime: Runtime, workspace: Path) -> None:
    (workspace / "empty.txt").write_bytes(b"")
    (workspace / "three.txt").write_text("a\nb\nc\n")
    empty = await run1(runtime, "Read", file_path="empty.txt")
    assert not empty.is_error and "exists but is empty" in empty.text()
    past = await run1(runtime, "Read", file_path="three.txt", offset=9)
    assert not past.is_error and "has 3 lines" in past.text() and "between 1 and 3" in past.text()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"one\r\ntwo\r\n", "1\tone\n2\ttwo"),
        (b"\xef\xbb\xbfbom first\n", "1\tbom first"),
        ("é ü\n".encode("utf-16"), "1\té ü"),
        ("café ‘quoted’\n".encode("cp1252"), "1\tcafé ‘quoted’"),
        (b"mixed\r\nends\nhere\r\n", "1\tmixed\n2\tends\n3\there"),
        (b"keeps\rlone CR\n", "1\tkeeps\rlone CR"),
    ],
)
async def test_encodings_and_line_endings_are_shown_cleanly(
    runtime: Runtime, workspace: Path, raw: bytes, expected: str
) -> None:
    (workspace / "f.txt").write_bytes(raw)
    assert await read(runtime, file_path="f.txt") == expected


async def test_home_and_relative_paths(runtime: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "r.txt").write_text("rel\n")
    assert await read(runtime, file_path="sub/r.txt") == "1\trel"
    assert await read(runtime, file_path="./sub/../sub/r.txt", limit=1) == "1\trel"


async def test_a_directory_is_refused_with_what_to_do(runtime: Runtime, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    result = await run1(runtime, "Read", file_path="dir")
    assert result.is_error and 'kind="state"' in result.text()
    assert "is a directory" in result.text() and "Glob" in result.text()


async def test_missing_file_suggests_close_names(runtime: Runtime, workspace: Path) -> None:
    (workspace / "config.yaml").write_text("x: 1\n")
    (workspace / "README.md").write_text("x\n")
    text = await read(runtime, file_path="config.yml")
    assert "No file exists at" in text and "config.yaml" in text
    assert "README.md" in await read(runtime, file_path="readme.md")


async def test_a_rooted_path_meant_relative_to_the_workspace_is_suggested(runtime: Runtime, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("pass\n")
    runtime.session.mode = PermissionMode.BYPASS  # /src/app.py is outside the workspace
    assert str(workspace / "src" / "app.py") in await read(runtime, file_path="/src/app.py")


async def test_missing_file_without_close_names_explains_resolution(runtime: Runtime, workspace: Path) -> None:
    text = await read(runtime, file_path="nothing/like/it.txt")
    assert "resolve against the workspace" in text and "Glob" in text


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/stdin", "/dev/urandom", "/proc/self/fd/0", "/dev/fd/0"])
async def test_device_files_are_refused(runtime: Runtime, device: str) -> None:
    runtime.session.mode = PermissionMode.BYPASS
    result = await run1(runtime, "Read", file_path=device)
    assert result.is_error and 'kind="state"' in result.text() and "would block or never end" in result.text()


async def test_fifos_are_refused_without_blocking(runtime: Runtime, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await run1(runtime, "Read", file_path="pipe")
    assert result.is_error and 'kind="state"' in result.text() and "not a regular file" in result.text()


async def test_unreadable_file_is_a_clear_error(runtime: Runtime, workspace: Path) -> None:
    secret = workspace / "secret.txt"
    secret.write_text("x\n")
    secret.chmod(0)
    if os.access(secret, os.R_OK):
        pytest.skip("running with privileges that ignore file modes")
    result = await run1(runtime, "Read", file_path="secret.txt")
    assert result.is_error and 'kind="state"' in result.text() and "Permission denied" in result.text()


async def test_whole_file_byte_cap_is_an_instruction(runtime: Runtime, workspace: Path) -> None:
    big = workspace / "big.log"
    big.write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 3000)  # ~300 KB
    result = await run1(runtime, "Read", file_path="big.log")
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "over the 256 KiB limit" in result.text()
        and "offset and limit" in result.text()
    )
    ranged = await run1(runtime, "Read", file_path="big.log", offset=2, limit=2)
    assert ranged.content == "2\t" + "y" * 99 + "\n3\t" + "y" * 99


async def test_token_cap_applies_to_any_read_and_suggests_a_limit(runtime: Runtime, workspace: Path) -> None:
    (workspace / "wide.txt").write_text(("w" * 1000 + "\n") * 200)  # ~200 KB, under the byte cap
    result = await run1(runtime, "Read", file_path="wide.txt")
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "25,000-token limit" in result.text()
        and "limit=" in result.text()
    )
    fits = await run1(runtime, "Read", file_path="wide.txt", limit=50)
    assert not fits.is_error


async def test_json_counts_more_tokens_per_character(runtime: Runtime, workspace: Path) -> None:
    payload = json.dumps([{"k": "v" * 40}] * 1500)  # ~75 KB: fine as text, over the cap as JSON
    (workspace / "data.txt").write_text(payload)
    (workspace / "data.json").write_text(payload)
    assert not (await run1(runtime, "Read", file_path="data.txt")).is_error
    assert (await run1(runtime, "Read", file_path="data.json")).is_error


async def test_binary_content_is_refused(runtime: Runtime, workspace: Path) -> None:
    (workspace / "blob.dat2").write_bytes(b"ELF\x00\x01\x02" * 100)
    result = await run1(runtime, "Read", file_path="blob.dat2")
    assert result.is_error and 'kind="state"' in result.text() and "binary" in result.text()


async def test_read_file_state_records_what_was_read(runtime: Runtime, workspace: Path) -> None:
    path = workspace / "s.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc\r\n")
    await read(runtime, file_path="s.txt")
    record = runtime.session.file_state.get(path)
    assert record is not None
    assert (record.content, record.offset, record.limit, record.full) == ("a\nb\nc\n", 1, None, True)
    assert record.mtime_ns == path.stat().st_mtime_ns and record.file_size == path.stat().st_size

    await read(runtime, file_path="s.txt", offset=2, limit=1)
    partial = runtime.session.file_state.get(path)
    assert partial is not None and (partial.content, partial.offset, partial.limit, partial.full) == ("b", 2, 1, False)

    await read(runtime, file_path="s.txt", offset=1, limit=10)
    assert runtime.session.file_state.get(path).full  # type: ignore[union-attr]


async def test_a_repeated_identical_read_says_unchanged_once(runtime: Runtime, workspace: Path) -> None:
    path = workspace / "r.txt"
    path.write_text("same\n")
    assert await read(runtime, file_path="r.txt") == "1\tsame"
    assert "has not changed since you last read" in await read(runtime, file_path="r.txt")
    assert await read(runtime, file_path="r.txt") == "1\tsame", "a third identical read gets the text again"
    assert await read(runtime, file_path="r.txt", limit=1) == "1\tsame", "another range is read for real"
    path.write_text("changed\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert await read(runtime, file_path="r.txt", limit=1) == "1\tchanged"


async def test_ranged_reads_of_huge_files_are_streamed(
    runtime: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_module, "STREAM_THRESHOLD_BYTES", 1024)
    (workspace / "huge.log").write_bytes(b"".join(b"entry %d\r\n" % i for i in range(1, 5001)))
    assert await read(runtime, file_path="huge.log", offset=4999, limit=5) == "4999\tentry 4999\n5000\tentry 5000"
    record = runtime.session.file_state.get(workspace / "huge.log")
    assert record is not None and not record.full and record.content == "entry 4999\nentry 5000"


async def test_reading_outside_the_working_directories_needs_approval(runtime: Runtime, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x\n")
    result = await run1(runtime, "Read", file_path=str(outside))
    assert (
        result.is_error and 'kind="permission"' in result.text() and "outside the working directories" in result.text()
    )
    runtime.session.add_working_dir(tmp_path)
    assert (await run1(runtime, "Read", file_path=str(outside))).content == "1\tx"


async def test_a_symlink_out_of_the_workspace_is_outside(runtime: Runtime, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s\n")
    os.symlink(secret, workspace / "innocent.txt")
    result = await run1(runtime, "Read", file_path="innocent.txt")
    assert result.is_error and 'kind="permission"' in result.text()


async def test_a_small_file_is_read_without_a_worker_thread_and_a_big_one_with_one(
    runtime: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed_off: list[str] = []
    real_run_sync = read_module.anyio.to_thread.run_sync

    async def recording_run_sync(function: object, *args: object, **kwargs: object) -> object:
        handed_off.append(getattr(function, "__name__", repr(function)))
        return await real_run_sync(function, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(read_module.anyio.to_thread, "run_sync", recording_run_sync)
    (workspace / "small.txt").write_text("small\n" * 100)
    (workspace / "big.txt").write_text("b" * 99 + "\n" * 1 + "x" * 70_000 + "\n")
    assert await read(runtime, file_path="small.txt", limit=1) == "1\tsmall"
    assert handed_off == []
    assert await read(runtime, file_path="big.txt", limit=1) == "1\t" + "b" * 99
    assert handed_off == ["_read_bytes"]


def test_the_small_file_reader_leaves_a_fifo_to_the_worker_without_waiting_for_a_writer(tmp_path: Path) -> None:
    # A FIFO that took a checked file's place: opening it for reading would wait for a writer, on the event loop.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    answers: list[object] = []
    reader = threading.Thread(target=lambda: answers.append(read_module._read_small_file(fifo)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    waited = reader.is_alive()
    if waited:  # unblock it before failing, so no thread is left behind
        with open(fifo, "wb"):
            pass
        reader.join()
    assert not waited and answers == [None]
