"""Secrets a fetched URL must not carry out: secret environment variables, and what was read from secret files.

A model that read `.env` (or a file a rule protects) can be talked into putting a token in a query string;
the URL check in `permissions.network.leaked_secret` looks for these values in every part of a URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from toolgate.core.child_env import is_secret_name, secret_values
from toolgate.core.context import ToolContext
from toolgate.core.paths import display_path
from toolgate.core.permission import ReadGuard

MIN_FILE_SECRET_CHARS = 16
# Files that hold credentials by their nature, whatever the rules say about them.
SECRET_FILE_PATTERNS = (
    ".env", ".env.*", "*.env", ".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials",
    "credentials", "credentials.*", "*credentials*.json", "secrets.*", "*.secret", "*.secrets", "*.pem", "*.key",
    "*.p12", "*.pfx", "*.kdbx", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.tfvars", "auth.json",
)  # fmt: skip
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(.*?)\s*$")
_QUOTED = re.compile(r"""["']([^"'\n]{16,})["']""")
_NAME_ONLY = re.compile(r"[A-Z0-9_]+")


def is_secret_file(path: Path) -> bool:
    name = path.name.lower()
    return any(fnmatchcase(name, pattern) for pattern in SECRET_FILE_PATTERNS)


def secret_strings(text: str) -> list[str]:
    """The strings of at least 16 characters in a secret file that could be a secret: assigned values
    (`KEY=value`, `key: value`), quoted strings (JSON), and lines without spaces (PEM bodies, bare tokens)."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        assigned = _ASSIGNMENT.match(stripped)
        if assigned:
            found[assigned.group(1).strip().strip("\"'")] = None
        elif " " not in stripped:
            found[stripped] = None
        for quoted in _QUOTED.findall(stripped):
            found[quoted] = None
    return [s for s in found if len(s) >= MIN_FILE_SECRET_CHARS and not _NAME_ONLY.fullmatch(s)]


def env_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(why, value) for each scrubbed secret variable's value."""
    values = set(secret_values(environ))
    return [
        (f"the value of the secret environment variable {name}", value)
        for name, value in environ.items()
        if is_secret_name(name) and value in values
    ]


def read_secrets(ctx: ToolContext) -> list[tuple[str, str]]:
    """(why, value) for each secret-looking string this session has read from a secret or rule-protected file."""
    policy = ctx.session.policy
    guard = policy if isinstance(policy, ReadGuard) and policy.guards_reads() else None
    out: list[tuple[str, str]] = []
    for key, record in ctx.file_state.records():
        path = Path(key)
        rule = guard.read_denied(path) if guard is not None else None
        if not is_secret_file(path) and rule is None:
            continue
        shown = display_path(path, ctx.workspace)
        why = f"a string read from {shown} ({f'protected by {rule}' if rule else 'a file that holds secrets'})"
        out.extend((why, value) for value in secret_strings(record.content))
    return out
