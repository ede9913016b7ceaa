"""Every configured hook with its trust state, and recording or dropping trust in the user settings file.

`toolgate hooks list` and the panel show `list_hooks`; `toolgate hooks trust` / `revoke` (and the panel's button)
apply `trust_mutation` / `revoke_mutation` to the user's settings file through `settings.update_settings` (locked,
validated, atomic). The workspace's own files are only ever read: a repository cannot review its own hooks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolgate.permissions.hooks.config import configured_hooks
from toolgate.permissions.settings import Mutation
from toolgate.permissions.sources import RuleBook

TrustState = Literal["own", "trusted", "waiting", "workspace_not_trusted"]
TRUST_WORDS: dict[TrustState, str] = {
    "own": "yes (your own settings)",
    "trusted": "yes (reviewed)",
    "waiting": "no: waiting for review",
    "workspace_not_trusted": "no: the workspace is not trusted",
}


class HookListing(BaseModel):
    """One configured hook, as `toolgate hooks list --json` prints it and the panel shows it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    digest: str
    source: str
    path: str | None
    event: str
    matcher: str
    command: str
    state: TrustState

    @property
    def runs(self) -> bool:
        return self.state in ("own", "trusted")


def list_hooks(book: RuleBook) -> list[HookListing]:
    """Every hook the settings files configure, the untrusted workspace's included (which never run)."""
    listings: list[HookListing] = []
    for configured, workspace_trusted in ((book.hooks, True), (book.untrusted_hooks, False)):
        hooks, _problems = configured_hooks(configured)  # an unusable matcher is a problem reported elsewhere
        for hook in hooks:
            state: TrustState = "own"
            if not workspace_trusted:
                state = "workspace_not_trusted"
            elif hook.from_workspace:
                state = "trusted" if hook.digest in book.trusted_hooks else "waiting"
            source = hook.source
            listings.append(
                HookListing(
                    id=hook.id,
                    digest=hook.digest,
                    source=source.name,
                    path=str(source.path) if source.path else None,
                    event=hook.event,
                    matcher=hook.matcher,
                    command=hook.command.command,
                    state=state,
                )
            )
    return listings


def select(listings: Sequence[HookListing], wanted: str) -> list[HookListing]:
    """The hooks whose id (or digest) starts with `wanted`; the same hook configured twice counts once."""
    prefix = wanted.strip().lower()
    found = [h for h in listings if prefix and h.digest.startswith(prefix)]
    return list({h.digest: h for h in found}.values())


def _trusted_list(raw: dict[str, Any]) -> list[Any]:
    listed = raw.setdefault("trustedHooks", [])
    if not isinstance(listed, list):
        raise ValueError("trustedHooks must be a list of hook digests")
    return listed


def trust_mutation(digests: Collection[str]) -> Mutation:
    """Add `digests` to the user settings' trustedHooks (no change for those already there)."""

    def mutate(raw: dict[str, Any]) -> bool:
        listed = _trusted_list(raw)
        new = [d for d in dict.fromkeys(digests) if d not in listed]
        listed.extend(new)
        return bool(new)

    return mutate


def revoke_mutation(prefix: str, dropped: list[str]) -> Mutation:
    """Drop every trustedHooks digest starting with `prefix` (a hook's id); `dropped` receives what went."""

    def mutate(raw: dict[str, Any]) -> bool:
        listed = raw.get("trustedHooks")
        if not isinstance(listed, list):
            return False
        gone = [d for d in listed if isinstance(d, str) and prefix and d.startswith(prefix.strip().lower())]
        listed[:] = [d for d in listed if d not in gone]
        dropped.extend(gone)
        return bool(gone)

    return mutate
