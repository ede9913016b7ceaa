"""The tool runtime: the tool contract, the runner, batching, readFileState and dependency injection.

`tool_session.py` holds ToolSession, one conversation's tool state (working directories, readFileState,
the permission mode, policy and approver, and `decisions.py`'s record of what the person answered); `runner.py`
runs one call in it, `orchestrator.py` one turn.
core/ knows no particular tool and no transport. Besides the runtime's parts it owns the pieces every layer
shares: `permission.py` (the permission and approval types, and `NonInteractiveApprover` for headless runs) and
`atomic_file.py` (the one atomic, durable way to replace a file).
"""
