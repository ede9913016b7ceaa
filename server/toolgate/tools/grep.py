"""Grep: search file contents with ripgrep; matching files (newest first), matching lines, or counts per file."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import ToolFailure
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.globs import basename_prefilter, compile_glob, split_glob_list
from toolgate.text.pagination import Page, page_notice, paginate
from toolgate.text.quotes import shown_quoted
from toolgate.text.ripgrep_output import ContentListing, PathPrefix, parse_counts, split_records
from toolgate.tools._ripgrep import RIPGREP, VCS_EXCLUDES, RgRun, explain_search_error, file_errors_note
from toolgate.tools._search import (
    PathShower,
    ReadDenyFilter,
    check_search_root,
    join_notes,
    newest_first,
    open_search_root,
    relative_to_root,
    root_prefix,
    search_root,
)

OutputMode = Literal["files_with_matches", "content", "count"]
DEFAULT_HEAD_LIMIT = 250
MAX_LINE_CHARS = 500
_NARROW = "narrow the pattern, path, glob or type"

Keep = Callable[[bytes], bool]
Vouch = Callable[[list[bytes]], None]  # decides for many paths at once where one pass can (ReadDenyFilter.vouch)


class GrepInput(ToolInput):
    pattern: str = Field(min_length=1, description="Regular expression to search for (Rust regex syntax).")
    path: str | None = Field(
        default=None,
        description="File or directory to search: absolute, or relative to the workspace. Omit it for the workspace.",
    )
    glob: str | None = Field(
        default=None,
        description='Only search files matching this glob: "*.py", "*.{ts,tsx}", "src/**/*.rs". Several are '
        'separated by spaces or commas; a leading ! excludes ("!*.min.js").',
    )
    type: str | None = Field(
        default=None,
        description="Only search files of this type, by ripgrep's type names (py, js, ts, rust, go, java, …).",
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description='"files_with_matches" (default): the files that match, newest first. "content": the matching '
        'lines. "count": how many lines match in each file.',
    )
    before: int | None = Field(
        default=None, alias="-B", ge=0, description='Lines to show before each match ("content").'
    )
    after: int | None = Field(default=None, alias="-A", ge=0, description='Lines to show after each match ("content").')
    around: int | None = Field(
        default=None, alias="-C", ge=0, description='Lines to show before and after each match ("content").'
    )
    context: int | None = Field(default=None, ge=0, description="The same as -C.")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description='Show line numbers ("content"; on unless set to false).'
    )
    ignore_case: bool = Field(default=False, alias="-i", description="Match letters regardless of case.")
    multiline: bool = Field(
        default=False, description="Let the pattern span lines (and let . match a line break). Slower; off by default."
    )
    head_limit: int = Field(
        default=DEFAULT_HEAD_LIMIT,
        ge=0,
        description=f"At most this many results (files, lines or counts); default {DEFAULT_HEAD_LIMIT}, 0 = no limit.",
    )
    offset: int = Field(default=0, ge=0, description="Skip this many results first (to page through them).")


@dataclass(frozen=True, slots=True)
class GrepFound:
    mode: OutputMode
    body: list[str]  # the lines of this page, ready to show
    page: Page
    empty_text: str  # what to say when nothing matched
    header: str = ""
    footer: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Filters:
    args: list[str]
    path_globs: list[str]  # positive globs ripgrep cannot apply without un-ignoring files: matched here


def _filters(tool_input: GrepInput) -> _Filters:
    globs = split_glob_list(tool_input.glob or "")
    args = [f"--glob={g}" for g in globs if g.startswith("!")]  # exclusions never bring ignored files back
    wanted = [g for g in globs if not g.startswith("!")]
    if tool_input.type:
        args.append(f"--type={tool_input.type}")
    if not wanted:
        return _Filters(args, [])
    # ripgrep's --glob whitelist would search .gitignored files; a file type made of the file-name part
    # narrows the search without that, and anything with directories in it is matched on the results.
    prefilters = [basename_prefilter(g) for g in wanted]
    if tool_input.type or None in prefilters:
        return _Filters(args, wanted)
    args += [f"--type-add=tgglob:{p}" for p in prefilters]
    args.append("--type=tgglob")
    return _Filters(args, [g for g in wanted if "/" in g.rstrip("/")])


class GrepTool(Tool[GrepInput, GrepFound]):
    name = "Grep"
    traits = LOOKS_ONLY
    input_model = GrepInput
    max_result_chars = 20_000

    def description(self, ctx: DescribeContext) -> str:
        shell = " Use it instead of grep or rg in a shell." if "Bash" in ctx.tool_names else ""
        return (
            f"Search file contents with a regular expression (powered by ripgrep).{shell}\n"
            '- output_mode "files_with_matches" (default) lists matching files, most recently modified first; '
            '"content" shows matching lines as path:line:text (context lines as path-line-text, groups '
            'separated by --), sorted by path; "count" shows matching lines per file.\n'
            "- Rust regex syntax: escape ( ) [ ] { } . * + ? | ^ $ \\ to match them literally (`interface\\{\\}` "
            "finds `interface{}`). No look-around or back-references. A pattern matches within one line unless "
            "multiline is true.\n"
            '- Narrow with glob ("*.py", "src/**/*.ts", "!*.min.js") or type (py, js, rust, …).\n'
            f"- At most head_limit results (default {DEFAULT_HEAD_LIMIT}; 0 = all) starting at offset; the result "
            f"says how many there are in all and which offset shows more. Lines longer than {MAX_LINE_CHARS} "
            "characters are cut and marked.\n"
            "- Files ignored by .gitignore, version-control folders (.git, …) and binary files are skipped; "
            "hidden files are searched."
        )

    def paths(self, tool_input: GrepInput, ctx: ToolContext) -> Sequence[Path]:
        return [search_root(tool_input.path, ctx)]

    def summary(self, tool_input: GrepInput, workspace: Path) -> str:
        where = f" in {display_input_path(tool_input.path, workspace)}" if tool_input.path else ""
        only = f" ({tool_input.glob})" if tool_input.glob else ""
        return f"{shown_quoted(tool_input.pattern)}{where}{only}"

    async def validate(self, tool_input: GrepInput, ctx: ToolContext) -> None:
        check_search_root(search_root(tool_input.path, ctx), ctx, files_allowed=True)

    def _args(self, tool_input: GrepInput, filters: _Filters) -> list[str]:
        args = ["--hidden", "--null", "--with-filename", "--color=never", *VCS_EXCLUDES, *filters.args]
        if tool_input.ignore_case:
            args.append("--ignore-case")
        if tool_input.multiline:
            args += ["--multiline", "--multiline-dotall"]
        if tool_input.output_mode == "files_with_matches":
            args.append("--files-with-matches")
        elif tool_input.output_mode == "count":
            args.append("--count")
        else:
            args += [f"--max-columns={MAX_LINE_CHARS}", "--max-columns-preview"]
            if tool_input.line_numbers is not False:
                args.append("--line-number")
            around = tool_input.context if tool_input.context is not None else tool_input.around
            if around is not None:
                args.append(f"--context={around}")
            else:
                if tool_input.before is not None:
                    args.append(f"--before-context={tool_input.before}")
                if tool_input.after is not None:
                    args.append(f"--after-context={tool_input.after}")
        return args

    async def call(self, tool_input: GrepInput, ctx: ToolContext) -> GrepFound:
        root = search_root(tool_input.path, ctx)
        ripgrep = ctx.get(RIPGREP)
        filters = _filters(tool_input)
        # Searched where the permission decision saw the root, whatever was swapped on the way since.
        with open_search_root(root, ctx) as at:
            run = await ripgrep.run([*self._args(tool_input, filters), "-e", tool_input.pattern], at)
        if run.returncode == 2 and not run.stdout:
            raise await explain_search_error(run, tool_input.pattern, ripgrep)

        notes: list[str] = []
        if run.stopped:
            notes.append(
                f"Incomplete: {ripgrep.describe_stop(run.stopped)}. These are the results found before then; "
                f"to get them all, {_NARROW}."
            )
        unreadable = file_errors_note(run, "Some files could not be searched")
        if unreadable:
            notes.append(unreadable)
        if tool_input.output_mode != "content" and _content_only_options(tool_input):
            notes.append('-A, -B, -C, context and -n apply only to output_mode "content", so they were ignored.')

        empty = _no_match_text(tool_input, root, ctx)
        denied = ReadDenyFilter.for_session(ctx, credentials=True)
        keep = _both(_path_filter(filters.path_globs, root), denied)
        show = PathShower(ctx.workspace)
        vouch = denied.vouch if denied is not None else None
        # ripgrep's paths named as the model named the root, before any filter sees them.
        names = at.names
        if tool_input.output_mode == "files_with_matches":
            found = await self._files(run, tool_input, keep, show, vouch, names)
        elif tool_input.output_mode == "count":
            found = self._counts(run, tool_input, keep, show, vouch, names)
        else:
            found = self._content(run, tool_input, keep, show, vouch, names)
        if run.stopped and found.page.total == 0:
            raise ToolFailure(
                f"Nothing matching {tool_input.pattern!r} was found before {ripgrep.describe_stop(run.stopped)}; "
                f"there may be matches it did not reach. To search it all, {_NARROW}."
            )
        if denied is not None and (denied.hidden or denied.credentials):
            notes.append(denied.note())
        return replace(found, empty_text=empty, notes=[*found.notes, *notes])

    async def _files(
        self,
        run: RgRun,
        tool_input: GrepInput,
        keep: Keep | None,
        show: PathShower,
        vouch: Vouch | None,
        names: PathPrefix,
    ) -> GrepFound:
        paths = split_records(run.stdout, b"\0", partial=run.partial, names=names)
        if vouch is not None:
            vouch(paths)
        if keep is not None:
            paths = [p for p in paths if keep(p)]
        ordered = await anyio.to_thread.run_sync(newest_first, paths)
        page = paginate(len(ordered), tool_input.offset, tool_input.head_limit)
        noun = "file" if page.total == 1 else "files"
        return GrepFound(
            "files_with_matches",
            [show(p) for p in ordered[page.start : page.stop]],
            page,
            "",
            header=f"Found {_at_least(run)}{page.total:,} {noun}" + (", newest first" if page.total > 1 else ""),
            notes=_page_notes(page, "files", run),
        )

    def _counts(
        self,
        run: RgRun,
        tool_input: GrepInput,
        keep: Keep | None,
        show: PathShower,
        vouch: Vouch | None,
        names: PathPrefix,
    ) -> GrepFound:
        counts = parse_counts(split_records(run.stdout, b"\n", partial=run.partial), names)
        if vouch is not None:
            vouch([p for p, _ in counts])
        if keep is not None:
            counts = [(p, n) for p, n in counts if keep(p)]
        page = paginate(len(counts), tool_input.offset, tool_input.head_limit)
        lines = sum(n for _, n in counts)
        return GrepFound(
            "count",
            [f"{show(p)}:{n}" for p, n in counts[page.start : page.stop]],
            page,
            "",
            footer=f"{_at_least(run)}{lines:,} matching {'line' if lines == 1 else 'lines'} in {page.total:,} "
            f"{'file' if page.total == 1 else 'files'}.",
            notes=_page_notes(page, "files", run),
        )

    def _content(
        self,
        run: RgRun,
        tool_input: GrepInput,
        keep: Keep | None,
        show: PathShower,
        vouch: Vouch | None,
        names: PathPrefix,
    ) -> GrepFound:
        with_context = any(
            v for v in (tool_input.context, tool_input.around, tool_input.before, tool_input.after) if v is not None
        )
        lines = split_records(run.stdout, b"\n", partial=run.partial)
        listing = ContentListing(lines, with_context=with_context, names=names)
        if vouch is not None:
            vouch(listing.paths)
        if keep is not None:
            listing.keep_paths(keep)
        page = paginate(listing.total, tool_input.offset, tool_input.head_limit)
        body: list[str] = []
        for index, record in enumerate(listing.page(page.start, page.stop)):
            if record.starts_group and index:
                body.append("--")
            body.append(record.render(show(record.path)))
        return GrepFound("content", body, page, "", notes=_page_notes(page, "lines", run))

    def to_result(self, data: GrepFound, ctx: ToolContext) -> str:
        if data.page.total == 0:
            return join_notes(data.empty_text, data.notes)
        parts = [data.header] if data.header else []
        parts += data.body
        if data.footer:
            parts.append(data.footer)
        return join_notes("\n".join(parts), data.notes)


def _both(first: Keep | None, second: Keep | None) -> Keep | None:
    if first is None or second is None:
        return first or second
    return lambda path: first(path) and second(path)


def _path_filter(globs: list[str], root: Path) -> Keep | None:
    """Matches ripgrep's paths against the globs it could not apply itself (relative to the root)."""
    if not globs:
        return None
    matchers = [compile_glob(g, basename_if_no_slash=True) for g in globs]
    prefix = root_prefix(root)

    def keep(path: bytes) -> bool:
        # When the root is a file, ripgrep prints it as given: match it by its name.
        relative = relative_to_root(path, prefix) if path.startswith(prefix) else os.fsdecode(path).rsplit("/")[-1]
        return any(m.fullmatch(relative) for m in matchers)

    return keep


def _no_match_text(tool_input: GrepInput, root: Path, ctx: ToolContext) -> str:
    where = "the workspace" if root == ctx.workspace else display_path(root, ctx.workspace)
    filters = [
        f"glob {tool_input.glob!r}" if tool_input.glob else "",
        f"type {tool_input.type!r}" if tool_input.type else "",
    ]
    among = " and ".join(f for f in filters if f)
    return f"No matches for {tool_input.pattern!r} in {where}" + (f" (only files with {among})." if among else ".")


def _page_notes(page: Page, noun: str, run: RgRun) -> list[str]:
    notice = page_notice(page, noun, narrow=_NARROW, at_least=run.partial)
    return [notice] if notice else []


def _at_least(run: RgRun) -> str:
    """A stopped search counted only what it found before it stopped: its totals are lower bounds."""
    return "at least " if run.partial else ""


def _content_only_options(tool_input: GrepInput) -> bool:
    return any(
        v is not None
        for v in (tool_input.before, tool_input.after, tool_input.around, tool_input.context, tool_input.line_numbers)
    )
