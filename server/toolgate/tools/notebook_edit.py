"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook, keeping the file's JSON layout."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import DescribeContext, ToolInput, ToolTraits
from toolgate.text import notebook
from toolgate.text.encoding import encode
from toolgate.tools._file_writer import Encoded, SingleFileWriter
from toolgate.tools._files import missing_message
from toolgate.tools._write import (
    FinalText,
    OnDisk,
    load,
    require_clean_in_editor,
    require_fresh,
    review_note,
)


class NotebookEditInput(ToolInput):
    notebook_path: str = Field(description="Path of the .ipynb file: absolute, or relative to the workspace.")
    cell_id: str | None = Field(
        default=None,
        description="The cell to change, as Read shows it (its id, or cell-N counting from 0). For insert: the "
        "new cell goes after this one (omit to insert at the top).",
    )
    new_source: str = Field(default="", description="The cell's new source (ignored for delete).")
    cell_type: Literal["code", "markdown", "raw"] | None = Field(
        default=None, description="The cell's type: required for insert; for replace, changes the type."
    )
    edit_mode: Literal["replace", "insert", "delete"] = Field(default="replace", description="What to do.")


@dataclass(frozen=True, slots=True)
class NotebookPlan:
    disk: OnDisk
    new_text: str
    cell: str  # the id of the cell replaced, inserted or deleted
    cell_type: str
    cells_after: int


@dataclass(frozen=True, slots=True)
class NotebookDone:
    shown: str
    mode: str
    cell: str
    cell_type: str
    cells_after: int
    original: str
    user_modified: bool = False
    user_changes: str = ""


class NotebookEditTool(SingleFileWriter[NotebookEditInput, NotebookPlan, NotebookDone]):
    name = "NotebookEdit"
    traits = ToolTraits(open_world=False)
    input_model = NotebookEditInput

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Change one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell after it, or "
            "delete it.\n"
            "- Read the notebook first in this session; cells are named by the ids Read shows.\n"
            "- Replacing a code cell clears its outputs and execution count (they no longer match the code).\n"
            "- The notebook's JSON layout is kept, so only the changed cell differs."
        )

    def file_path(self, tool_input: NotebookEditInput) -> str:
        return tool_input.notebook_path

    def summary(self, tool_input: NotebookEditInput, workspace: Path) -> str:
        where = f" {tool_input.cell_id}" if tool_input.cell_id else ""
        return f"{display_input_path(tool_input.notebook_path, workspace)}: {tool_input.edit_mode}{where}"

    def plan(
        self, tool_input: NotebookEditInput, path: Path, record: FileRecord | None, ctx: ToolContext
    ) -> NotebookPlan:
        return _plan(tool_input, path, record, ctx)

    def encode(self, tool_input: NotebookEditInput, plan: NotebookPlan, chosen: FinalText, shown: str) -> Encoded:
        if chosen.user_modified:
            try:
                json.loads(chosen.text)
            except json.JSONDecodeError:
                raise StateError(
                    f"The reviewed version of {shown} is not valid JSON, so it was not written (it would break the "
                    "notebook). Ask the user to fix it or make the change again."
                ) from None
        assert plan.disk.decoded is not None
        return Encoded(encode(chosen.text, plan.disk.decoded.format, like=plan.disk.decoded), chosen.text)

    def done(
        self, tool_input: NotebookEditInput, plan: NotebookPlan, chosen: FinalText, encoded: Encoded, shown: str
    ) -> NotebookDone:
        return NotebookDone(
            shown=shown,
            mode=tool_input.edit_mode,
            cell=plan.cell,
            cell_type=plan.cell_type,
            cells_after=plan.cells_after,
            original=plan.disk.text,
            user_modified=chosen.user_modified,
            user_changes=chosen.user_changes,
        )

    def to_result(self, data: NotebookDone, ctx: ToolContext) -> str:
        if data.mode == "delete":
            text = f"Deleted cell {data.cell} from {data.shown}; it now has {data.cells_after} cells."
        elif data.mode == "insert":
            text = f"Inserted a new {data.cell_type} cell {data.cell} into {data.shown}."
        else:
            cleared = " Its outputs were cleared." if data.cell_type == "code" else ""
            text = f"Replaced the source of {data.cell_type} cell {data.cell} in {data.shown}.{cleared}"
        if data.user_modified:
            text += review_note(data.user_changes)
        return text


def _plan(tool_input: NotebookEditInput, path: Path, record: FileRecord | None, ctx: ToolContext) -> NotebookPlan:
    """Every check, in order, then the notebook's new text. `_apply` runs it again right before writing."""
    shown = display_path(path, ctx.workspace)
    mode = tool_input.edit_mode
    if path.suffix.lower() != ".ipynb":
        raise StateError(f"{shown} is not a Jupyter notebook (.ipynb); change other files with Edit.")
    if mode == "insert" and tool_input.cell_type is None:
        raise StateError("Inserting a cell needs cell_type (code, markdown or raw). Send it along with new_source.")
    if mode != "insert" and not tool_input.cell_id:
        raise StateError(f"To {mode} a cell, name it with cell_id (the id Read shows, or cell-N counting from 0).")
    disk = load(path, shown, ctx)
    if not disk.exists:
        raise StateError(missing_message(path, ctx, "notebook"))
    require_fresh(record, disk, shown)
    require_clean_in_editor(ctx, disk)
    try:
        nb, layout = notebook.parse(disk.text)
        cells: list[dict[str, Any]] = nb["cells"]
        index = notebook.find_cell(nb, tool_input.cell_id) if tool_input.cell_id else -1
    except notebook.NotebookError as exc:
        raise StateError(f"{shown}: {exc}. Read the notebook again to see its cells.") from None
    if mode == "delete":
        removed = cells.pop(index)
        cell, kind = notebook.cell_id(removed, index), str(removed.get("cell_type", "code"))
    elif mode == "insert":
        assert tool_input.cell_type is not None
        new = notebook.new_cell(nb, tool_input.cell_type, tool_input.new_source)
        cells.insert(index + 1, new)
        cell, kind = notebook.cell_id(new, index + 1), tool_input.cell_type
    else:
        notebook.replace_cell(cells[index], tool_input.new_source, tool_input.cell_type)
        cell, kind = notebook.cell_id(cells[index], index), str(cells[index].get("cell_type", "code"))
    return NotebookPlan(disk, notebook.dump(nb, layout), cell, kind, len(cells))
