"""Glob: file paths matching a glob pattern, newest first, at most 100 (and the total when there are more)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.errors import ToolFailure
from toolgate.core.paths import display_input_path, display_path, expand_path
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.globs import basename_prefilter, compile_glob, split_static_prefix
from toolgate.text.ripgrep_output import split_records
from toolgate.tools._ripgrep import RIPGREP, VCS_EXCLUDES, file_errors_note
from toolgate.tools._search import (
    PathShower,
    ReadDenyFilter,
    check_search_root,
    join_notes,
    open_search_root,
    relative_to_root,
    root_prefix,
    search_root,
)

MAX_PATHS = 100


class GlobInput(ToolInput):
    pattern: str = Field(
        min_length=1,
        description='Glob pattern, such as "**/*.py" or "src/**/*.{ts,tsx}"; an absolute pattern is allowed.',
    )
    path: str | None = Field(
        default=None,
        description="Directory to search in: absolute, or relative to the workspace. Omit it to search the workspace.",
    )


@dataclass(frozen=True, slots=True)
class GlobPlan:
    root: Path  # the directory ripgrep walks
    pattern: str  # the rest of the pattern, relative to root


@dataclass(frozen=True, slots=True)
class GlobFound:
    pattern: str
    root_shown: str
    paths: list[str]  # the first MAX_PATHS, newest first, as the model should see them
    total: int
    stopped: str | None  # why the listing is incomplete, if it is
    unreadable: str | None  # ripgrep's complaints about entries it could not list
    hint: str = ""  # for an empty result: why the pattern may not mean what was intended
    hidden: str = ""  # how many matches permission rules kept out of the listing


class GlobTool(Tool[GlobInput, GlobFound]):
    name = "Glob"
    traits = LOOKS_ONLY
    input_model = GlobInput
    max_result_chars = 50_000

    def description(self, ctx: DescribeContext) -> str:
        grep = "\n- To search inside files, use Grep." if "Grep" in ctx.tool_names else ""
        return (
            "Find files by name with a glob pattern. Returns matching file paths, most recently modified first.\n"
            "- `*` matches within one directory level, `**` across any number of levels, `?` one character, "
            "`[abc]` one of a set, `{ts,tsx}` alternatives. `*.py` matches only files directly in the searched "
            "directory; `**/*.py` matches at any depth; `src/**/*.ts` anywhere under src.\n"
            f"- At most {MAX_PATHS} paths come back; when more match, the result gives the total so you can "
            "narrow the pattern or the directory.\n"
            "- Paths inside the workspace are shown relative to it. Files ignored by .gitignore and the contents "
            "of .git (and other version-control folders) are left out; hidden files are included; symbolic "
            "links are not followed.\n"
            "- Several independent Glob calls in one turn run in parallel." + grep
        )

    def paths(self, tool_input: GlobInput, ctx: ToolContext) -> Sequence[Path]:
        return [self._plan(tool_input, ctx).root]

    def summary(self, tool_input: GlobInput, workspace: Path) -> str:
        where = f" in {display_input_path(tool_input.path, workspace)}" if tool_input.path else ""
        return f"{tool_input.pattern}{where}"

    def _plan(self, tool_input: GlobInput, ctx: ToolContext) -> GlobPlan:
        """Glob characters never appear in the leading directories, so ripgrep walks only below them."""
        base = search_root(tool_input.path, ctx)
        prefix, rest = split_static_prefix(tool_input.pattern.strip())
        root = expand_path(prefix, base, ctx.get(HOME_DIR)) if prefix else base
        return GlobPlan(root, rest or "**")

    async def validate(self, tool_input: GlobInput, ctx: ToolContext) -> None:
        check_search_root(self._plan(tool_input, ctx).root, ctx, files_allowed=False)

    async def call(self, tool_input: GlobInput, ctx: ToolContext) -> GlobFound:
        plan = self._plan(tool_input, ctx)
        ripgrep = ctx.get(RIPGREP)
        # Newest first: ripgrep sorts (one stat per file, in native code); the filter below keeps its order.
        args = ["--files", "--hidden", "--null", "--sortr=modified", *VCS_EXCLUDES]
        # ripgrep's --glob would list .gitignored files that match it; a file type keeps ignored files out.
        prefilter = basename_prefilter(plan.pattern)
        if prefilter is not None:
            args += [f"--type-add=tgglob:{prefilter}", "--type=tgglob"]
        # Listed where the permission decision saw the root, whatever was swapped on the way since.
        with open_search_root(plan.root, ctx) as at:
            run = await ripgrep.run(args, at)
        if run.returncode not in (0, 1, None) and not run.stdout:
            raise ToolFailure(f"Listing files failed: {run.stderr.strip() or f'ripgrep exited with {run.returncode}'}")

        # Named as the model named the root before the pattern, the rules or the order see them.
        ordered = split_records(run.stdout, b"\0", partial=run.partial, names=at.names)
        # `**/NAME` is exactly what the file-name type selects; anything else is matched here, in full.
        if plan.pattern != "**" and (prefilter is None or plan.pattern != f"**/{prefilter}"):
            matcher = compile_glob(plan.pattern, basename_if_no_slash=False)
            prefix = root_prefix(plan.root)
            ordered = [p for p in ordered if matcher.fullmatch(relative_to_root(p, prefix))]

        denied = ReadDenyFilter.for_session(ctx, credentials=False)
        if denied is not None:
            ordered = [p for p in ordered if denied(p)]
        stopped = ripgrep.describe_stop(run.stopped) if run.stopped else None
        if stopped and not ordered:
            raise ToolFailure(
                f"No file matching {tool_input.pattern} was found before {stopped}; there may be matches it did "
                "not reach. Search a smaller directory (path) or a more specific pattern."
            )
        show = PathShower(ctx.workspace)
        base = search_root(tool_input.path, ctx)
        root_shown = "the workspace" if base == ctx.workspace else display_path(base, ctx.workspace)
        return GlobFound(
            pattern=tool_input.pattern,
            root_shown=root_shown,
            paths=[show(p) for p in ordered[:MAX_PATHS]],
            total=len(ordered),
            stopped=stopped,
            unreadable=file_errors_note(run, "Some entries could not be listed"),
            hidden=denied.note() if denied is not None else "",
            hint="" if ordered else _hint(plan),
        )

    def to_result(self, data: GlobFound, ctx: ToolContext) -> str:
        notes: list[str] = []
        if data.total > len(data.paths):
            notes.append(
                f"Showing the {len(data.paths)} most recently modified of {data.total:,} matching files. "
                "To see the others, narrow the pattern or search a subdirectory (path)."
            )
        if data.stopped:
            notes.append(f"Incomplete: {data.stopped}, so some matching files may be missing.")
        if data.unreadable:
            notes.append(data.unreadable)
        if data.hidden:
            notes.append(data.hidden)
        if not data.paths:
            body = f"No files match {data.pattern} in {data.root_shown}."
            return join_notes(f"{body} ({data.hint})" if data.hint else body, notes)
        return join_notes("\n".join(data.paths), notes)


def _hint(plan: GlobPlan) -> str:
    """Why a pattern that matched nothing may not mean what was intended."""
    try:
        names_a_directory = (plan.root / plan.pattern).is_dir()
    except OSError:  # a pattern no file name could be (too long, say)
        names_a_directory = False
    if names_a_directory:
        return f"{plan.pattern} is a directory, and Glob lists files: use {plan.pattern}/** to list what is in it."
    if "/" not in plan.pattern and "**" not in plan.pattern:
        return (
            f"{plan.pattern} matches only files directly in that directory; "
            f"to look in subdirectories too, use **/{plan.pattern}."
        )
    return ""
