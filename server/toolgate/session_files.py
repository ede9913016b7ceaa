"""SessionFiles: where sessions live on disk, shared by the sidecar and the headless CLI.

    <root>/sessions/<sessionId>/meta.json          SessionMeta (this module)
    <root>/sessions/<sessionId>/transcript.jsonl   the conversation (toolgate.agent.transcript)
    <root>/sessions/<sessionId>/outputs/           the session's output store (build_runtime(data_dir=...))

The root is the editor's storage directory when it gives one, else `$XDG_DATA_HOME/toolgate`
(default `~/.local/share/toolgate`). Nothing secret is ever written here: no API keys.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.core.atomic_file import write_file_atomically
from toolgate.core.permission import PermissionMode

log = logging.getLogger("toolgate.sessions")

META_FILE = "meta.json"
TRANSCRIPT_FILE = "transcript.jsonl"
OUTPUTS_DIR = "outputs"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def default_data_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or ""
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "toolgate"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SessionMeta(BaseModel):
    # Unknown keys are kept and written back: the sidecar and the CLI may be of different versions.
    model_config = ConfigDict(extra="allow", defer_build=True)

    id: str
    workspace: str
    mode: PermissionMode = PermissionMode.DEFAULT
    title: str = ""
    created: dt.datetime = Field(default_factory=_now)
    updated: dt.datetime = Field(default_factory=_now)
    # The sidecar's diff-review setting: review every edit, or only edits that need approval.
    review_edits: Literal["when_asking", "always", "after"] = "when_asking"


class SessionNotFound(LookupError):
    pass


class SessionError(ValueError):
    """A session request that cannot be served as asked (unknown id, missing workspace, ...). Defined here, with
    the files, so that catching it costs no import of the session machinery (every sidecar request catches it)."""


class SessionFiles:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_data_root()

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    def session_dir(self, session_id: str) -> Path:
        if not _ID.match(session_id):
            raise ValueError(
                f"{session_id!r} is not a session id (letters, digits, '_', '-' and '.', at most 128 characters)"
            )
        return self.sessions_dir / session_id

    def transcript_path(self, session_id: str) -> Path:
        return self.session_dir(session_id) / TRANSCRIPT_FILE

    def exists(self, session_id: str) -> bool:
        return (self.session_dir(session_id) / META_FILE).is_file()

    def create(
        self, workspace: Path, mode: PermissionMode = PermissionMode.DEFAULT, *, session_id: str | None = None
    ) -> SessionMeta:
        meta = SessionMeta(id=session_id or uuid.uuid4().hex, workspace=str(workspace), mode=mode)
        directory = self.session_dir(meta.id)
        if (directory / META_FILE).exists():
            raise FileExistsError(f"a session {meta.id} already exists in {self.sessions_dir}")
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.save(meta)
        return meta

    def save(self, meta: SessionMeta) -> None:
        """Write meta.json atomically and durably (core.atomic_file), so a crash never leaves half a file."""
        directory = self.session_dir(meta.id)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        # 0o600 as before: the directory is private to the user, and so is what describes a session in it.
        data = (meta.model_dump_json(indent=2) + "\n").encode()
        write_file_atomically(directory / META_FILE, data, new_file_mode=0o600)

    def touch(self, session_id: str, *, title: str | None = None) -> SessionMeta:
        """Mark the session as just used (and give it `title` if it has none). Re-reads meta.json first, so
        what another writer (the sidecar) put there is kept."""
        meta = self.load(session_id)
        meta.updated = _now()
        if title is not None and not meta.title:
            meta.title = title
        self.save(meta)
        return meta

    def load(self, session_id: str) -> SessionMeta:
        path = self.session_dir(session_id) / META_FILE
        try:
            return SessionMeta.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise SessionNotFound(f"there is no session {session_id} in {self.sessions_dir}") from None

    def list(self) -> list[SessionMeta]:
        """Every readable session, newest first. A broken meta.json is reported in the log and left alone."""
        found: list[SessionMeta] = []
        if not self.sessions_dir.is_dir():
            return found
        for entry in self.sessions_dir.iterdir():
            path = entry / META_FILE
            if not _ID.match(entry.name) or not path.is_file():
                continue
            try:
                found.append(SessionMeta.model_validate_json(path.read_bytes()))
            except (OSError, ValidationError) as exc:
                log.warning("skipping session %s: its %s cannot be read (%s)", entry.name, META_FILE, exc)
        return sorted(found, key=lambda m: m.updated, reverse=True)

    def delete(self, session_id: str) -> None:
        directory = self.session_dir(session_id)
        if not directory.is_dir():
            raise SessionNotFound(f"there is no session {session_id} in {self.sessions_dir}")
        shutil.rmtree(directory)
