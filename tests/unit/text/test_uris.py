"""`file:` URIs to local paths: only files on this machine, percent-decoded; anything else is None."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.uris import file_uri_to_path


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///home/me/a.txt", "/home/me/a.txt"),
        ("file:///home/me/my%20notes.md", "/home/me/my notes.md"),
        ("file:///home/me/my notes.md", "/home/me/my notes.md"),  # unescaped, as some clients send it
        ("file:///tmp/caf%C3%A9/%E4%B8%AD.py", "/tmp/café/中.py"),
        ("file:///tmp/café/中.py", "/tmp/café/中.py"),
        ("file:///tmp/%F0%9F%98%80.txt", "/tmp/😀.txt"),
        ("file:///tmp/100%25%20sure%3F%23.txt", "/tmp/100% sure?#.txt"),  # escaped %, ? and # are the name's
        ("file:///tmp/a.txt?query#fragment", "/tmp/a.txt"),  # unescaped ? and # end the path
        ("file://localhost/etc/hosts", "/etc/hosts"),
        ("file://LocalHost/etc/hosts", "/etc/hosts"),
        ("FILE:///etc/hosts", "/etc/hosts"),  # schemes are case-insensitive
        ("file:/etc/hosts", "/etc/hosts"),  # RFC 8089's form without an authority
        ("file:///c%3A/Users/x.txt", "/c:/Users/x.txt"),  # no drive letters on POSIX: just a path
        ("file:///a/b\\c", "/a/b\\c"),  # a backslash is a file name character on POSIX
        ("file:///", "/"),
    ],
)
def test_local_file_uris_name_their_path(uri: str, path: str) -> None:
    assert file_uri_to_path(uri) == path


@pytest.mark.parametrize(
    "uri",
    [
        "file://server/share/a.txt",  # another machine
        "file://localhost:8080/a.txt",
        "file://me@localhost/a.txt",
        "file://%6Cocalhost/a.txt",
        "file://",
        "file://localhost",
        "file:relative/a.txt",
        "file:",
        "file:///tmp/a%00b",  # no file has a NUL in its name
        "untitled:Untitled-1",
        "vscode-notebook-cell:/home/me/nb.ipynb#W0sZmlsZQ%3D%3D",
        "http://localhost/a.txt",
        "https:///a.txt",
        "/home/me/a.txt",  # a path is not a URI
        "",
        "file%3A///a.txt",
    ],
)
def test_anything_but_a_local_file_is_none(uri: str) -> None:
    assert file_uri_to_path(uri) is None


@pytest.mark.parametrize("garbage", [None, 3, b"file:///a.txt", ["file:///a.txt"], {"uri": "file:///a"}])
def test_a_non_string_is_none(garbage: object) -> None:
    assert file_uri_to_path(garbage) is None


def test_a_name_that_is_not_utf8_opens_the_same_file(tmp_path: Path) -> None:
    name = b"latin1-\xe9.txt"  # a valid POSIX file name that is not UTF-8
    with open(os.path.join(os.fsencode(tmp_path), name), "w") as handle:
        handle.write("x")
    path = file_uri_to_path(tmp_path.as_uri() + "/latin1-%E9.txt")
    assert path is not None
    assert Path(path).read_text() == "x"


def test_an_editor_uri_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "dir with space" / "ü 😀 #1 %.txt"
    assert file_uri_to_path(path.as_uri()) == str(path)


@given(st.text())
def test_any_string_gives_none_or_an_absolute_path(uri: str) -> None:
    path = file_uri_to_path(uri)
    assert path is None or (path.startswith("/") and "\0" not in path)
