"""OutputCapture: small output whole, large output as head + tail with everything spilled, bytes decoded safely."""

from __future__ import annotations

import io

from toolgate.shell.output import OutputCapture


class Spill(io.StringIO):
    def close(self) -> None:  # keep the text readable after the capture closes its spill
        self.closed_by_capture = True


def spill_factory() -> tuple[OutputCapture, Spill]:
    spill = Spill()
    return OutputCapture(lambda: ("out-test", spill), limit=100, head=30, tail=20), spill


def test_small_output_is_kept_whole() -> None:
    capture, spill = spill_factory()
    capture.feed(b"hello\n")
    capture.feed(b"world\n")
    result = capture.result()
    assert result.text == "hello\nworld\n"
    assert result.complete and result.stored_ref is None
    assert spill.getvalue() == ""


def test_large_output_keeps_head_and_tail_and_spills_everything() -> None:
    capture, spill = spill_factory()
    data = "".join(f"line {i:04d}\n" for i in range(100))  # 1,000 characters
    for start in range(0, len(data), 7):  # in odd-sized pieces
        capture.feed(data[start : start + 7].encode())
    result = capture.result()
    assert spill.getvalue() == data
    assert result.total_chars == len(data)
    assert result.text.startswith(data[:30])
    assert result.text.endswith(data[-20:])
    assert result.omitted_chars == len(data) - 50
    assert "950 characters omitted" in result.text and "out-test" in result.text
    assert result.stored_ref == "out-test"


def test_spill_cap_is_announced() -> None:
    spill = Spill()
    capture = OutputCapture(lambda: ("out-cap", spill), limit=10, head=4, tail=4, spill_cap=50)
    capture.feed(b"x" * 200)
    result = capture.result()
    assert len(spill.getvalue()) == 50
    assert "first 50 characters" in result.text


def test_utf8_split_across_reads_is_kept_whole() -> None:
    capture = OutputCapture()
    encoded = "héllo ✓".encode()
    for byte in encoded:
        capture.feed(bytes([byte]))
    capture.finish()
    assert capture.result().text == "héllo ✓"
    assert not capture.result().binary


def test_bytes_that_are_not_text_are_shown_as_escapes() -> None:
    capture = OutputCapture()
    capture.feed(b"a\x00b\xff\xfe")
    capture.feed(b"\xe2")  # a truncated character at the very end
    capture.finish()
    result = capture.result()
    assert result.text == "a\\x00b\\xff\\xfe\\xe2"
    assert result.binary


def test_head_and_tail_that_meet_are_not_marked_as_shortened() -> None:
    capture = OutputCapture(lambda: ("out-x", Spill()), limit=10, head=8, tail=8)
    capture.feed(b"0123456789ABCDEF")  # 16 characters: head 8 + tail 8 is everything
    result = capture.result()
    assert result.text == "0123456789ABCDEF"
    assert result.complete
