"""`toolgate trust [FOLDER] [--remove | --list]`: which folders' own settings files may widen permissions."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from toolgate.cli.errors import UsageError
from toolgate.permissions.settings import SettingsError, read_settings, update_settings
from toolgate.permissions.sources import settings_paths
from toolgate.permissions.trust import trust_mutation, untrust_mutation


def trust_command(args: argparse.Namespace) -> int:
    user_file = settings_paths(Path.cwd(), Path.home(), os.environ)["user"]
    try:
        if args.list:
            settings = read_settings(user_file)
            trusted = settings.trustedWorkspaces if settings is not None else []
            print("\n".join(trusted) if trusted else f"No folder is trusted yet ({user_file} lists none).")
            return 0
        folder = (args.folder or Path.cwd()).expanduser().absolute()
        folder = Path(os.path.normpath(folder))
        if args.remove:
            changed = update_settings(user_file, untrust_mutation(folder))
            print(
                f"{folder} is no longer trusted; its own settings files only restrict now."
                if changed
                else f"{folder} was not in the trusted list of {user_file}; nothing changed. (A trusted parent "
                "folder still trusts it: see `toolgate trust --list`.)"
            )
            return 0
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
        changed = update_settings(user_file, trust_mutation(folder.resolve()))
    except SettingsError as exc:
        raise UsageError(f"{exc}; fix that file first, it was left untouched") from None
    except ValueError as exc:
        raise UsageError(f"{user_file}: {exc}") from None
    print(
        f"Trusted {folder.resolve()} and every folder below it: their .toolgate settings files now apply in full "
        f"(allow rules, hooks, defaultMode, additionalDirectories). Recorded in {user_file}. Each of their hooks "
        "also runs only once you reviewed its command: see `toolgate hooks list`."
        if changed
        else f"{folder.resolve()} was already trusted."
    )
    return 0
