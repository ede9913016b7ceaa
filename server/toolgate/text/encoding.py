"""Decode a file's bytes to text and encode text back to the very same byte conventions.

A file is described by its `TextFormat`: encoding, whether it had a BOM, its line ending and whether it
ended with a newline. Decoding records the format; encoding with that format gives back identical bytes
for every part of the text that did not change.
"""

from __future__ import annotations

import codecs
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
    """`text` has the BOM removed and CRLF turned into LF; `format` says how to turn it back."""

    text: str
    format: TextFormat


class UndecodableError(ValueError):
    pass


def detect_newline(text: str) -> Newline:
    """CRLF when most line breaks are CRLF; LF otherwise (including files with no line break)."""
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


def decode(data: bytes) -> Decoded:
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
    newline = detect_newline(raw)
    text = raw.replace("\r\n", "\n")
    return Decoded(text=text, format=TextFormat(encoding=encoding, bom=bom, newline=newline))


def encode(text: str, fmt: TextFormat) -> bytes:
    """Inverse of `decode`: LF becomes the format's newline, and the BOM is put back."""
    body = text.replace("\r\n", "\n")
    if fmt.newline == "\r\n":
        body = body.replace("\n", "\r\n")
    data = body.encode(fmt.encoding)
    if fmt.bom:
        data = next(mark for mark, name in _BOMS if name == fmt.encoding) + data
    return data
