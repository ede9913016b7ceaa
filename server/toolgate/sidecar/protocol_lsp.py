"""The parts of the LSP lifecycle the sidecar reads, and the base of every LSP model (text sync: protocol_documents).

LSP messages carry far more than the sidecar reads, and clients add fields as the spec grows: these models take
the fields they name and ignore the rest (toolgate's own protocol refuses unknown keys; LSP is open by design).
They are not in `protocol.METHODS`: the editor's language client sends them, not the extension's code.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from toolgate.sidecar.wire_model import WireModel

INITIALIZE = "initialize"
INITIALIZED = "initialized"
SHUTDOWN = "shutdown"
EXIT = "exit"

# LSP TextDocumentSyncKind.Incremental: the editor sends each change, not the whole buffer (a 5 MB file edited).
INCREMENTAL_SYNC = 2


# LSP's uinteger. Strict: a position sent as "3", 3.5 or true is a broken client, not a position.
UInteger = Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)]


class LspModel(WireModel):
    """camelCase like every wire model, but unknown keys ignored (still built on first use, not at import)."""

    model_config = ConfigDict(extra="ignore")


class WorkspaceFolder(LspModel):
    uri: str
    name: str = ""


class InitializeParams(LspModel):
    """What the sidecar reads of `initialize`: where the workspace is, and its own options."""

    root_uri: str | None = None
    workspace_folders: list[WorkspaceFolder] | None = None
    initialization_options: Any = None

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
