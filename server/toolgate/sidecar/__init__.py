"""The sidecar: the editor's JSON-RPC server over stdio. Only this package and cli/ know the wire.

server.py            the handlers and the LSP lifecycle (`protocol.py` defines every method and model)
endpoint.py          JSON-RPC 2.0: requests to handlers, our own requests awaited, cancellation (rpc_errors.py)
transport.py         LSP base-protocol framing in, a locked writer out; envelope.py judges each body
editor_sessions.py   EditorSession — a session open in this sidecar: runtime, meta.json, its turns
chat.py              ChatHost — the model provider, and one AgentChat per open session
approvals.py         EditorApprover — approvals and diff reviews asked of the editor
settings_answer.py   a session's settings as structure (rules, problems, files) for settings/get
documents.py         the editor's open buffers (LSP text sync), to refuse writing over unsaved changes
rpc.py               EditorChannel — our questions to the editor, each answered or abandoned
protocol_lsp.py, tsgen.py
"""
