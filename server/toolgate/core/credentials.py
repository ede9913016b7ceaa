"""Files that hold credentials: reading one is asked about in every mode, and searches leave them out.

Matched by name wherever they are (a copy of `~/.aws` inside a repository holds the same keys), compared
case-insensitively (macOS and Windows file systems ignore case). Pure apart from the caller resolving
symlinks (`permissions/safety.py` checks every resolved form).

Choices: `~/.ssh/known_hosts` and public keys (`*.pub`) hold no secret and stay readable; every other file in
`.ssh/` asks. `.env`-style files ask, except the templates projects check in (`.env.example`, `.env.sample`,
`.env.template`, `.env.dist`).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePath

from toolgate.text.shell_patterns import has_pattern, overlaps, tokens

# Directories (as trailing parts of a path, anywhere) whose files are credentials.
CREDENTIAL_DIRS: tuple[tuple[str, ...], ...] = (
    (".ssh",), (".aws",), (".azure",), (".gnupg",), (".password-store",), (".config", "gcloud"),
    (".config", "gh"), (".config", "hub"), (".local", "share", "keyrings"), ("library", "keychains"),
    (".docker", "config.json"), (".kube", "config"), (".config", "containers", "auth.json"),
)  # fmt: skip
CREDENTIAL_FILES = frozenset(
    {".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".env", "credentials.json"}
)
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"})
_SSH_PUBLIC = frozenset({"known_hosts", "known_hosts.old", "config"})
# The credential file names as patterns, for a word that is itself a pattern (`.en[v]`, `.env.*`).
_NAME_PATTERNS = (*sorted(CREDENTIAL_FILES), ".env.?*")


# A word every credential path contains, for each rule above (the longest part of a directory rule). Searches
# check every file they list, and almost none is a credential: one regex pass over an ASCII path that finds none
# of these proves it (for ASCII, folding is lowercasing), and only the rest pay for the part-by-part check.
_NEEDLES = re.compile(
    "|".join(re.escape(w) for w in sorted({max(d, key=len) for d in CREDENTIAL_DIRS} | CREDENTIAL_FILES | {".env"}))
)


def fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def _env_file(name: str) -> bool:
    return name == ".env" or (name.startswith(".env.") and name not in _ENV_TEMPLATES)


def credential_reason(path: PurePath | str, *, dotglob: bool = False) -> str | None:
    """Why `path` (as given: resolve symlinks first where it matters) holds credentials, or None.

    A path with bash pattern characters (`~/.ss?/id_*`) counts when any name it could expand to would:
    bash expands it before the program reads, so a pattern that could match a credential file names it."""
    text = str(path)
    if text.isascii() and not has_pattern(text) and _NEEDLES.search(text.lower()) is None:
        return None
    return reason_by_parts(path, dotglob=dotglob)


def none_among(paths: list[bytes]) -> bool:
    """True when `credential_reason` is None for every one of these paths, proven by its quick test run once over
    them all (a search lists thousands); False says nothing: ask `credential_reason` path by path."""
    joined = b"\n".join(paths)  # no needle holds a newline, so none is found across two paths
    if not joined.isascii() or any(magic in joined for magic in (b"*", b"?", b"[")):
        return False
    return _NEEDLES.search(joined.decode("ascii").lower()) is None


def reason_by_parts(path: PurePath | str, *, dotglob: bool = False) -> str | None:
    """`credential_reason` without its quick test: every part of the path folded and compared with the rules."""
    parts = [fold(p) for p in PurePath(path).parts if p not in ("/", "\\")]
    if not parts:
        return None
    if any(has_pattern(p) for p in parts):
        return _pattern_reason(str(path), parts, dotglob)
    name = parts[-1]
    if _env_file(name):
        return f"{path} is an environment file ({name}), which usually holds secrets"
    if name in CREDENTIAL_FILES:
        return f"{path} is a {name} file, which holds credentials"
    for index in range(len(parts)):
        for suffix in CREDENTIAL_DIRS:
            if tuple(parts[index : index + len(suffix)]) != suffix:
                continue
            if suffix == (".ssh",) and (name in _SSH_PUBLIC or name.endswith(".pub")) and index == len(parts) - 2:
                return None  # host keys, the client's config and public keys are not secrets
            return f"{path} is inside {'/'.join(suffix)}, which holds credentials"
    return None


def _segment_could_be(segment: str, name: str, dotglob: bool) -> bool:
    if segment == "**":
        return dotglob or not name.startswith(".")  # globstar crosses directories, but not hidden ones
    return overlaps(segment, name, dotglob=dotglob) if has_pattern(segment) else segment == name


def _only_public_ssh(segment: str) -> bool:
    """Does this last segment below .ssh name only public files (`*.pub`, `known_hosts`)?"""
    if not has_pattern(segment):
        return segment in _SSH_PUBLIC or segment.endswith(".pub")
    return segment.endswith(".pub") and not has_pattern(segment[-4:])


def _pattern_reason(shown: str, parts: list[str], dotglob: bool) -> str | None:
    name = parts[-1]
    # A segment of wildcards alone (`src/*`) reads a whole directory's files, as broad as a recursive read of it
    # (which the tree rules judge); a credential name is only "named" by a pattern that spells part of it.
    spelled = any(not token.negated for token in tokens(name)) if has_pattern(name) else True
    for candidate in (".env", *_NAME_PATTERNS):
        if (spelled or candidate.startswith(".")) and _segment_could_be(name, candidate, dotglob):
            return f"{shown} is a pattern that can match {candidate.replace('.?*', '.*')}, a file that holds secrets"
    for index in range(len(parts)):
        for suffix in CREDENTIAL_DIRS:
            run = parts[index : index + len(suffix)]
            if len(run) < len(suffix):
                continue
            if not all(_segment_could_be(p, d, dotglob) for p, d in zip(run, suffix, strict=True)):
                continue
            below = parts[index + len(suffix) :]
            if suffix == (".ssh",) and len(below) == 1 and _only_public_ssh(below[0]):
                continue
            return f"{shown} is a pattern that can reach {'/'.join(suffix)}, which holds credentials"
    if dotglob and "**" in parts:
        return f"{shown} crosses every directory below it, hidden ones too, and so can reach credential files"
    return None
