"""The built-in tools, one per module, all the same shape (see `toolgate.core.tool.Tool`).

The tool modules are imported when the tools are first built, not when this package is: importing the package
must not pull in every tool's machinery, which would slow every editor window's start. (Each tool module in turn
imports its heavy libraries — pypdf, PIL, httpx, markdownify — only when a call needs them.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolgate.core.tool import AnyTool


def builtin_tools() -> list[AnyTool]:
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


def editor_tools() -> list[AnyTool]:
    """The tools a session has only when an editor is attached (they ask the editor's language features)."""
    from toolgate.tools.problems import ProblemsTool

    return [ProblemsTool()]
