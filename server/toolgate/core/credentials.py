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


def credential_reason(path: PurePath | str) -> str | None:
    """Why `path` (as given: resolve symlinks first where it matters) holds credentials, or None."""
    text = str(path)
    if text.isascii() and _NEEDLES.search(text.lower()) is None:
        return None
    return reason_by_parts(path)


def reason_by_parts(path: PurePath | str) -> str | None:
    """`credential_reason` without its quick test: every part of the path folded and compared with the rules."""
    parts = [fold(p) for p in PurePath(path).parts if p not in ("/", "\\")]
    if not parts:
        return None
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
