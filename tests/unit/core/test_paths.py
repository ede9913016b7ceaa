from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.errors import StateError
from toolgate.core.paths import display_path, expand_path, inside_any, is_within, real_path, resolved_forms


def test_expand_path_forms() -> None:
    base, home = Path("/ws"), Path("/home/u")
    assert expand_path("a/b.txt", base, home) == Path("/ws/a/b.txt")
    assert expand_path("  /abs/../x  ", base, home) == Path("/x")
    assert expand_path("~", base, home) == home
    assert expand_path("~/n.txt", base, home) == Path("/home/u/n.txt")
    assert expand_path("~other/n", base, home) == Path("/ws/~other/n")  # only the user's own home expands


@pytest.mark.parametrize("raw", ["a\x00b", "", "   "])
def test_expand_path_refuses_nul_and_empty(raw: str) -> None:
    with pytest.raises(StateError):
        expand_path(raw, Path("/ws"), Path("/h"))


def test_inside_checks_every_resolved_form(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    os.symlink(outside, ws / "escape")
    assert inside_any(ws / "a.txt", [ws])
    assert not inside_any(ws / "escape" / "secret", [ws]), "a symlink out of the workspace must not count as inside"
    assert not inside_any(ws / ".." / "outside", [ws])
    assert inside_any(ws / "escape" / "secret", [ws, outside])


def test_a_workspace_reached_through_a_symlink_still_contains_its_files(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    os.symlink(real, alias)
    assert inside_any(alias / "f.txt", [alias])
    assert inside_any(real / "f.txt", [alias])


def test_display_path_is_relative_inside_the_workspace() -> None:
    assert display_path(Path("/ws/src/a.py"), Path("/ws")) == "src/a.py"
    assert display_path(Path("/etc/hosts"), Path("/ws")) == "/etc/hosts"


def test_a_link_followed_by_dotdot_is_resolved_before_the_dotdot_is_folded(tmp_path: Path) -> None:
    # `ws/link/..` is the parent of the link's target (outside), not `ws`: folding `..` first would let it in.
    ws, deep = tmp_path / "ws", tmp_path / "outside" / "deep"
    ws.mkdir()
    deep.mkdir(parents=True)
    os.symlink(deep, ws / "link")
    assert not inside_any(ws / "link" / "..", [ws])
    assert not inside_any(ws / "link" / ".." / "secret", [ws])
    assert inside_any(ws / "link" / "..", [ws, tmp_path / "outside"])


def test_a_directory_is_inside_itself_and_a_sibling_sharing_its_prefix_is_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (tmp_path / "ws2").mkdir()
    ws.mkdir()
    assert inside_any(ws, [ws])
    assert not inside_any(tmp_path / "ws2", [ws]), "/…/ws2 starts with the text /…/ws but is not inside it"
    assert not inside_any(tmp_path, [ws])
    assert inside_any(tmp_path / "ws2", [Path("/")])


@pytest.mark.parametrize(
    ("path", "directory"),
    [
        ("/a/b", "/a"), ("/a", "/a"), ("/ab", "/a"), ("/a", "/a/b"), ("/", "/"), ("/x", "/"), ("//x", "/"),
        ("//x/y", "//x"), ("/x/y", "//x"), ("a/b", "a"), ("a", "."), (".", "a"), ("/a/../b", "/a"),
    ],
)  # fmt: skip
def test_inside_any_answers_as_the_pathlib_containment_check(path: str, directory: str) -> None:
    # Paths that do not exist resolve to themselves, so the text check must agree with `is_within` on each.
    assert inside_any(Path(path), [Path(directory)]) == all(
        any(is_within(form, root) for root in resolved_forms(Path(directory))) for form in resolved_forms(Path(path))
    )


_SEGMENTS = st.sampled_from(["ws", "w", "wsx", "src", ".", "..", "", "a.py", "é"])
_PATHS = st.builds(
    lambda lead, parts: lead + "/".join(parts), st.sampled_from(["/", "//", ""]), st.lists(_SEGMENTS, max_size=4)
)


@settings(max_examples=examples(300))
@given(_PATHS, _PATHS)
def test_display_path_on_strings_answers_as_pathlib_does(path: str, workspace: str) -> None:
    as_path, root = Path(path), Path(workspace)
    expected = str(as_path.relative_to(root)) if is_within(as_path, root) and as_path != root else str(as_path)
    assert display_path(as_path, root) == expected


def test_one_check_s_memo_resolves_a_path_once_and_a_fresh_memo_sees_a_swapped_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a")
    memo: dict[str, tuple[str, ...]] = {}
    assert resolved_forms(link, memo) == [link, tmp_path / "a"]
    link.unlink()
    link.symlink_to(tmp_path / "b")
    # Within the one check, its steps see the path as it was resolved for it (the same answer every step).
    assert resolved_forms(link, memo) == [link, tmp_path / "a"]
    assert inside_any(tmp_path / "a" / "f", [link], memo)
    # The next check resolves afresh.
    assert resolved_forms(link, {}) == [link, tmp_path / "b"]
    assert not inside_any(tmp_path / "a" / "f", [link])


def test_real_path_answers_as_realpath_whatever_the_path_names(tmp_path: Path) -> None:
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "f.txt").write_text("f")
    (tmp_path / "link").symlink_to(tmp_path / "dir" / "sub")
    (tmp_path / "file-link").symlink_to("dir/f.txt")  # relative target
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x")
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    os.mkfifo(tmp_path / "fifo")  # opened to resolve it, it must not block
    names = [
        "dir/f.txt", "dir/sub/", "link", "link/..", "link/../f.txt", "file-link", "file-link/", "dir/f.txt/",
        "dangling", "dangling/more", "loop-a", "loop-a/x", "missing", "missing/../dir", "fifo", "dir//sub/./",
    ]  # fmt: skip
    for name in names:
        text = f"{tmp_path}/{name}"
        assert real_path(text) == os.path.realpath(text), name
    assert real_path(Path("/")) == "/" and real_path("") == os.path.realpath("")
    read_end, write_end = os.pipe()  # a pipe reached through /proc: not a path, so realpath's answer
    try:
        assert real_path(f"/proc/self/fd/{read_end}") == os.path.realpath(f"/proc/self/fd/{read_end}")
    finally:
        os.close(read_end)
        os.close(write_end)
