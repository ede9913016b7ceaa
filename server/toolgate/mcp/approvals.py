"""Which MCP servers the person approved, and the tool list each was pinned with.

Stored in the data directory (`<data>/mcp/approvals.json`, not in a settings file a repository could carry):

    {"servers": {"<key>": {"config": "<sha256 of the server's settings>",
                           "tools": "<sha256 of the pinned tool list>" | null, "snapshot": {...} | null,
                           "pending": {...} | null}}}

Approval is of the settings (command, args, env, URL); the first start after it pins the tool list. A later
list that differs is recorded as `pending` and hides the tools until `approve` accepts it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.core.atomic_file import write_file_atomically
from toolgate.mcp.config import ConfiguredServer
from toolgate.mcp.pinning import ToolSnapshot, snapshot_hash

APPROVALS_FILE = "approvals.json"


class ServerApproval(BaseModel):
    model_config = ConfigDict(extra="allow")

    config: str
    tools: str | None = None
    snapshot: ToolSnapshot | None = None
    pending: ToolSnapshot | None = None


class ApprovalFile(BaseModel):
    model_config = ConfigDict(extra="allow")

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
