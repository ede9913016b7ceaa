"""Whatever a model sends, every call ends in exactly one result a model can act on, and never in a crash.

Inputs are drawn from each tool's own JSON schema, biased towards the values that break things (NUL bytes,
paths that escape, huge and negative numbers, broken regexes and patches, wrong types), and run in batches
through the real runner in acceptEdits mode. A crash is an exception that reached one of the runner's
catch-alls (they log it with a traceback); the test fails on any. Bash is left out: it would run the text.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

TOOLS = {tool.name: tool for tool in builtin_tools() if tool.name != "Bash"}

NOTEBOOK = {
    "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "print(1)", "outputs": [],
               "execution_count": None}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}  # fmt: skip
FILES: dict[str, bytes] = {
    "a.txt": b"alpha\nbeta \xe2\x80\x9cquoted\xe2\x80\x9d\n",
    "b.py": b"def f():\r\n    return 1\r\n",
    "latin1.txt": "caf\u00e9\n".encode("latin-1"),
    "nb.ipynb": json.dumps(NOTEBOOK).encode(),
    "empty.txt": b"",
    "bin.dat": b"\x00\x01\x02",
    "dir/sub.txt": b"sub\n",
}
OUTSIDE = b"never touched\n"

PATHS = st.sampled_from(
    [*FILES, "missing.txt", "dir", "dir/", ".", "", "../outside.txt", "/etc/hostname", "/", "~", "~/nope",
     "a.txt\x00.py", "dir/../a.txt", "new/deep/file.txt", "x" * 300, "ünï cødé.txt", " a.txt", "a.txt "]
)  # fmt: skip
PATTERNS = st.sampled_from(["**/*", "*.py", "[", "(", "\\", "a{", "**", "/**/*.txt", "alpha", "(?i)BETA", "a\x00b"])
PATCHES = st.sampled_from(
    [
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch",
        "*** Begin Patch\n*** Add File: added.txt\n+hi\n*** End Patch",
        "*** Begin Patch\n*** Delete File: empty.txt\n*** End Patch",
        "*** Begin Patch\n*** Update File: ../outside.txt\n@@\n-never touched\n+x\n*** End Patch",
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: dir/moved.txt\n@@\n alpha\n*** End Patch",
        "*** Begin Patch\n*** End Patch",
        "not a patch",
    ]
)
TEXTS = st.sampled_from(["alpha", "", "\n", "\u201cquoted\u201d", '"quoted"', "beta ", "\r\n", "\x00"])
WRONG = st.sampled_from([None, 3.5, [], {}, True, -1, "", "x" * 10_000])


def _for_schema(schema: dict[str, Any], defs: dict[str, Any], name: str, depth: int = 0) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return _for_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, name, depth)
    if "anyOf" in schema:
        return st.one_of([_for_schema(option, defs, name, depth) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | st.text(max_size=8)
    kind = schema.get("type")
    if kind == "string":
        if "path" in name:
            return PATHS | st.text(max_size=40)
        if name in ("pattern", "glob"):
            return PATTERNS | st.text(max_size=40)
        return (PATCHES if name == "patch" else TEXTS) | st.text(max_size=40)
    if kind == "integer":
        return st.integers(-3, 8) | st.sampled_from([0, 2**31, 2**63, 10**30])
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_for_schema(schema.get("items", {}), defs, name, depth + 1), max_size=4)
    if kind == "object" and depth < 3:
        return _object(schema, defs, depth + 1)
    return WRONG


def _object(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {
        key: (_for_schema(sub, defs, key, depth) | WRONG)
        if key in required
        else st.none() | _for_schema(sub, defs, key, depth)
        for key, sub in properties.items()
    }
    return st.fixed_dictionaries(fields).map(lambda d: {k: v for k, v in d.items() if v is not None or k in required})


def _input(tool_name: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = TOOLS[tool_name].input_model.model_json_schema()
    return _object(schema, schema.get("$defs", {})) | st.dictionaries(st.text(max_size=5), WRONG, max_size=2)


CALLS = st.sampled_from(sorted(TOOLS)).flatmap(lambda name: st.tuples(st.just(name), _input(name)))


class _Crashes(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CALLS, min_size=1, max_size=4))
# Crashes it found once: a name too long for the filesystem (Glob's hint, Write's check), a NUL byte passed on to
# ripgrep (Glob, Grep).
@example([("Glob", {"pattern": "x" * 10_000}), ("Write", {"file_path": "x" * 300, "content": ""})])
@example([("Glob", {"pattern": "a\x00b"}), ("Grep", {"pattern": "a", "glob": "*\x00"})])
def test_every_call_ends_in_one_actionable_result(calls: list[tuple[str, dict[str, Any]]]) -> None:
    crashes = _Crashes()
    logging.getLogger().addHandler(crashes)
    try:
        with tempfile.TemporaryDirectory() as root:
            outside = Path(root) / "outside.txt"
            outside.write_bytes(OUTSIDE)
            workspace = Path(root) / "ws"
            for name, data in FILES.items():
                (workspace / name).parent.mkdir(parents=True, exist_ok=True)
                (workspace / name).write_bytes(data)
            uses = [ToolUse(id=f"toolu_{i}", name=name, input=tool_input) for i, (name, tool_input) in enumerate(calls)]
            # Reads first, so edits get past read-before-write and reach the code that changes files.
            reads = [ToolUse(id=f"read_{n}", name="Read", input={"file_path": n}) for n in FILES if n != "bin.dat"]

            async def scenario() -> list[Any]:
                runtime = build_runtime(
                    workspace,
                    NonInteractiveApprover(),
                    RuntimeOptions(mode=PermissionMode.ACCEPT_EDITS, read_settings=False),
                )
                try:
                    await runtime.orchestrator.run_turn(reads)
                    return await runtime.orchestrator.run_turn(uses)
                finally:
                    await runtime.aclose()

            results = anyio.run(scenario)
            assert [r.tool_use_id for r in results] == [u.id for u in uses]
            for result in results:
                assert result.text().strip(), "an empty result tells a model nothing"
            assert outside.read_bytes() == OUTSIDE
    finally:
        logging.getLogger().removeHandler(crashes)
    assert not crashes.records, "\n".join(
        f"{r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}" for r in crashes.records if r.exc_info
    )
