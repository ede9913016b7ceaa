"""The built-in tools, one per module, all the same shape (see `toolgate.core.tool.Tool`)."""

from __future__ import annotations

from toolgate.core.tool import AnyTool
from toolgate.tools.apply_patch import ApplyPatchTool
from toolgate.tools.bash import BashTool
from toolgate.tools.bash_output import BashOutputTool
from toolgate.tools.edit import EditTool
from toolgate.tools.glob import GlobTool
from toolgate.tools.grep import GrepTool
from toolgate.tools.kill_shell import KillShellTool
from toolgate.tools.notebook_edit import NotebookEditTool
from toolgate.tools.read import ReadTool
from toolgate.tools.todo_write import TodoWriteTool
from toolgate.tools.tool_output import ToolOutputTool
from toolgate.tools.tool_output_grep import ToolOutputGrepTool
from toolgate.tools.web_fetch import WebFetchTool
from toolgate.tools.write import WriteTool


def builtin_tools() -> list[AnyTool]:
    return [
        ReadTool(),
        EditTool(),
        WriteTool(),
        NotebookEditTool(),
        ApplyPatchTool(),
        TodoWriteTool(),
        BashTool(),
        BashOutputTool(),
        KillShellTool(),
        GlobTool(),
        GrepTool(),
        ToolOutputTool(),
        ToolOutputGrepTool(),
        WebFetchTool(),
    ]
