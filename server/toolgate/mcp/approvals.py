"""Which MCP servers the person approved, and the tool list each was pinned with.

Stored in the data directory (`<data>/mcp/approvals.json`, not in a settings file a repository could carry):

    {"servers": {"<key>": {"config": "<sha256 of the server's settings>",
                           "tools": "<sha256 of the pinned tool list>" | null, "snapshot": {...} | null,
                           "pending": {...} | null}}}

Approval is of the settings (command, args, env, URL); the first start after it pins the tool list. A later
list that differs is recorded as `pending` and hides the tools until `approve` accepts it.

The editor and the CLI use one store: the data root's (`toolgate mcp approve` without `--data-dir`, and the
sidecar whatever storage directory the editor gives it for its sessions), so a server approved in the panel
is approved for `toolgate mcp list` and the reverse. Editors before that kept theirs in their storage
directory; `adopt` moves such a file's approvals into the store once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.core.atomic_file import write_file_atomically
from toolgate.mcp.config import ConfiguredServer
from toolgate.mcp.pinning import ToolSnapshot, snapshot_hash

log = logging.getLogger("toolgate.mcp")

APPROVALS_FILE = "approvals.json"
ADOPTED_SUFFIX = ".adopted"  # a file whose approvals were moved into the store keeps its bytes under this name


class ServerApproval(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    config: str
    tools: str | None = None
    snapshot: ToolSnapshot | None = None
    pending: ToolSnapshot | None = None


class ApprovalFile(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    servers: dict[str, ServerApproval] = Field(default_factory=dict)


class ApprovalStore:
    def __init__(self, directory: Path) -> None:
        self.path = directory / APPROVALS_FILE

    def load(self) -> ApprovalFile:
        try:
            return ApprovalFile.model_validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return ApprovalFile()
        except (OSError, ValidationError) as exc:
            # Unreadable approvals approve nothing (fail closed); the file is left for the person to look at.
            raise ApprovalError(
                f"{self.path} cannot be used ({exc.__class__.__name__}); no MCP server counts as approved until it "
                "is fixed or removed"
            ) from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[ApprovalFile]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.parent / ".approvals.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self.load()
            yield data
            text = json.dumps(data.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
            write_file_atomically(self.path, text.encode())

    def adopt(self, other: ApprovalStore) -> int:
        """Move another store's approvals (an editor's storage directory's, from before the store was shared)
        into this one, and rename its file to `approvals.json.adopted` so that this happens once. An approval
        this store already has for the same server stays as it is. How many were added; 0 when the other store
        has no file. A file that cannot be read is left where it is, and none of it counts (logged)."""
        if not other.path.exists() or other.path.resolve() == self.path.resolve():
            return 0
        try:
            theirs = other.load()
        except ApprovalError as exc:
            log.warning("MCP approvals not moved into %s: %s", self.path, exc)
            return 0
        with self._locked() as data:
            added = [key for key in theirs.servers if key not in data.servers]
            for key in added:
                data.servers[key] = theirs.servers[key]
        # Renamed only once they are written here: a crash in between leaves both, and adopting again adds nothing.
        other.path.replace(other.path.with_name(other.path.name + ADOPTED_SUFFIX))
        log.info("moved %d MCP approval(s) from %s into %s", len(added), other.path, self.path)
        return len(added)

    def get(self, server: ConfiguredServer) -> ServerApproval | None:
        """The server's approval, if it is for the server's current settings."""
        approval = self.load().servers.get(server.key)
        return approval if approval is not None and approval.config == server.config_hash else None

    def approve(self, server: ConfiguredServer) -> ServerApproval:
        """Approve the server's current settings, and accept a pending tool list if there is one."""
        with self._locked() as data:
            old = data.servers.get(server.key)
            approval = ServerApproval(config=server.config_hash)
            if old is not None and old.config == server.config_hash:
                approval.tools, approval.snapshot = old.tools, old.snapshot
            if old is not None and old.pending is not None:
                approval.tools, approval.snapshot = snapshot_hash(old.pending), old.pending
            data.servers[server.key] = approval
        return approval

    def revoke(self, server: ConfiguredServer) -> bool:
        with self._locked() as data:
            return data.servers.pop(server.key, None) is not None

    def pin(self, server: ConfiguredServer, snapshot: ToolSnapshot) -> bool:
        """Record the tool list a server answers with. True: it is the pinned one (or the first), so usable."""
        digest = snapshot_hash(snapshot)
        with self._locked() as data:
            approval = data.servers.get(server.key)
            if approval is None or approval.config != server.config_hash:
                return False
            if approval.tools is None:
                approval.tools, approval.snapshot, approval.pending = digest, snapshot, None
                return True
            if approval.tools == digest:
                approval.pending = None
                return True
            approval.pending = snapshot
            return False


class ApprovalError(Exception):
    pass


def approval_summary(approval: ServerApproval | None) -> dict[str, Any]:
    if approval is None:
        return {"approved": False}
    return {"approved": True, "pinned": approval.tools is not None, "changed": approval.pending is not None}
