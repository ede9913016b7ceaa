"""Edit: replace an exact string in a file, tolerant of curly quotes, strict about ambiguity and staleness."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.deps import Dep
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import DescribeContext, ToolInput, ToolTraits
from toolgate.text.diff import Hunk, changed_line_range, structured_patch
from toolgate.text.encoding import TextFormat, decoded_as_written, encode, encode_raw
from toolgate.text.replace import Matches, explain_miss, find_matches, lines_of, replace_matches
from toolgate.tools._file_writer import Encoded, SingleFileWriter
from toolgate.tools._files import missing_message
from toolgate.tools._write import (
    FinalText,
    OnDisk,
    load_for_call,
    require_clean_in_editor,
    require_fresh,
    review_note,
)

MAX_LISTED_LINES = 20


class EditInput(ToolInput):
    file_path: str = Field(description="Path of the file to change: absolute, or relative to the workspace.")
    old_string: str = Field(description="The exact text to replace, as it appears in the file (no line numbers).")
    new_string: str = Field(description="The text to put in its place (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


@dataclass(frozen=True, slots=True)
class EditPlan:
    disk: OnDisk
    matches: Matches
    new_text: str


# The last edit this call planned: validate and the final check before the write plan the same edit on the same
# loaded file (`load_for_call` hands back the very object when the file is unchanged), and searching 5 MB twice,
# quote-folded at worst, and rebuilding it, doubled the cost of a big Edit. Keyed by the loaded file and the strings.
_PLANNED: Dep[dict[tuple[int, str, str, bool], EditPlan]] = Dep("edit_planned", lambda _r: {}, scope="call")


@dataclass(frozen=True, slots=True)
class EditDone:
    shown: str
    created: bool
    replaced: int
    lines: list[int]  # where each replaced occurrence started, in the original
    quotes_folded: bool
    original: str | None  # None: the file was created
    new_text: str
    unchanged_ends: dict[str, int]  # what the diff may skip (`_unchanged_ends`)
    user_modified: bool = False
    user_changes: str = ""

    @property
    def patch(self) -> list[Hunk]:
        """The change as hunks, made when asked for: the model is told the lines, and a diff of megabytes is
        not free."""
        return structured_patch(self.original or "", self.new_text, **self.unchanged_ends)


class EditTool(SingleFileWriter[EditInput, EditPlan, EditDone]):
    name = "Edit"
    traits = ToolTraits(open_world=False)
    input_model = EditInput

    def description(self, ctx: DescribeContext) -> str:
        notebook = " Notebooks (.ipynb) are changed with NotebookEdit." if "NotebookEdit" in ctx.tool_names else ""
        return (
            "Replace text in a file: old_string must match the file exactly (indentation included), and is "
            "replaced by new_string, literally.\n"
            "- Read the file first in this session; an edit to a file that changed since you read it is refused.\n"
            "- Copy old_string from Read output without the `N<TAB>` line-number prefix.\n"
            "- old_string must occur exactly once, or set replace_all to change every occurrence; add "
            "surrounding lines to make it unique.\n"
            "- Curly quotes in the file match straight quotes in old_string; the replacement is written in "
            "the file's quote style.\n"
            "- With an empty old_string, Edit creates a new file (and its directories) containing new_string."
            f"{notebook}"
        )

    def file_path(self, tool_input: EditInput) -> str:
        return tool_input.file_path

    def summary(self, tool_input: EditInput, workspace: Path) -> str:
        return display_input_path(tool_input.file_path, workspace) + (
            " (all occurrences)" if tool_input.replace_all else ""
        )

    async def validate(self, tool_input: EditInput, ctx: ToolContext) -> None:
        if tool_input.old_string == tool_input.new_string:
            raise StateError(
                "old_string and new_string are identical, so there is nothing to change. Send the text you "
                "want in new_string."
            )
        await super().validate(tool_input, ctx)

    def plan(self, tool_input: EditInput, path: Path, record: FileRecord | None, ctx: ToolContext) -> EditPlan:
        return _plan(tool_input, path, record, ctx)

    def encode(self, tool_input: EditInput, plan: EditPlan, chosen: FinalText, shown: str) -> Encoded:
        disk, final = plan.disk, chosen.text
        fmt = disk.decoded.format if disk.decoded is not None else TextFormat()
        data = encode(final, fmt, like=disk.decoded) if disk.decoded is not None else encode_raw(final, fmt)
        # LF text is written as it is (`encode` changes nothing else), so then the bytes read back as `final`.
        lf_written = fmt.newline == "\n" and not (disk.decoded is not None and disk.decoded.mixed_endings)
        return Encoded(data, final, decoded_as_written(final, fmt) if lf_written else None)

    def done(self, tool_input: EditInput, plan: EditPlan, chosen: FinalText, encoded: Encoded, shown: str) -> EditDone:
        disk = plan.disk
        data = EditDone(
            shown=shown,
            created=not disk.exists,
            replaced=len(plan.matches) or 1,
            lines=lines_of(disk.text, [start for start, _ in plan.matches.spans]),
            quotes_folded=plan.matches.quotes_folded,
            original=disk.text if disk.exists else None,
            new_text=chosen.text,
            unchanged_ends=_unchanged_ends(plan, chosen.user_modified),
            user_modified=chosen.user_modified,
            user_changes=chosen.user_changes,
        )
        if not data.lines:  # a file created, or an empty one filled: the diff says where
            span = changed_line_range(data.patch)
            data.lines.append(span[0] if span else 1)
        return data

    def to_result(self, data: EditDone, ctx: ToolContext) -> str:
        if data.created:
            text = f"Created {data.shown}."
        elif data.replaced == 1:
            text = f"Edited {data.shown} (line {data.lines[0]})."
        else:
            text = f"Edited {data.shown}: replaced all {data.replaced} occurrences ({_lines(data.lines)})."
        if data.quotes_folded:
            text += (
                " old_string matched once curly quotes were read as straight ones; the new text uses the "
                "file's curly quotes."
            )
        if data.user_modified:
            text += review_note(data.user_changes)
        return text


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:MAX_LISTED_LINES])
    more = f" and {len(numbers) - MAX_LISTED_LINES} more" if len(numbers) > MAX_LISTED_LINES else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _plan(tool_input: EditInput, path: Path, record: FileRecord | None, ctx: ToolContext) -> EditPlan:
    """Every state check, in order, then the new text. Synchronous: `_apply` runs it right before writing."""
    shown = display_path(path, ctx.workspace)
    # The file is matched in its LF form; the file's own line endings are put back when it is written.
    old, new = tool_input.old_string.replace("\r\n", "\n"), tool_input.new_string.replace("\r\n", "\n")
    if old == new:
        raise StateError("old_string and new_string are identical, so there is nothing to change.")
    disk = load_for_call(ctx, path, shown, record)
    if not disk.exists:
        if old == "":
            return EditPlan(disk, Matches([], False), tool_input.new_string)  # a new file is written as sent
        raise StateError(
            missing_message(path, ctx) + " To create a new file, call Edit with an empty old_string (or use Write)."
        )
    if old == "" and disk.stat is not None and disk.stat.st_size:
        raise StateError(
            f"{shown} already exists and is not empty, so an empty old_string (which creates a file) cannot be "
            "used. To change part of it, put the text to replace in old_string."
        )
    if path.suffix.lower() == ".ipynb":
        raise StateError(f"{shown} is a Jupyter notebook; change its cells with NotebookEdit, not Edit.")
    require_fresh(record, disk, shown)
    require_clean_in_editor(ctx, disk)
    if old == "":
        return EditPlan(disk, Matches([], False), new)  # an existing empty file gets its first content
    planned = ctx.get(_PLANNED)
    key = (id(disk), old, new, tool_input.replace_all)
    earlier = planned.get(key)
    if earlier is not None and earlier.disk is disk:
        return earlier
    text = disk.text
    matches = find_matches(text, old)
    if not matches:
        raise StateError(_not_found(text, old, shown))
    if len(matches) > 1 and not tool_input.replace_all:
        numbers = lines_of(text, [start for start, _ in matches.spans])
        raise StateError(
            f"old_string occurs {len(matches)} times in {shown} ({_lines(numbers)}), and Edit will not guess "
            "which one you mean. Add surrounding lines to old_string so it matches exactly one place, or set "
            "replace_all to true to change every occurrence."
        )
    plan = EditPlan(disk, matches, replace_matches(text, matches, old, new))
    planned[key] = plan
    return plan


def _unchanged_ends(plan: EditPlan, user_modified: bool) -> dict[str, int]:
    """What the new text surely shares with the old: everything before the first match, and after the character
    that follows the last one (a deleted line also takes its newline). A human's version may differ anywhere."""
    spans = plan.matches.spans
    if user_modified or not spans:
        return {}
    return {"same_head": spans[0][0], "same_tail": max(0, len(plan.disk.text) - spans[-1][1] - 1)}


def _not_found(text: str, old: str, shown: str) -> str:
    hints = explain_miss(text, old)
    if hints.longer_than_text and not hints.line_number_prefixes:
        return (
            f"old_string was not found in {shown}: it is longer than the whole file. Read the file and copy the "
            "exact text to replace."
        )
    parts = [f"old_string was not found in {shown}, not even with curly and straight quotes treated alike."]
    if hints.line_number_prefixes:
        parts.append("It seems to include the `N<TAB>` line-number prefixes from Read output; leave those out.")
    elif hints.whitespace_only:
        parts.append("It does match if whitespace is ignored: check indentation (tabs vs spaces) and line breaks.")
    if hints.closest:
        listed = "\n".join(f"{number}\t{line}" for number, line in hints.closest)
        parts.append(f"The most similar lines in the file are:\n{listed}\n")
    parts.append("Read the file around the place you want to change and copy old_string from it exactly.")
    return " ".join(parts).replace("\n ", "\n")
