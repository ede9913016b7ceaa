"""Params of the four standard LSP text-sync notifications the editor's language client sends.

Not toolgate's own protocol: they are not in `protocol.METHODS` (tsgen emits nothing for them; the client
library speaks them). Only the fields we read are modelled; LSP is open by design and clients send more
(`languageId`, `version`, `rangeLength`, …), so unknown keys are ignored, not refused as in `WireModel`.
"""

from __future__ import annotations

from toolgate.sidecar.protocol_lsp import LspModel, UInteger

DID_OPEN = "textDocument/didOpen"
DID_CHANGE = "textDocument/didChange"
DID_SAVE = "textDocument/didSave"
DID_CLOSE = "textDocument/didClose"
DOCUMENT_NOTIFICATIONS = (DID_OPEN, DID_CHANGE, DID_SAVE, DID_CLOSE)


class LspPosition(LspModel):
    line: UInteger
    character: UInteger  # UTF-16 code units


class LspRange(LspModel):
    start: LspPosition
    end: LspPosition


class TextDocumentContentChangeEvent(LspModel):
    """A range edit, or (no range) the document's whole new text. `rangeLength` (deprecated) is not read."""

    text: str
    range: LspRange | None = None


class TextDocumentIdentifier(LspModel):
    uri: str


class TextDocumentItem(LspModel):
    uri: str
    text: str


class DidOpenTextDocumentParams(LspModel):
    text_document: TextDocumentItem


class DidChangeTextDocumentParams(LspModel):
    text_document: TextDocumentIdentifier  # a VersionedTextDocumentIdentifier; the version is not read
    content_changes: list[TextDocumentContentChangeEvent]


class DidSaveTextDocumentParams(LspModel):
    text_document: TextDocumentIdentifier
    text: str | None = None  # only when the server asked for it (includeText); we do not


class DidCloseTextDocumentParams(LspModel):
    text_document: TextDocumentIdentifier
