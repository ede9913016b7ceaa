"""Whether a workspace's own settings files may widen what toolgate does without asking.

A repository can carry `.toolgate/settings.json`, and even a committed `settings.local.json`. Their deny and ask
rules (and a defaultMode of default or plan) only make toolgate more careful, so they always apply. The rest
widens what runs without a person saying yes: allow rules, hooks (commands run around every tool call), a
defaultMode of acceptEdits or bypassPermissions, and additionalDirectories. Those apply only in a trusted
workspace, or cloning a repository and starting an agent in it would hand the repository's author a shell.

A workspace is trusted when the user says so:
- in VS Code, by Workspace Trust: the extension runs only in trusted windows, and starts the sidecar with
  `--trust-workspace`;
- on the command line, with `--trust-workspace` for one run, or for good with `toolgate trust DIR`, which adds the
  folder to `trustedWorkspaces` in the user settings file (a trusted folder trusts every folder below it).
A repository cannot trust itself: `trustedWorkspaces` is read from the user settings file only.

Hooks need one more yes: in a trusted workspace, each of its hooks runs only while its content (event, matcher,
command) is trusted too, so a pulled change to a command waits for review (permissions/hooks/config.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolgate.core.paths import expand_path, is_within, resolved_forms
from toolgate.core.permission import mode_traits
from toolgate.permissions.settings import Mutation, Settings

TRUST_HINT = (
    "If you trust this repository's settings, run `toolgate trust {workspace}` (or pass --trust-workspace for one "
    "run; in VS Code, trust the folder)"
)


def is_trusted(workspace: Path, trusted: Sequence[str], home: Path) -> bool:
    """Whether `workspace` is one of the `trusted` folders or inside one (symlinks resolved on both sides)."""
    forms = resolved_forms(workspace)
    for raw in trusted:
        if not raw.startswith(("/", "~")):
            continue  # a relative entry would mean a different folder from every directory: never trusted
        try:
            folder = expand_path(raw, Path("/"), home)
        except ValueError:
            continue
        if any(is_within(form, base) for form in forms for base in resolved_forms(folder)):
            return True
    return False


def widening_parts(settings: Settings) -> list[str]:
    """What in `settings` would widen permissions, in words (empty: the file only restricts)."""
    permissions, parts = settings.permissions, []
    if permissions.allow:
        parts.append(_count(len(permissions.allow), "allow rule"))
    hooks = sum(len(m.hooks) for matchers in settings.hooks.by_event().values() for m in matchers)
    if hooks:
        parts.append(_count(hooks, "hook"))
    if permissions.defaultMode is not None and mode_traits(permissions.defaultMode).widening:
        parts.append(f"defaultMode {permissions.defaultMode.value}")
    if permissions.additionalDirectories:
        parts.append(_count(len(permissions.additionalDirectories), "additional directory", "additional directories"))
    return parts


def untrusted_message(workspace: Path, parts: Sequence[str]) -> str:
    return (
        f"ignored its {_join(parts)}, because this workspace is not trusted (the file's deny and ask rules still "
        f"apply). {TRUST_HINT.format(workspace=workspace)}."
    )


def trust_mutation(folder: Path) -> Mutation:
    """Add `folder` to the user settings' trustedWorkspaces (no change when it is already there)."""

    def mutate(raw: dict[str, Any]) -> bool:
        listed = raw.setdefault("trustedWorkspaces", [])
        if not isinstance(listed, list):
            raise ValueError("trustedWorkspaces must be a list of folders")
        if str(folder) in listed:
            return False
        listed.append(str(folder))
        return True

    return mutate


def untrust_mutation(folder: Path) -> Mutation:
    def mutate(raw: dict[str, Any]) -> bool:
        listed = raw.get("trustedWorkspaces")
        if not isinstance(listed, list) or str(folder) not in listed:
            return False
        listed.remove(str(folder))
        return True

    return mutate


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
