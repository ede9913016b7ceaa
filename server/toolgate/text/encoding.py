"""Decode a file's bytes to text and encode text back to the very same byte conventions.

A file is described by its `TextFormat`: encoding, whether it had a BOM, its line ending and whether it
ended with a newline. Decoding records the format; encoding with that format gives back identical bytes
for every part of the text that did not change.
"""

from __future__ import annotations

import codecs
import difflib
from dataclasses import dataclass
from typing import Literal

Newline = Literal["\n", "\r\n"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True, slots=True)
class TextFormat:
    encoding: str = "utf-8"
    bom: bool = False
    newline: Newline = "\n"

    def describe(self) -> str:
        ending = "CRLF" if self.newline == "\r\n" else "LF"
        return f"{self.encoding}{' with BOM' if self.bom else ''}, {ending} line endings"


@dataclass(frozen=True, slots=True)
class Decoded:
    """`text` has the BOM removed and CRLF turned into LF; `format` says how to turn it back.

    `raw` is the decoded text with its line endings as they were, kept only when the file mixes LF and
    CRLF: then no single `format.newline` can rebuild it, and `encode(..., like=...)` lines the new text
    up against it so that every untouched line keeps its own ending.
    """

    text: str
    format: TextFormat
    raw: str | None = None

    @property
    def mixed_endings(self) -> bool:
        return self.raw is not None


class UndecodableError(ValueError):
    pass


def detect_newline(text: str) -> Newline:
    """CRLF when most line breaks are CRLF; LF otherwise (including files with no line break)."""
    if "\r" not in text:  # one memchr-speed scan settles the common case without counting
        return "\n"
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def _decode_8bit(data: bytes) -> tuple[str, str]:
    # cp1252 is what "ANSI" text from Windows editors almost always is; five of its bytes are undefined,
    # and latin-1 decodes every byte, so it is the last resort that never fails and round-trips exactly.
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def decode_raw(data: bytes) -> tuple[str, TextFormat]:
    """The file's text with its line endings untouched (BOM removed), and its format."""
    encoding = "utf-8"
    bom = False
    body = data
    for mark, name in _BOMS:
        if data.startswith(mark):
            encoding, bom, body = name, True, data[len(mark) :]
            break
    if bom:
        try:
            raw = body.decode(encoding)
        except UnicodeDecodeError as exc:
            raise UndecodableError(
                f"the file starts with a {encoding} byte-order mark but is not valid {encoding}"
            ) from exc
    else:
        try:
            raw = body.decode("utf-8")
        except UnicodeDecodeError:
            raw, encoding = _decode_8bit(body)
    return raw, TextFormat(encoding=encoding, bom=bom, newline=detect_newline(raw))


def has_mixed_endings(raw: str) -> bool:
    if "\r" not in raw:
        return False
    crlf = raw.count("\r\n")
    return 0 < crlf < raw.count("\n")


def decode(data: bytes) -> Decoded:
    raw, fmt = decode_raw(data)
    if "\r" not in raw:  # an LF-only file (most of them, and every large one we are asked to edit fast)
        return Decoded(text=raw, format=fmt)
    return Decoded(text=raw.replace("\r\n", "\n"), format=fmt, raw=raw if has_mixed_endings(raw) else None)


def decoded_as_written(text: str, fmt: TextFormat, *, carriage_returns: bool | None = None) -> Decoded | None:
    """What `decode` gives back for the bytes `encode_raw(text, fmt)` wrote, when that is certain without
    decoding them; None when only decoding them can tell. `carriage_returns`: whether `text` holds a "\\r", when
    the caller has looked already (a look is a pass over all of it); None: it is looked for here.

    A writer that knows this can remember the file it just wrote, so that its next change of the same, unchanged
    file need not read and decode megabytes again. Certain for text without a carriage return (so line-ending
    detection has nothing to weigh) that is either behind a byte-order mark, which decides the encoding, or
    UTF-8 that does not itself start with one. An 8-bit file is left to decoding: new text that happens to be
    valid UTF-8 reads back as UTF-8.
    """
    if carriage_returns if carriage_returns is not None else "\r" in text:
        return None
    if not fmt.bom and (fmt.encoding != "utf-8" or text.startswith("\ufeff")):
        return None
    return Decoded(text=text, format=TextFormat(encoding=fmt.encoding, bom=fmt.bom, newline="\n"))


def encode(text: str, fmt: TextFormat, like: Decoded | None = None) -> bytes:
    """Inverse of `decode`: LF becomes the format's newline, and the BOM is put back.

    With `like` (the decoded original of a file that mixes line endings), lines the new text shares with
    the original keep their own endings, and only new lines get `fmt.newline`.
    """
    body = text.replace("\r\n", "\n") if "\r" in text else text
    if like is not None and like.raw is not None:
        body = restore_line_endings(like.raw, body, fmt.newline)
    elif fmt.newline == "\r\n":
        body = body.replace("\n", "\r\n")
    return encode_raw(body, fmt)


def encode_raw(raw: str, fmt: TextFormat) -> bytes:
    """Text whose line endings are already final, in the format's encoding, with its BOM."""
    try:
        data = raw.encode(fmt.encoding)
    except UnicodeEncodeError as exc:
        bad = sorted({ch for ch in raw if not _encodable(ch, fmt.encoding)})
        shown = " ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in bad[:5])
        raise UnencodableError(fmt.encoding, bad, f"{fmt.encoding} cannot represent {shown}") from exc
    if fmt.bom:
        data = next(mark for mark, name in _BOMS if name == fmt.encoding) + data
    return data


class UnencodableError(ValueError):
    """The text holds characters the file's own encoding cannot store (an 8-bit file gaining an emoji)."""

    def __init__(self, encoding: str, characters: list[str], message: str) -> None:
        super().__init__(message)
        self.encoding = encoding
        self.characters = characters


def _encodable(ch: str, encoding: str) -> bool:
    try:
        ch.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _split_keep_ends(text: str) -> list[str]:
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def restore_line_endings(original_raw: str, new_text: str, newline: Newline) -> str:
    """`new_text` (LF only) with the line endings of `original_raw` wherever a line is unchanged.

    Lines are aligned by their common head and tail first (cheap, and exact for a single edit), and the
    changed middle with difflib. A rewritten line keeps the ending of the line it replaces; a line that is
    only added ends with `newline`.
    """
    old_lines = _split_keep_ends(original_raw)
    new_lines = _split_keep_ends(new_text)

    def bare(line: str) -> str:
        return line[:-2] + "\n" if line.endswith("\r\n") else line

    old_bare = [bare(line) for line in old_lines]
    head = 0
    limit = min(len(old_lines), len(new_lines))
    while head < limit and old_bare[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_bare[-1 - tail] == new_lines[-1 - tail]:
        tail += 1

    def restyled(line: str) -> str:
        return line[:-1] + newline if line.endswith("\n") and newline == "\r\n" else line

    out = old_lines[:head]
    old_mid = old_bare[head : len(old_lines) - tail]
    new_mid = new_lines[head : len(new_lines) - tail]
    if old_mid and new_mid:
        matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out.extend(old_lines[head + i1 : head + i2])
                continue
            for k, line in enumerate(new_mid[j1:j2]):
                # A rewritten line keeps the ending of the line it replaces; an added one gets `newline`.
                paired = old_lines[head + i1 + k] if i1 + k < i2 else None
                if paired is not None and paired.endswith("\r\n") and line.endswith("\n"):
                    out.append(line[:-1] + "\r\n")
                elif paired is not None and line.endswith("\n"):
                    out.append(line)
                else:
                    out.append(restyled(line))
    else:
        out.extend(restyled(line) for line in new_mid)
    if tail:
        out.extend(old_lines[len(old_lines) - tail :])
    return "".join(out)
