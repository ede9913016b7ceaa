"""The composer's `@problems` mention, answered the way the Problems tool answers: the mention names only its scope
(the workspace, or a path), and the sidecar asks the editor through the session's problems source (the same
`toolgate/editor/problems` request), under the Problems tool's permission check, with its filter, order, cap and
line format (`tools.problems.find_problems` / `problems_text`).

The person chose the mention, so nothing is asked; a rule that denies the Problems call (or reading its path)
still keeps the list out. A session without an editor says that the problems need one.
"""

from __future__ import annotations

from toolgate.core.editor_problems import EDITOR_PROBLEMS
from toolgate.core.errors import ToolError
from toolgate.runtime import Runtime
from toolgate.tools.problems import find_problems, problems_text

_HEAD = "The person attached the editor's problems"
# The id the call context carries: no tool_use has it (progress and logs name it).
_CONTEXT_ID = "attached-problems"


async def attached_problems_text(runtime: Runtime, path: str | None) -> str:
    """The block the model reads for a problems mention of `path` (None: the workspace)."""
    if runtime.session.deps.get(EDITOR_PROBLEMS) is None:
        return (
            f"{_HEAD}, but this session has no editor to ask: the problems come from the editor's language servers, "
            "so they need toolgate running in the editor. Run the project's checks (its build, tests or linters) "
            "instead."
        )
    tool_input = {"path": path} if path else {}
    check = await runtime.check("Problems", tool_input)
    if check.decision == "deny":
        return f"{_HEAD}, but they are not shown: {check.reason}."
    ctx = runtime.runner.new_context(_CONTEXT_ID)
    try:
        found = await find_problems(path, ctx)
    except ToolError as exc:
        return f"{_HEAD}, but they could not be listed. {exc.message}"
    finally:
        await ctx.deps.aclose()
    return f"{_HEAD}:\n{problems_text(found)}"
