"""The environment every child process starts from: the sidecar's own, with secrets taken out.

Bash commands (foreground and background), hooks, the watchdog and (later) MCP stdio servers all get their
environment from `child_environment`, so an API key in the sidecar's environment (or handed over by the
extension, which stays in memory) never reaches a command the model can run. A user may hand a named
variable to commands on purpose with `env.passThrough` in their own settings file (never a workspace file:
a cloned repository must not be able to ask for the user's keys).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping

from toolgate.core.deps import Dep

# Names scrubbed whatever their spelling elsewhere: the providers' keys and well-known cloud and forge names.
SECRET_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY",
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
        "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY", "GEMINI_API_KEY", "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
        "AZURE_CLIENT_SECRET", "AZURE_OPENAI_API_KEY", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING",
        "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "NPM_TOKEN", "NODE_AUTH_TOKEN", "PYPI_TOKEN", "TWINE_PASSWORD",
        "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG", "SLACK_BOT_TOKEN", "STRIPE_SECRET_KEY", "DATABASE_URL",
        "VAULT_TOKEN", "CODECOV_TOKEN", "SENTRY_AUTH_TOKEN", "CARGO_REGISTRY_TOKEN",
    }
)  # fmt: skip
# Name shapes that hold secrets: anything ending in one of these, and Azure's *_KEY names.
_SECRET_SHAPE = re.compile(
    r".*(_API_KEY|_APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_PASSWORD|_PASSWD|_CREDENTIALS|_PRIVATE_KEY|_ACCESS_KEY)"
    r"|AZURE_.*_KEY|.*_AUTH"
)
# Names that look like secrets by shape but are not (they hold no value worth stealing).
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK"})

# env.passThrough from the user's settings file; the runtime overrides it (default: nothing passes through).
PASS_THROUGH: Dep[tuple[str, ...]] = Dep("env_pass_through", lambda _r: (), scope="call")


# Pure, and asked for every variable of every command's environment: the same few dozen names each time.
@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable called `name` is treated as holding a secret (case-insensitive)."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    return upper in SECRET_NAMES or _SECRET_SHAPE.fullmatch(upper) is not None


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret variables in `environ` (long enough to be worth looking for in text)."""
    return [value for name, value in environ.items() if is_secret_name(name) and len(value) >= 8]


# (a copy of os.environ's raw table, its secret values): every tool result is redacted with this process's secrets,
# and reading os.environ item by item (decoding each) cost more than the rest of the redaction.
_own_secrets: tuple[dict[bytes, bytes], list[str]] | None = None


def own_secret_values() -> list[str]:
    """`secret_values(os.environ)`, computed again only when the environment changed since the last call."""
    global _own_secrets
    raw = getattr(os.environ, "_data", None)  # CPython's table behind os.environ; compared in C, at once
    if not isinstance(raw, dict):
        return secret_values(os.environ)
    cached = _own_secrets
    if cached is not None and cached[0] == raw:
        return cached[1]
    values = secret_values(os.environ)
    _own_secrets = (dict(raw), values)
    return values


# The last scrubbed copy of this process's environment, with what it was made from (a copy of os.environ's raw
# table, the pass-through names, the extra variables): every Bash command asks for the same one, and scrubbing
# decodes and checks every variable each time.
_own_env: tuple[dict[bytes, bytes], tuple[str, ...], tuple[tuple[str, str], ...], dict[str, str]] | None = None


def child_environment(
    base: Mapping[str, str] | None = None, *, pass_through: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A copy of `base` (default: this process's environment) without its secrets, except those named in
    `pass_through`, plus `extra` (which the caller sets on purpose and is never scrubbed).

    Without `base`, the scrubbed copy is made again only when this process's environment (or the arguments)
    changed since the last call; the caller always gets a dict of its own."""
    global _own_env
    raw = getattr(os.environ, "_data", None) if base is None else None
    if not isinstance(raw, dict):
        return _scrubbed(os.environ if base is None else base, pass_through, extra)
    names, added = tuple(pass_through), tuple((extra or {}).items())
    cached = _own_env
    if cached is not None and cached[1] == names and cached[2] == added and cached[0] == raw:
        return dict(cached[3])
    env = _scrubbed(os.environ, names, extra)
    _own_env = (dict(raw), names, added, env)
    return dict(env)


def _scrubbed(
    source: Mapping[str, str], pass_through: Iterable[str], extra: Mapping[str, str] | None
) -> dict[str, str]:
    keep = {name.upper() for name in pass_through}
    env = {name: value for name, value in source.items() if name.upper() in keep or not is_secret_name(name)}
    env.update(extra or {})
    return env
