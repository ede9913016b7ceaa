"""toolgate/hooks/list|trust: a session's hooks for the panel, and the panel's "trust" button.

The session's permission engine holds the hooks (toolgate.permissions.hooks); trust is recorded in the user's
settings file, never the workspace's, and the engine reloads so a trusted hook runs from the next event on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.sidecar import protocol_hooks as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize
    from toolgate.permissions.hooks.review import HookListing
    from toolgate.runtime import Runtime


def _infos(listings: list[HookListing]) -> p.HooksListResult:
    return p.HooksListResult(
        hooks=[p.HookInfo.model_validate(h.model_dump(exclude={"digest"})) for h in listings],
    )


def hooks_handlers(runtime_of: Callable[[str], Runtime]) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The two methods, for the server's handler table (`runtime_of` raises the server's error for an unknown
    session)."""

    # The permission modules load with the first session, not before initialize is answered: imported here.
    async def listing(params: p.HooksListParams) -> p.HooksListResult:
        from toolgate.permissions.hooks.review import list_hooks

        engine = runtime_of(params.session_id).permissions
        engine.refresh()
        return _infos(list_hooks(engine.book))

    async def trust(params: p.HooksTrustParams) -> p.HooksListResult:
        from toolgate.permissions.hooks.review import list_hooks, select, trust_mutation
        from toolgate.permissions.settings import SettingsError, update_settings

        engine = runtime_of(params.session_id).permissions
        engine.refresh()
        listings = list_hooks(engine.book)
        chosen: list[HookListing] = []
        for wanted in params.ids:
            found = [h for h in select(listings, wanted) if h.state in ("waiting", "trusted")]
            if len(found) != 1:
                raise JsonRpcInvalidParams(
                    message=f"{wanted!r} names {'no' if not found else 'more than one'} workspace hook of this "
                    "session that can be trusted; list them again (toolgate/hooks/list) and use a full id"
                )
            chosen.extend(found)
        try:
            await anyio.to_thread.run_sync(
                update_settings, engine.book.files["user"], trust_mutation([h.digest for h in chosen])
            )
        except (SettingsError, ValueError) as exc:
            raise JsonRpcInvalidParams(
                message=f"the trust could not be recorded: {exc}; that file was left untouched"
            ) from None
        engine.reload()
        return _infos(list_hooks(engine.book))

    return {p.HOOKS_LIST: listing, p.HOOKS_TRUST: trust}
