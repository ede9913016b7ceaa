"""The sidecar: the editor's language server over stdio, on pygls 2.1. Only this package and cli/ know the wire.

`ToolgateServer` is a pygls `LanguageServer`, not a `JsonRPCServer` with a lifecycle of our own: initialize (its
capabilities and the position-encoding negotiation), shutdown, workspace folders and notebook sync are what
LanguageServer already does right, in lsprotocol's types. pygls routes every message, keeps the request futures,
cancels on `$/cancelRequest` and sends our own requests (`send_request_async`). Toolgate adds, around it:

transport.py         LSP base-protocol framing in place of pygls's io loop (resyncs after garbage, caps a message's
                     size, never stuck), and a locked writer (progress is written from worker threads)
envelope.py          what a body must be before pygls reads it: UTF-8, nesting depth checked right after `json.loads`,
                     one JSON-RPC 2.0 object, a usable id; every refusal answered as the spec says
lsp_protocol.py      the protocol subclass and converter: refusals pygls would drop (duplicate in-flight id, after
                     shutdown, unserved method, unreadable params → -32602 naming fields), strict scalars, strict
                     JSON and no traceback out, `exit` sets the status, text sync into our one mirror
server.py            the toolgate methods as pygls features, initialize's options; no showMessage pop-ups
documents.py         the editor's open buffers and notebooks, to refuse writing over unsaved changes (the LSP line
                     rule: text/document_sync.py)
workspace_events.py  folders added or removed while running; the cells of open notebooks
rpc.py               EditorChannel — our questions to the editor, each answered or withdrawn
editor_sessions.py   EditorSession — a session open in this sidecar: runtime, meta.json, its turns
chat.py              ChatHost — the model provider, and one AgentChat per open session
approvals.py         EditorApprover — approvals and diff reviews asked of the editor
settings_answer.py   a session's settings as structure (rules, problems, files) for settings/get
warm_up.py           what the first session needs, imported while the editor is idle
protocol*.py, tsgen.py  every toolgate method and model; the TypeScript the extension is built against
"""
