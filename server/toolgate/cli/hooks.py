"""`toolgate hooks list | trust [ID... | --all] | revoke ID`: which hooks run, and reviewing the workspace's.

A hook from the workspace's own settings files runs only while its content (event, matcher, command) is trusted;
trust is recorded as the hook's digest in `trustedHooks` of the user settings file, which is the only file these
commands write.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from toolgate.cli.errors import UsageError
from toolgate.permissions.hooks.review import (
    TRUST_WORDS,
    HookListing,
    list_hooks,
    revoke_mutation,
    select,
    trust_mutation,
)
from toolgate.permissions.settings import SettingsError, update_settings
from toolgate.permissions.sources import load_rule_book, settings_paths


def hooks_command(args: argparse.Namespace) -> int:
    workspace = (args.workspace or Path.cwd()).expanduser().absolute()
    home = Path.home()
    user_file = settings_paths(workspace, home, os.environ)["user"]
    book = load_rule_book(
        workspace,
        home=home,
        environ=os.environ,
        flag_files=args.settings,
        trust_workspace=True if args.trust_workspace else None,
    )
    listings = list_hooks(book)
    try:
        if args.action == "list":
            return _list(listings, args.json)
        if args.action == "trust":
            return _trust(listings, args.ids, args.all, user_file, book.workspace_trusted, workspace)
        return _revoke(listings, args.id, user_file)
    except SettingsError as exc:
        raise UsageError(f"{exc}; fix that file first, it was left untouched") from None
    except ValueError as exc:
        raise UsageError(f"{user_file}: {exc}") from None


def _describe(hook: HookListing) -> str:
    matcher = f" (matcher {hook.matcher!r})" if hook.matcher not in ("", "*") else ""
    where = f"{hook.source} {hook.path}" if hook.path else hook.source
    return (
        f"{hook.id}  {hook.event}{matcher}  trusted: {TRUST_WORDS[hook.state]}\n"
        f"    command: {hook.command}\n"
        f"    from:    {where}"
    )


def _list(listings: list[HookListing], as_json: bool) -> int:
    if as_json:
        print(json.dumps([h.model_dump(mode="json") for h in listings], indent=2, ensure_ascii=False))
        return 0
    if not listings:
        print("No hooks are configured (in your user settings or this workspace's .toolgate settings files).")
        return 0
    print("\n".join(_describe(h) for h in listings))
    waiting = [h for h in listings if h.state == "waiting"]
    if waiting:
        print(
            f"\n{len(waiting)} workspace hook{'s' if len(waiting) != 1 else ''} wait{'' if len(waiting) != 1 else 's'} "
            "for review and do not run. Read each command, then `toolgate hooks trust ID` (or --all)."
        )
    return 0


def _chosen(listings: list[HookListing], wanted: str) -> HookListing:
    found = select(listings, wanted)
    if not found:
        raise UsageError(f"no configured hook has the id {wanted!r}; `toolgate hooks list` shows every hook's id")
    if len(found) > 1:
        ids = ", ".join(h.id for h in found)
        raise UsageError(f"{wanted!r} names several hooks ({ids}); give more of the id")
    return found[0]


def _trust(
    listings: list[HookListing],
    ids: list[str],
    every: bool,
    user_file: Path,
    workspace_trusted: bool,
    workspace: Path,
) -> int:
    if every == bool(ids):
        raise UsageError("name the hooks to trust by id, or pass --all for every hook waiting for review")
    if every:
        chosen = [h for h in listings if h.state in ("waiting", "workspace_not_trusted")]
        if not chosen:
            print("No workspace hook waits for review.")
            return 0
    else:
        chosen = [_chosen(listings, wanted) for wanted in ids]
    own = [h for h in chosen if h.state == "own"]
    if own:
        raise UsageError(f"{own[0].id} comes from your own settings, which always run; there is nothing to trust")
    update_settings(user_file, trust_mutation([h.digest for h in chosen]))
    for hook in chosen:
        print(f"Trusted {hook.id}: the {hook.event} hook `{hook.command}` from {hook.path or hook.source}.")
    print(f"Recorded in {user_file}. A later change to any of these commands needs a new review.")
    if not workspace_trusted:
        print(
            f"Note: {workspace} itself is not trusted, so its hooks still do not run; `toolgate trust {workspace}` "
            "lets them."
        )
    return 0


def _revoke(listings: list[HookListing], wanted: str, user_file: Path) -> int:
    dropped: list[str] = []
    changed = update_settings(user_file, revoke_mutation(wanted, dropped))
    if not changed:
        raise UsageError(f"no trusted hook has the id {wanted!r} in {user_file}; `toolgate hooks list` shows them")
    commands = {h.digest: h.command for h in listings}
    for digest in dropped:
        what = f" (`{commands[digest]}`)" if digest in commands else " (no longer configured)"
        print(f"Revoked {digest[:12]}{what}: it waits for review again before it runs.")
    return 0
