"""The facts about one call that the ladder decides on: which family of tool, what it reads and writes.

Tools are identified by name where the name carries meaning (Bash; Read, Glob, Grep; Edit, Write,
NotebookEdit, ApplyPatch; WebFetch), and otherwise by what they say about themselves: read-only with paths is
a reader, anything else with paths is a writer. Whatever cannot be established fails closed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.tool import AnyTool
from toolgate.permissions.bash import Analyses, BashFacts
from toolgate.permissions.network import UrlRefused, parse_target
from toolgate.permissions.rules import BASH, EDIT_FAMILY, WEB_FETCH

Family = Literal["bash", "read", "write", "fetch", "other"]


@dataclass(slots=True)
class CallFacts:
    tool_name: str
    names: tuple[str, ...]  # the name and aliases, for tool-wide rules
    family: Family
    read_only: bool
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    bash: BashFacts | None = None
    host: str | None = None
    problem: str | None = None  # why the facts could not be established (the call then always asks)


def _read_only(tool: AnyTool, tool_input: BaseModel) -> bool:
    try:
        return bool(tool.is_read_only(tool_input))
    except Exception:
        return False  # a classifier that throws has not shown the call is harmless


def gather(tool: AnyTool, tool_input: BaseModel, ctx: ToolContext, analyses: Analyses) -> CallFacts:
    names = (tool.name, *tool.aliases)
    if tool.name == BASH:
        command = getattr(tool_input, "command", None)
        if not isinstance(command, str):
            return CallFacts(tool.name, names, "bash", False, problem="the call has no command text to check")
        try:
            facts = analyses.facts(command, ctx.session.cwd, ctx.get(HOME_DIR))
        except Exception as exc:  # a classifier that throws must not mean "allowed"
            ctx.logger.exception("classifying a Bash command failed")
            return CallFacts(tool.name, names, "bash", False, problem=f"the command could not be analysed ({exc})")
        # Every part judged as not read-only, whatever the classifier makes of it (an allow rule may still cover
        # it): one the model says writes (a run in the read-only sandbox was stopped from writing), and one that
        # asks to run outside the sandbox (the read-only verdict would otherwise let it run unconfined on that
        # verdict alone).
        claims = [
            why
            for flag, why in (
                ("writes", "it was called as a command that writes (writes: true)"),
                ("outside_sandbox", "it is to run outside the sandbox (outside_sandbox: true)"),
            )
            if getattr(tool_input, flag, False) is True
        ]
        if claims:
            why = "; ".join(claims)
            parts = [
                replace(part, read_only=False, classifier_reason=why) if part.read_only else part
                for part in facts.parts
            ]
            facts = replace(facts, read_only=False, parts=parts)
        return CallFacts(tool.name, names, "bash", facts.read_only, bash=facts)

    if tool.name == WEB_FETCH:
        url = getattr(tool_input, "url", None)
        try:
            # The canonical host (IDNA, no trailing dot, `2130706433` as 127.0.0.1) is what rules match.
            host = parse_target(url).host if isinstance(url, str) else None
        except UrlRefused as exc:
            return CallFacts(tool.name, names, "fetch", False, problem=f"its URL is refused ({exc})")
        if not host:
            return CallFacts(tool.name, names, "fetch", False, problem="the call names no URL host to check")
        return CallFacts(tool.name, names, "fetch", _read_only(tool, tool_input), host=host)

    try:
        paths = list(tool.paths(tool_input, ctx))
    except Exception as exc:
        return CallFacts(
            tool.name, names, "other", False, problem=f"{tool.name} could not say which files it uses ({exc})"
        )
    if tool.name in EDIT_FAMILY:
        return CallFacts(tool.name, names, "write", False, writes=paths)
    read_only = _read_only(tool, tool_input)
    if paths:
        if read_only:
            return CallFacts(tool.name, names, "read", True, reads=paths)
        return CallFacts(tool.name, names, "write", False, writes=paths)
    return CallFacts(tool.name, names, "other", read_only)
