"""The parts of the LSP the sidecar reads (the lifecycle and text sync), as models of what we use.

LSP messages carry far more than the sidecar reads, and clients add fields as the spec grows: these models take
the fields they name and ignore the rest (toolgate's own protocol refuses unknown keys; LSP is open by design).
They are not in `protocol.METHODS`: the editor's language client sends them, not the extension's code.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

INITIALIZE = "initialize"
INITIALIZED = "initialized"
SHUTDOWN = "shutdown"
EXIT = "exit"

# LSP TextDocumentSyncKind.Incremental: the editor sends each change, not the whole buffer (a 5 MB file edited).
INCREMENTAL_SYNC = 2


class LspModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True)


class WorkspaceFolder(LspModel):
    uri: str
    name: str = ""


class InitializeParams(LspModel):
    """What the sidecar reads of `initialize`: where the workspace is, and its own options."""

    process_id: int | None = None
    root_uri: str | None = None
    workspace_folders: list[WorkspaceFolder] | None = None
    initialization_options: Any = None
    capabilities: dict[str, Any] = Field(default_factory=dict)

    def folder_uris(self) -> list[str]:
        """The workspace folders, or the root for a client that only names one (LSP before 3.6)."""
        if self.workspace_folders:
            return [folder.uri for folder in self.workspace_folders]
        return [self.root_uri] if self.root_uri else []


def server_capabilities() -> dict[str, Any]:
    """What `initialize` answers: the sidecar mirrors open documents (to refuse writing over unsaved changes)
    and needs to hear when one is saved (it is clean again), not its text."""
    return {
        "positionEncoding": "utf-16",
        "textDocumentSync": {"openClose": True, "change": INCREMENTAL_SYNC, "save": {"includeText": False}},
    }
