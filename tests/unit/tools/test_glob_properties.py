"""Glob lets ripgrep filter by file name (a file type made of the pattern's last segment), and skips its own matcher
when that filter is the whole pattern (`**/NAME`). Whatever the tree and the pattern, that must list exactly the
files toolgate's own glob matcher selects among everything ripgrep lists unfiltered (ignore files applied, .git
left out): this compares the real tool with that reference on generated trees and patterns.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.permission import PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover, run1
from toolgate.text.globs import compile_glob, has_magic
from toolgate.text.ripgrep_output import split_records
from toolgate.tools._ripgrep import VCS_EXCLUDES, Ripgrep, find_ripgrep
from toolgate.tools._search import relative_to_root, root_prefix

# Few, short names, so that patterns often match: dot files, names with and without extensions, look-alikes.
# (No name starts with "[": the tool's notes do, and the listing is read back from its text.)
_file = st.sampled_from(["a", "b.x", ".h", "ab.x", "a.y", "x.b", "c[a]", "b{c}"])
_dir = st.sampled_from(["d", "e", ".g", "dd"])
_path = st.tuples(st.lists(_dir, max_size=2), _file).map(lambda t: "/".join([*t[0], t[1]]))
_ignore = st.lists(st.sampled_from(["b.x", "d/", "*.y", ".h", "e/a", "!a.y"]), max_size=3)

_atom = st.sampled_from(
    ["a", "b", "c", ".", "x", ",", "*", "?", "[ab]", "[!a]", "{a,b.x}", "{x,}", "{,a}", "{a,{b,x}}", "\\[", "[.]"]
)
_segment = st.lists(_atom, min_size=1, max_size=3).map("".join) | st.just("**")
# The first segment has glob characters: a static leading directory becomes the search root instead (tested apart).
_pattern = st.tuples(_segment.filter(has_magic), st.lists(_segment, max_size=2)).map(lambda t: "/".join([t[0], *t[1]]))


def reference(root: Path, pattern: str) -> set[str]:
    """toolgate's matcher applied to everything ripgrep lists under `root` without a name filter."""
    binary = find_ripgrep()
    assert binary is not None

    async def listing() -> bytes:
        run = await Ripgrep(binary).run(["--files", "--hidden", "--null", *VCS_EXCLUDES, "--", str(root)])
        return run.stdout

    matcher = compile_glob(pattern, basename_if_no_slash=False)
    prefix = root_prefix(root)
    names = [relative_to_root(p, prefix) for p in split_records(anyio.run(listing), b"\0", partial=False)]
    return {name for name in names if matcher.fullmatch(name)}


def listed_by_glob(root: Path, pattern: str) -> set[str]:
    async def call() -> str:
        runtime = build_runtime(root, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
        try:
            result = await run1(runtime, "Glob", pattern=pattern)
        finally:
            await runtime.aclose()
        assert not result.is_error, result.text()
        return result.text()

    text = anyio.run(call)
    if text.startswith("No files"):
        return set()
    return {line for line in text.splitlines() if line and not line.startswith("[")}


@settings(max_examples=examples(40))
@given(st.lists(_path, min_size=1, max_size=12, unique=True), _ignore, _pattern)
@example(["a", ".h", "d/.h", ".g/a"], [], "**/*")  # a leading dot is matched by `*` in both
@example(["b.x", "d/b.x", "e/a"], ["b.x"], "**/b.x")  # ignored files stay out of the name filter too
@example(["c[a]", "a"], [], "**/c\\[a]")  # an escape: no name filter, the matcher decides
@example(["ab.x", "d/a.y"], ["*.y", "!a.y"], "**/{a,b.x}*")
@example(["a", "ax"], [], "a{x,}")  # ripgrep drops an empty alternative: found by `make fuzz`
@example(["a", "d/b.x"], [], "**/{a,{b,c}.x}")  # ripgrep refuses nested alternatives
def test_the_name_filter_lists_exactly_what_the_matcher_selects(
    paths: list[str], ignore: list[str], pattern: str
) -> None:
    with tempfile.TemporaryDirectory(prefix="toolgate-glob-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()  # a repository, so .gitignore applies (and .git itself must stay out)
        (root / ".git" / "a").write_text("x")
        (root / ".gitignore").write_text("\n".join(ignore) + "\n")
        for path in paths:
            target = root / path
            if target.exists() or any(parent.is_file() for parent in target.parents):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
        assert listed_by_glob(root, pattern) == reference(root, pattern)
