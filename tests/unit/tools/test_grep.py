"""Grep on real trees: every output mode, pagination, filters, ignore rules, odd input, and oversized results."""

from __future__ import annotations

import os
import re
from pathlib import Path

from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import PermissionMode
from toolgate.core.tool import DescribeContext
from toolgate.runtime import Runtime
from toolgate.testing import run1
from toolgate.tools.grep import GrepInput, GrepTool


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def set_mtimes(root: Path, names: list[str]) -> None:
    for age, name in enumerate(names):
        os.utime(root / name, ns=(1_700_000_000_000_000_000 + age * 10**9,) * 2)


async def test_files_mode_newest_first(runtime: Runtime, workspace: Path) -> None:
    names = ["b.py", "a.py", "sub/c.py", "none.py"]
    write_tree(workspace, {"b.py": "hit\n", "a.py": "hit\n", "sub/c.py": "x hit\n", "none.py": "miss\n"})
    set_mtimes(workspace, names)
    result = await run1(runtime, "Grep", pattern="hit")
    assert result.text() == "Found 3 files, newest first\nsub/c.py\na.py\nb.py"
    one = await run1(runtime, "Grep", pattern="x hit")
    assert one.text() == "Found 1 file\nsub/c.py"


async def test_content_mode_sorted_by_path_with_line_numbers(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"z.txt": "one\nfoo two\n", "a/b.txt": "foo\nbar\nfoo again\n"})
    result = await run1(runtime, "Grep", pattern="foo", output_mode="content")
    assert result.text() == "a/b.txt:1:foo\na/b.txt:3:foo again\nz.txt:2:foo two"
    plain = await run1(runtime, "Grep", pattern="foo", output_mode="content", **{"-n": False})
    assert plain.text() == "a/b.txt:foo\na/b.txt:foo again\nz.txt:foo two"


async def test_context_lines_and_groups(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"f.txt": "".join(f"line {i}\n" for i in range(1, 21)), "g.txt": "line 5\n"})
    result = await run1(runtime, "Grep", pattern="^line (5|15)$", output_mode="content", **{"-C": 1})
    assert result.text() == (
        "f.txt-4-line 4\nf.txt:5:line 5\nf.txt-6-line 6\n--\n"
        "f.txt-14-line 14\nf.txt:15:line 15\nf.txt-16-line 16\n--\ng.txt:1:line 5"
    )
    after = await run1(runtime, "Grep", pattern="^line 20$", output_mode="content", **{"-B": 2, "-A": 5})
    assert after.text() == "f.txt-18-line 18\nf.txt-19-line 19\nf.txt:20:line 20"
    same = await run1(runtime, "Grep", pattern="^line 15$", output_mode="content", context=1, **{"-C": 9})
    assert same.text() == "f.txt-14-line 14\nf.txt:15:line 15\nf.txt-16-line 16"  # context wins over -C


async def test_count_mode(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"a.txt": "x\nx x\ny\n", "b.txt": "x\n", "c.txt": "y\n"})
    result = await run1(runtime, "Grep", pattern="x", output_mode="count")
    assert result.text() == "a.txt:2\nb.txt:1\n3 matching lines in 2 files."


async def test_case_and_multiline(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"a.go": "type T struct {\n\tName string\n}\n"})
    insensitive = await run1(runtime, "Grep", pattern="NAME", output_mode="content", **{"-i": True})
    assert insensitive.text() == "a.go:2:\tName string"
    assert (await run1(runtime, "Grep", pattern="NAME")).text().startswith("No matches")
    spanning = await run1(runtime, "Grep", pattern=r"struct \{.*?Name", multiline=True, output_mode="content")
    assert spanning.text() == "a.go:1:type T struct {\na.go:2:\tName string"
    refused = await run1(runtime, "Grep", pattern="string\n")
    assert refused.is_error and 'kind="invalid_input"' in refused.text() and "Set multiline: true" in refused.text()


async def test_pagination_is_always_announced(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"many.txt": "".join(f"hit {i}\n" for i in range(1, 1205))})
    first = await run1(runtime, "Grep", pattern="hit", output_mode="content")
    lines = first.text().splitlines()
    assert lines[0] == "many.txt:1:hit 1" and lines[249] == "many.txt:250:hit 250"
    assert lines[-1] == (
        "[Showing lines 1–250 of 1,204 — use offset 250 for more, or narrow the pattern, path, glob or type.]"
    )
    second = await run1(runtime, "Grep", pattern="hit", output_mode="content", offset=250, head_limit=10)
    assert second.text().splitlines()[0] == "many.txt:251:hit 251"
    assert "Showing lines 251–260 of 1,204 — use offset 260 for more" in second.text()
    last = await run1(runtime, "Grep", pattern="hit", output_mode="content", offset=1200)
    assert last.text().endswith("many.txt:1204:hit 1204\n\n[Showing lines 1,201–1,204 of 1,204.]")
    past = await run1(runtime, "Grep", pattern="hit", output_mode="content", offset=5000)
    assert "Offset 5000 is past the end: there are only 1,204 lines" in past.text()


async def test_files_mode_pagination(runtime: Runtime, workspace: Path) -> None:
    names = [f"f{i:03d}.txt" for i in range(300)]
    write_tree(workspace, dict.fromkeys(names, "hit\n"))
    set_mtimes(workspace, names)
    result = await run1(runtime, "Grep", pattern="hit", head_limit=2, offset=1)
    assert result.text() == (
        "Found 300 files, newest first\nf298.txt\nf297.txt\n\n"
        "[Showing files 2–3 of 300 — use offset 3 for more, or narrow the pattern, path, glob or type.]"
    )


async def test_unlimited_results_go_to_the_output_store(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"big.txt": "".join(f"match number {i}\n" for i in range(1, 3001))})
    result = await run1(runtime, "Grep", pattern="match", output_mode="content", head_limit=0)
    text = result.text()
    ref = re.search(r"stored as (out-[0-9a-f]+)", text)
    assert ref is not None, text[:500]
    assert "big.txt:1:match number 1" in text and "big.txt:3000:match number 3000" in text
    stored = runtime.session.deps.get(OUTPUT_STORE).read_text(ref.group(1))
    assert stored.splitlines() == [f"big.txt:{i}:match number {i}" for i in range(1, 3001)]
    found = await run1(runtime, "ToolOutputGrep", ref=ref.group(1), pattern=r":1500:")
    assert found.text() == "1500:big.txt:1500:match number 1500"


async def test_long_lines_are_capped_with_a_marker(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"min.js": "a" * 2000 + "needle" + "b" * 2000 + "\n"})
    result = await run1(runtime, "Grep", pattern="needle", output_mode="content")
    assert len(result.text()) < 600
    assert result.text().startswith("min.js:1:aaaa") and "omitted" in result.text()


async def test_ignore_rules_vcs_and_hidden(runtime: Runtime, workspace: Path) -> None:
    write_tree(
        workspace,
        {
            ".git/config": "needle\n",
            ".hg/store": "needle\n",
            ".gitignore": "dist/\n*.gen.py\n",
            "dist/out.py": "needle\n",
            "code.gen.py": "needle\n",
            "code.py": "needle\n",
            ".github/ci.yml": "needle\n",
        },
    )
    result = await run1(runtime, "Grep", pattern="needle")
    assert sorted(result.text().splitlines()[1:]) == [".github/ci.yml", "code.py"]
    # A glob that matches an ignored file does not bring it back (ripgrep's --glob alone would).
    filtered = await run1(runtime, "Grep", pattern="needle", glob="*.py")
    assert filtered.text().splitlines()[1:] == ["code.py"]
    deep = await run1(runtime, "Grep", pattern="needle", glob="**/*.py")
    assert deep.text().splitlines()[1:] == ["code.py"]


async def test_glob_and_type_filters(runtime: Runtime, workspace: Path) -> None:
    write_tree(
        workspace,
        {
            "src/a.ts": "hit\n",
            "src/b.tsx": "hit\n",
            "src/c.min.js": "hit\n",
            "src/d.js": "hit\n",
            "lib/e.ts": "hit\n",
            "f.py": "hit\n",
        },
    )

    async def files(**filters: object) -> list[str]:
        result = await run1(runtime, "Grep", pattern="hit", **filters)
        return sorted(result.text().splitlines()[1:])

    assert await files(glob="*.{ts,tsx}") == ["lib/e.ts", "src/a.ts", "src/b.tsx"]
    assert await files(glob="*.ts, *.tsx") == ["lib/e.ts", "src/a.ts", "src/b.tsx"]
    assert await files(glob="src/**/*.ts") == ["src/a.ts"]
    assert await files(glob="src/**") == ["src/a.ts", "src/b.tsx", "src/c.min.js", "src/d.js"]
    assert await files(glob="*.js !*.min.js") == ["src/d.js"]
    assert await files(type="py") == ["f.py"]
    assert await files(type="ts", glob="lib/**") == ["lib/e.ts"]
    none = await run1(runtime, "Grep", pattern="hit", glob="*.rb")
    assert none.text() == "No matches for 'hit' in the workspace (only files with glob '*.rb')."


async def test_invalid_regex_and_type_are_explained(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"a.txt": "x\n"})
    result = await run1(runtime, "Grep", pattern="func(")
    assert result.is_error and 'kind="invalid_input"' in result.text()
    assert "not a valid regular expression: unclosed group" in result.text()
    assert "put a backslash before one" in result.text()
    lookahead = await run1(runtime, "Grep", pattern="foo(?=bar)")
    assert "look-ahead or look-behind" in lookahead.text()
    backref = await run1(runtime, "Grep", pattern=r"(a)\1")
    assert "back-reference" in backref.text()
    huge = await run1(runtime, "Grep", pattern=r"\w{500}{100}")
    assert huge.is_error and 'kind="invalid_input"' in huge.text() and "too large to compile" in huge.text()
    bad_type = await run1(runtime, "Grep", pattern="x", type="javascript")
    assert (
        bad_type.is_error
        and 'kind="invalid_input"' in bad_type.text()
        and "'javascript' is not a file type name ripgrep knows. Did you mean 'js'" in (bad_type.text())
    )


async def test_patterns_starting_with_a_dash(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"cli.txt": "run --verbose\n-e is not a flag here\n"})
    result = await run1(runtime, "Grep", pattern="--verbose", output_mode="content")
    assert result.text() == "cli.txt:1:run --verbose"
    dash_e = await run1(runtime, "Grep", pattern="-e", output_mode="content")
    assert dash_e.text() == "cli.txt:2:-e is not a flag here"


async def test_single_file_binary_files_and_odd_names(runtime: Runtime, workspace: Path) -> None:
    write_tree(
        workspace,
        {
            "dir with space/ünï 🙂.txt": "hello\n",
            "blob.bin": b"hello\x00\x01\x02",
            "plain.txt": "hello\n",
        },
    )
    result = await run1(runtime, "Grep", pattern="hello")
    assert sorted(result.text().splitlines()[1:]) == ["dir with space/ünï 🙂.txt", "plain.txt"]  # binary skipped
    one = await run1(runtime, "Grep", pattern="hello", path="dir with space/ünï 🙂.txt", output_mode="content")
    assert one.text() == "dir with space/ünï 🙂.txt:1:hello"
    named = await run1(runtime, "Grep", pattern="hello", path="blob.bin", output_mode="content")
    assert named.text() == "blob.bin: [binary file with matches; its lines are not shown]"


async def test_missing_path_and_ignored_options(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"src/a.txt": "x\n"})
    missing = await run1(runtime, "Grep", pattern="x", path="srcs")
    assert missing.is_error
    assert f"No file or directory exists at {workspace / 'srcs'}. Did you mean {workspace / 'src'}?" in missing.text()
    noted = await run1(runtime, "Grep", pattern="x", **{"-A": 3})
    assert noted.text().endswith(
        '[-A, -B, -C, context and -n apply only to output_mode "content", so they were ignored.]'
    )


def test_schema_uses_the_flag_names(workspace: Path) -> None:
    grep = GrepTool()
    schema = grep.input_schema()
    properties = schema["properties"]
    for flag in ("-A", "-B", "-C", "-n", "-i"):
        assert flag in properties, flag
    assert "before" not in properties and "line_numbers" not in properties
    assert properties["output_mode"]["enum"] == ["files_with_matches", "content", "count"]
    assert schema["additionalProperties"] is False and schema["required"] == ["pattern"]
    parsed = GrepInput.model_validate({"pattern": "x", "-A": 2, "-i": True})
    assert parsed.after == 2 and parsed.ignore_case
    tool_input = GrepInput(pattern="x")
    assert grep.is_read_only(tool_input) and grep.is_concurrency_safe(tool_input)
    description = grep.description(DescribeContext(frozenset({"Grep", "Bash"}), PermissionMode.DEFAULT, workspace))
    assert "instead of grep or rg in a shell" in description


async def test_paths_name_the_searched_root(runtime: Runtime, workspace: Path, tmp_path: Path) -> None:
    ctx = runtime.runner.new_context("t")
    assert GrepTool().paths(GrepInput(pattern="x"), ctx) == [workspace]
    assert GrepTool().paths(GrepInput(pattern="x", path="sub/f.txt"), ctx) == [workspace / "sub" / "f.txt"]
    (tmp_path / "elsewhere").mkdir()
    outside = await run1(runtime, "Grep", pattern="x", path=str(tmp_path / "elsewhere"))
    assert outside.is_error and 'kind="permission"' in outside.text()
