"""The `*** Begin Patch` format (Codex's apply_patch): parse it, find each hunk's place, compute new text.

Grammar (see the conformance data for the full text):

    Patch    := "*** Begin Patch" { FileOp } "*** End Patch"
    FileOp   := "*** Add File: " path { "+" line }
              | "*** Delete File: " path
              | "*** Update File: " path [ "*** Move to: " path ] { Hunk }
    Hunk     := "@@" [ " " context ] { (" " | "-" | "+") line } [ "*** End of File" ]

Context is found with a tolerance ladder: exact, then ignoring trailing whitespace, then surrounding
whitespace, then with typographic dashes, quotes and spaces folded to ASCII. Unlike Codex, lines the patch
only uses as context keep their bytes (a fuzzy match never rewrites them), and every line keeps its own
line ending; added lines take the ending of the line they replace, or the file's usual one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"
_HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')

OpKind = Literal[" ", "-", "+"]


class PatchSyntaxError(ValueError):
    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.message = message
        self.line = line


class HunkNotFound(ValueError):
    """A hunk whose context or removed lines are not in the file. `hunk` is 1-based within the file's section."""

    def __init__(self, message: str, hunk: int) -> None:
        super().__init__(message)
        self.message = message
        self.hunk = hunk


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    contents: str
    line: int


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class Chunk:
    change_context: str | None
    ops: tuple[tuple[OpKind, str], ...]
    is_end_of_file: bool
    line: int

    @property
    def old_lines(self) -> list[str]:
        return [text for kind, text in self.ops if kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for kind, text in self.ops if kind != "-"]


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    move_path: str | None
    chunks: tuple[Chunk, ...]
    line: int


FileOp = AddFile | DeleteFile | UpdateFile


# --- parsing -----------------------------------------------------------------------------------------------


def parse_patch(text: str, lenient: bool = True) -> list[FileOp]:
    """The file operations in a patch. `lenient` also accepts a `<<EOF ... EOF` heredoc around it."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.strip().split("\n")]
    first_line = 1
    if lenient and len(lines) >= 4 and lines[0].strip() in _HEREDOC_STARTS and lines[-1].strip().endswith("EOF"):
        lines, first_line = lines[1:-1], 2
    if not lines or lines[0].strip() != BEGIN:
        raise PatchSyntaxError(f"the first line of the patch must be '{BEGIN}'", first_line)
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchSyntaxError(f"the last line of the patch must be '{END}'", first_line + len(lines) - 1)
    body = lines[1:-1]
    ops: list[FileOp] = []
    index = 0
    while index < len(body):
        if not body[index].strip():
            index += 1
            continue
        op, used = _parse_file_op(body, index, first_line + 1)
        ops.append(op)
        index += used
    return ops


def _parse_file_op(body: list[str], index: int, base: int) -> tuple[FileOp, int]:
    number = base + index
    header = body[index].strip()
    if header.startswith(ADD):
        contents: list[str] = []
        used = 1
        while index + used < len(body) and body[index + used].startswith("+"):
            contents.append(body[index + used][1:] + "\n")
            used += 1
        return AddFile(header[len(ADD) :], "".join(contents), number), used
    if header.startswith(DELETE):
        return DeleteFile(header[len(DELETE) :], number), 1
    if header.startswith(UPDATE):
        path = header[len(UPDATE) :]
        used = 1
        move_path = None
        if index + used < len(body) and body[index + used].startswith(MOVE):
            move_path = body[index + used][len(MOVE) :]
            used += 1
        chunks: list[Chunk] = []
        while index + used < len(body):
            line = body[index + used]
            if not line.strip():
                used += 1
                continue
            if line.startswith("***"):
                break
            chunk, chunk_used = _parse_chunk(body[index + used :], number + used, allow_missing_context=not chunks)
            chunks.append(chunk)
            used += chunk_used
        if not chunks:
            raise PatchSyntaxError(f"the Update File section for '{path}' has no hunks", number)
        return UpdateFile(path, move_path, tuple(chunks), number), used
    raise PatchSyntaxError(
        f"'{header}' is not a valid file header; use '{ADD}<path>', '{DELETE}<path>' or '{UPDATE}<path>'",
        number,
    )


def _parse_chunk(lines: list[str], number: int, allow_missing_context: bool) -> tuple[Chunk, int]:
    head = lines[0]
    if head.strip() == "@@":
        context, start = None, 1
    elif head.startswith("@@ "):
        context, start = head[3:], 1
    elif allow_missing_context:
        context, start = None, 0
    else:
        raise PatchSyntaxError(f"a hunk must start with an '@@' line, but this one starts with '{head}'", number)
    if start >= len(lines):
        raise PatchSyntaxError("the hunk has no lines", number + start)
    ops: list[tuple[OpKind, str]] = []
    end_of_file = False
    used = 0
    for line in lines[start:]:
        if line == END_OF_FILE:
            if not ops:
                raise PatchSyntaxError("the hunk has no lines before '*** End of File'", number + start)
            end_of_file = True
            used += 1
            break
        if line == "":
            ops.append((" ", ""))
        elif line[0] in " -+":
            ops.append((line[0], line[1:]))  # type: ignore[arg-type]
        elif not ops:
            raise PatchSyntaxError(
                f"unexpected line '{line}' in a hunk: every hunk line starts with ' ' (context), '-' (removed) "
                "or '+' (added)",
                number + start,
            )
        else:
            break
        used += 1
    return Chunk(context, tuple(ops), end_of_file, number), start + used


# --- finding the place of a hunk -----------------------------------------------------------------------------

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    }
)


def _exact(s: str) -> str:
    return s


def _rstrip(s: str) -> str:
    return s.rstrip()


def _strip(s: str) -> str:
    return s.strip()


def _fold(s: str) -> str:
    return s.strip().translate(_PUNCTUATION)


def seek_sequence(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    """Index where `pattern` occurs in `lines` at or after `start` (at the very end when `eof`), or None."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    for norm in (_exact, _rstrip, _strip, _fold):
        wanted = [norm(p) for p in pattern]
        for i in range(first, len(lines) - len(pattern) + 1):
            if all(norm(lines[i + k]) == wanted[k] for k in range(len(pattern))):
                return i
    return None


# --- applying ----------------------------------------------------------------------------------------------

Line = tuple[str, str]  # (text, ending): ending is "\n", "\r\n" or "" for a last line without one


def split_with_endings(raw: str) -> list[Line]:
    pieces = raw.split("\n")
    lines: list[Line] = []
    for piece in pieces[:-1]:
        lines.append((piece[:-1], "\r\n") if piece.endswith("\r") else (piece, "\n"))
    if pieces[-1]:
        lines.append((pieces[-1], ""))
    return lines


def _usual_ending(lines: list[Line]) -> str:
    crlf = sum(1 for _, ending in lines if ending == "\r\n")
    lf = sum(1 for _, ending in lines if ending == "\n")
    return "\r\n" if crlf > lf else "\n"


def _without_trailing_blank(chunk: Chunk) -> tuple[tuple[OpKind, str], ...] | None:
    """Codex's retry for a pattern ending in an empty line: drop it (and an empty last added line)."""
    ops = list(chunk.ops)
    old_last = max((i for i, (kind, _) in enumerate(ops) if kind != "+"), default=None)
    if old_last is None or ops[old_last][1] != "":
        return None
    new_last = max((i for i, (kind, _) in enumerate(ops) if kind != "-"), default=None)
    drop = {old_last}
    if new_last is not None and ops[new_last][1] == "":
        drop.add(new_last)
    return tuple(op for i, op in enumerate(ops) if i not in drop)


def apply_chunks(raw: str, chunks: tuple[Chunk, ...] | list[Chunk]) -> str:
    """The new text of a file after its hunks. Raises HunkNotFound naming the first hunk that does not fit."""
    lines = split_with_endings(raw)
    texts = [text for text, _ in lines]
    usual = _usual_ending(lines)
    replacements: list[tuple[int, int, tuple[tuple[OpKind, str], ...]]] = []
    position = 0
    for number, chunk in enumerate(chunks, start=1):
        if chunk.change_context is not None:
            found = seek_sequence(texts, [chunk.change_context], position, False)
            if found is None:
                raise HunkNotFound(f"the @@ context line '{chunk.change_context}' was not found", number)
            position = found + 1
        ops = chunk.ops
        old = [text for kind, text in ops if kind != "+"]
        if not old:
            replacements.append((len(lines), 0, ops))  # a pure addition goes at the end (as in Codex)
            continue
        start = seek_sequence(texts, old, position, chunk.is_end_of_file)
        if start is None:
            trimmed = _without_trailing_blank(chunk)
            if trimmed is not None:
                ops = trimmed
                old = [text for kind, text in ops if kind != "+"]
                start = seek_sequence(texts, old, position, chunk.is_end_of_file)
        if start is None:
            where = " at the end of the file" if chunk.is_end_of_file else ""
            listed = "\n".join(chunk.old_lines)
            raise HunkNotFound(f"these lines were not found{where}:\n{listed}", number)
        replacements.append((start, len(old), ops))
        position = start + len(old)
    replacements.sort(key=lambda r: r[0])
    result = list(lines)
    for start, length, ops in reversed(replacements):
        result[start : start + length] = _replace(lines[start : start + length], ops, usual)
    # Like Codex, a patched file always ends with a newline.
    return "".join(text + (ending or usual) for text, ending in result)


def _replace(old: list[Line], ops: tuple[tuple[OpKind, str], ...], usual: str) -> list[Line]:
    out: list[Line] = []
    index = 0
    removed_endings: list[str] = []
    for kind, text in ops:
        if kind == " ":
            out.append(old[index])  # context keeps the file's own bytes, even when matched loosely
            index += 1
            removed_endings.clear()
        elif kind == "-":
            removed_endings.append(old[index][1])
            index += 1
        else:
            out.append((text, removed_endings.pop(0) if removed_endings else usual))
    return out
