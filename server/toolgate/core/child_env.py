"""Which environment variables hold secrets (the scrub list), and their values.

Minimal version written for WebFetch's exfiltration check; the hardening work owns this module and its
fuller version (which also builds every child process environment) replaces this one.
"""

from __future__ import annotations

from collections.abc import Mapping

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS", "_SECRET_KEY", "_ACCESS_KEY")
_SECRET_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN",
        "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "PYPI_TOKEN", "HF_TOKEN", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
    }
)  # fmt: skip
# Shorter values are too common to be told apart from ordinary text (`1`, `true`).
_MIN_VALUE_CHARS = 8


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in _SECRET_NAMES or upper.endswith(_SECRET_SUFFIXES)


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret variables in `environ` that are long enough to recognise elsewhere."""
    return [value for name, value in environ.items() if is_secret_name(name) and len(value) >= _MIN_VALUE_CHARS]
