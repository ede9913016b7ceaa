"""The sidecar: the editor's JSON-RPC server over stdio (pygls). Only this package and cli/ know the wire.

server.py            the handlers (`protocol.py` defines every method and model)
editor_sessions.py   EditorSession — a session open in this sidecar: runtime, meta.json, its turns
chat.py              ChatHost — the model provider, and one AgentChat per open session
approvals.py         EditorApprover — approvals and diff reviews asked of the editor
settings_answer.py   a session's settings as structure (rules, problems, files) for settings/get
documents.py, rpc.py, transport.py, tsgen.py
"""
