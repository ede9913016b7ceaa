"""A local mock model server for tests, end-to-end runs and the demo (see `server.py`)."""

from __future__ import annotations

from toolgate.mockmodel.script import ErrorSpec, Script, ScriptedToolUse, Step, load_script
from toolgate.mockmodel.server import MockModelServer, RecordedRequest

__all__ = ["ErrorSpec", "MockModelServer", "RecordedRequest", "Script", "ScriptedToolUse", "Step", "load_script"]
