"""The local path a `file:` URI names (RFC 8089), for the editor's documents."""

from __future__ import annotations

from urllib.parse import unquote

_LOCAL_HOSTS = ("", "localhost")


def file_uri_to_path(uri: object) -> str | None:
    """The absolute path on this machine that `uri` names, or None when it names none.

    `file:///p` and `file://localhost/p` (and RFC 8089's `file:/p`) name the local path `/p`, percent-decoded:
    `%20` is a space, `%C3%A9` is `é`, and bytes that are not UTF-8 decode the way the OS's own file names do
    (surrogate escapes), so the path opens the same file. A query or fragment is not part of the path (an
    editor escapes a `?` or `#` in a file name as `%3F`, `%23`). None for any other host (a share on another
    machine), any other scheme (`untitled:`, `vscode-notebook-cell:`, `http:`), a relative path, a NUL, or
    anything that is not a string: we only protect files on this machine, and no file has such a name.
    Windows drive letters are not special: the sidecar runs on POSIX, where `/C:/x` is just a path.
    """
    if not isinstance(uri, str):
        return None
    scheme, colon, rest = uri.partition(":")
    if not colon or scheme.lower() != "file":  # schemes are case-insensitive (RFC 3986 §3.1)
        return None
    rest = rest.partition("#")[0].partition("?")[0]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority.lower() not in _LOCAL_HOSTS:
            return None
        rest = slash + path
    if not rest.startswith("/"):
        return None
    path = unquote(rest, encoding="utf-8", errors="surrogateescape")
    if "\0" in path:
        return None
    return path
