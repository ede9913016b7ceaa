"""The pure helpers behind Glob and Grep: glob splitting and matching, pagination, previews, rg output."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.globs import basename_prefilter, compile_glob, split_glob_list, split_static_prefix
from toolgate.text.pagination import page_notice, paginate
from toolgate.text.preview import count_lines, head_and_tail
from toolgate.text.ripgrep_output import ContentListing, parse_counts, split_records


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("src/app/**/*.ts", ("src/app", "**/*.ts")),
        ("/abs/x/*.py", ("/abs/x", "*.py")),
        ("/x.py", ("/", "x.py")),
        ("*.py", ("", "*.py")),
        ("**/*.py", ("", "**/*.py")),
        ("docs/a.md", ("docs", "a.md")),
        ("~/notes/*.md", ("~/notes", "*.md")),
        ("../other/*.py", ("../other", "*.py")),
        ("src/{a/b,c}/*.py", ("src", "{a/b,c}/*.py")),
        ("src/[ab]/x", ("src", "[ab]/x")),
        ("a\\*b/c", ("", "a\\*b/c")),  # an escaped star still makes the segment a pattern
    ],
)
def test_split_static_prefix(pattern: str, expected: tuple[str, str]) -> None:
    assert split_static_prefix(pattern) == expected


def test_split_glob_list_keeps_braces_whole() -> None:
    assert split_glob_list("*.ts,*.tsx") == ["*.ts", "*.tsx"]
    assert split_glob_list("*.{ts,tsx}  !*.min.js") == ["*.{ts,tsx}", "!*.min.js"]
    assert split_glob_list(" ") == []


@pytest.mark.parametrize(
    ("pattern", "path", "anchored_match", "basename_match"),
    [
        ("*.py", "a.py", True, True),
        ("*.py", "src/a.py", False, True),
        ("**/*.py", "a.py", True, True),
        ("**/*.py", "src/deep/a.py", True, True),
        ("src/**/*.ts", "src/a.ts", True, True),
        ("src/**/*.ts", "src/x/y/a.ts", True, True),
        ("src/**/*.ts", "lib/src/a.ts", False, False),
        ("src/*.ts", "src/x/a.ts", False, False),
        ("*.{ts,tsx}", "a.tsx", True, True),
        ("*.{ts,tsx}", "a.js", False, False),
        ("{src,lib}/**/*.{py,pyi}", "lib/x/a.pyi", True, True),
        ("file?.txt", "file1.txt", True, True),
        ("file?.txt", "file10.txt", False, False),
        ("[!a]*.py", "b.py", True, True),
        ("[!a]*.py", "a.py", False, False),
        ("[ab].py", "b.py", True, True),
        ("a[.py", "a[.py", True, True),  # an unclosed bracket is a plain character
        ("a{b", "a{b", True, True),
        ("\\*.py", "*.py", True, True),
        ("\\*.py", "x.py", False, False),
        ("/top.py", "sub/top.py", False, False),  # a leading slash anchors even a bare name
        ("./*.py", "a.py", True, True),
        ("src/", "src/a/b.py", True, True),
        ("**", "any/thing/at/all", True, True),
        ("a**b", "axxb", True, True),
        ("name with space.txt", "name with space.txt", True, True),
        ("*.py", "ünïcödé.py", True, True),
    ],
)
def test_compile_glob(pattern: str, path: str, anchored_match: bool, basename_match: bool) -> None:
    assert bool(compile_glob(pattern, basename_if_no_slash=False).fullmatch(path)) is anchored_match
    assert bool(compile_glob(pattern, basename_if_no_slash=True).fullmatch(path)) is basename_match


@given(
    pattern=st.text(alphabet="ab.*?", min_size=1, max_size=8),
    name=st.text(alphabet="ab.", min_size=0, max_size=8),
)
def test_compile_glob_agrees_with_fnmatch_on_simple_names(pattern: str, name: str) -> None:
    ours = bool(compile_glob(pattern, basename_if_no_slash=False).fullmatch(name))
    assert ours == fnmatch.fnmatchcase(name, pattern)


def test_basename_prefilter() -> None:
    assert basename_prefilter("**/*.py") == "*.py"
    assert basename_prefilter("src/**/*.{ts,tsx}") == "*.{ts,tsx}"
    assert basename_prefilter("*.py") == "*.py"
    assert basename_prefilter("src/**") is None
    assert basename_prefilter("src/") is None
    assert basename_prefilter("a\\*.py") is None
    assert basename_prefilter("{a/b,c}") is None
    assert basename_prefilter("a[.py") is None


def test_pagination_announces_every_cut() -> None:
    assert page_notice(paginate(10, 0, 250), "files") is None
    first = paginate(1204, 0, 250)
    assert (first.start, first.stop) == (0, 250)
    assert page_notice(first, "lines") == "Showing lines 1–250 of 1,204 — use offset 250 for more."
    last = paginate(1204, 1200, 250)
    assert page_notice(last, "lines") == "Showing lines 1,201–1,204 of 1,204."
    past = paginate(5, 9, 250)
    assert past.count == 0
    assert "past the end" in (page_notice(past, "files") or "")
    unlimited = paginate(5000, 0, 0)
    assert unlimited.complete
    assert page_notice(paginate(300, 0, 250), "files", narrow="narrow it") == (
        "Showing files 1–250 of 300 — use offset 250 for more, or narrow it."
    )


def test_head_and_tail_cut_at_line_breaks() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 1001))
    preview = head_and_tail(text, 100, 50)
    assert preview.head.endswith(("line 12", "line 13", "line 14"))
    assert not preview.head_ends_mid_line and not preview.tail_starts_mid_line
    assert preview.tail.endswith("line 1000\n")
    assert text.startswith(preview.head) and text.endswith(preview.tail)
    assert preview.total_lines == 1000 == count_lines(text)
    assert preview.tail_first_line == text.count("\n", 0, len(text) - len(preview.tail)) + 1
    assert len(preview.head) + preview.omitted_chars + len(preview.tail) == len(text)


def test_head_and_tail_of_one_enormous_line() -> None:
    text = "x" * 100_000
    preview = head_and_tail(text, 2000, 1000)
    assert (len(preview.head), len(preview.tail)) == (2000, 1000)
    assert preview.head_ends_mid_line and preview.tail_starts_mid_line
    assert preview.total_lines == 1 and preview.omitted_chars == 97_000


def test_short_text_needs_no_tail() -> None:
    preview = head_and_tail("a\nb\n", 100, 50)
    assert (preview.head, preview.tail, preview.omitted_chars) == ("a\nb\n", "", 0)


def test_split_records_drops_a_cut_record_only_when_partial() -> None:
    assert split_records(b"a\0b\0", b"\0", partial=False) == [b"a", b"b"]
    assert split_records(b"a\0b\0", b"\0", partial=True) == [b"a", b"b"]
    assert split_records(b"a\0b", b"\0", partial=True) == [b"a"]
    assert split_records(b"", b"\0", partial=False) == []


def test_parse_content_sorts_files_and_keeps_groups() -> None:
    raw = [
        b"/w/b.py\x001:b one",
        b"/w/b.py\x002-b ctx",
        b"--",
        b"/w/a.py\x005:a five",
        b"--",
        b"/w/a.py\x009:a nine",
        b'/w/bin.dat: binary file matches (found "\\0" byte around offset 3)',
    ]
    listing = ContentListing(raw, with_context=True)
    assert listing.total == 5
    records = listing.page(0, 5)
    rendered = [(r.render(r.path.decode()), r.starts_group) for r in records]
    assert rendered == [
        ("/w/a.py:5:a five", True),
        ("/w/a.py:9:a nine", True),
        ("/w/b.py:1:b one", True),
        ("/w/b.py-2-b ctx", False),
        ("/w/bin.dat: [binary file with matches; its lines are not shown]", True),
    ]


def test_content_pages_start_anywhere() -> None:
    raw = [b"/w/b\x001:b1", b"/w/b\x002:b2", b"--", b"/w/b\x009:b9", b"/w/a\x001:a1", b"/w/a\x002-a2"]
    listing = ContentListing(raw, with_context=False)
    everything = [r.render(r.path.decode()) for r in listing.page(0, 99)]
    assert everything == ["/w/a:1:a1", "/w/a-2-a2", "/w/b:1:b1", "/w/b:2:b2", "/w/b:9:b9"]
    for start in range(6):
        for stop in range(start, 7):
            assert [r.render(r.path.decode()) for r in listing.page(start, stop)] == everything[start:stop]
    assert [r.starts_group for r in listing.page(3, 5)] == [False, True]
    listing.keep_paths(lambda path: path.endswith(b"b"))
    assert listing.total == 3


def test_parse_counts() -> None:
    assert parse_counts([b"/w/b\x003", b"/w/a\x0012", b"garbage"]) == [(b"/w/a", 12), (b"/w/b", 3)]
