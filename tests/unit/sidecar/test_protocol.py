"""The protocol models, their JSON Schema, and the TypeScript types generated from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolgate.cli import main
from toolgate.core.messages import ToolResult
from toolgate.core.permission import MODE_TRAITS, ApprovalRequest, ReviewRequest
from toolgate.sidecar import protocol as p
from toolgate.sidecar.protocol_schema import protocol_schema
from toolgate.sidecar.tsgen import UnsupportedSchema, render_type, typescript_from_schema

REPO = Path(__file__).resolve().parents[3]
COMMITTED_TS = REPO / "extension" / "src" / "protocol.generated.ts"


def test_committed_typescript_types_are_up_to_date() -> None:
    generated = typescript_from_schema(protocol_schema())
    assert COMMITTED_TS.read_text(encoding="utf-8") == generated, "run `make protocol` and commit the result"


def test_every_method_is_in_the_schema_and_every_ref_resolves() -> None:
    schema = protocol_schema()
    assert set(schema["methods"]) == {m.name for m in p.METHODS}
    defs = schema["$defs"]

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [node["$ref"]] if "$ref" in node else []
            return own + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    for ref in refs(schema):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs


def test_params_are_camel_case_and_results_dump_as_plain_json() -> None:
    params = p.parse_params(p.TOOLS_RUN, p.ToolsRunParams, {"sessionId": "s1", "calls": [{"id": "t", "name": "Read"}]})
    assert isinstance(params, p.ToolsRunParams) and params.session_id == "s1"
    result = p.ToolsRunResult(results=[ToolResult(tool_use_id="t", content="ok")])
    # toolgate's own fields are camelCase; the Anthropic shapes inside keep theirs.
    assert result.wire() == {
        "results": [{"type": "tool_result", "tool_use_id": "t", "content": "ok", "is_error": False}]
    }
    review = p.DiffReviewParams(
        session_id="s", tool_use_id="t", tool_name="Write", title="x", reason="y", files=[], suggestions=[]
    )
    assert set(review.wire()) == {
        "sessionId",
        "toolUseId",
        "toolName",
        "title",
        "reason",
        "files",
        "suggestions",
        "offersAcceptEdits",
    }


def test_invalid_params_name_every_bad_field() -> None:
    with pytest.raises(p.InvalidParams) as bad:
        p.parse_params(p.TOOLS_RUN, p.ToolsRunParams, {"session_id": "ok", "calls": [{"name": 3}], "x": 1})
    fields = [e["field"] for e in bad.value.errors]
    assert set(fields) == {"sessionId", "calls[0].id", "calls[0].name", "session_id", "x"}
    assert str(bad.value).startswith("Invalid params for toolgate/tools/run: ")
    assert "`calls[0].id`" in str(bad.value)


def test_missing_params_are_an_empty_object() -> None:
    assert p.parse_params(p.PING, p.Empty, None) == p.Empty()
    with pytest.raises(p.InvalidParams, match="`sessionId`"):
        p.parse_params(p.SESSION_LOAD, p.SessionRef, None)
    with pytest.raises(p.InvalidParams, match=r"\(params\)"):
        p.parse_params(p.SESSION_LOAD, p.SessionRef, [1, 2])


@pytest.mark.parametrize("bad_id", ["../up", "..", "a/b", "", ".hidden", "x" * 129, "sp ace", "a\\b"])
def test_session_ids_cannot_name_paths(bad_id: str) -> None:
    with pytest.raises(p.InvalidParams, match="`sessionId`"):
        p.parse_params(p.SESSION_DELETE, p.SessionRef, {"sessionId": bad_id})


def test_initialization_options_ignore_unknown_keys_and_need_an_absolute_storage_dir() -> None:
    options = p.InitializationOptions.from_wire({"storageDir": "/d", "somethingNew": 1})
    assert options.storage_dir == "/d"
    with pytest.raises(ValueError, match="absolute"):
        p.InitializationOptions.from_wire({"storageDir": "relative/dir"})


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "number"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"const": "tool_use"}, '"tool_use"'),
        ({"enum": ["a", "b"]}, '"a" | "b"'),
        ({"$ref": "#/$defs/RuleSuggestion-Input"}, "RuleSuggestionInput"),
        ({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}, "(string | number)[]"),
        ({"type": "object", "additionalProperties": True}, "Record<string, unknown>"),
        ({"type": "object", "additionalProperties": False}, "Record<string, never>"),
        ({"type": "object", "additionalProperties": {"type": "boolean"}}, "Record<string, boolean>"),
        ({}, "unknown"),
        (
            {"type": "object", "properties": {"a-b": {"type": "string"}, "c": {"type": "number"}}, "required": ["c"]},
            '{\n  "a-b"?: string;\n  c: number;\n}',
        ),
    ],
)
def test_typescript_rendering(node: dict[str, Any], expected: str) -> None:
    assert render_type(node) == expected


@pytest.mark.parametrize("node", [{"type": "tuple"}, {"not": {"type": "string"}}, {"allOf": []}])
def test_unknown_schema_constructs_fail_loudly(node: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        render_type(node)


def test_generated_typescript_has_the_method_maps() -> None:
    source = typescript_from_schema(protocol_schema())
    assert 'toolsRun: "toolgate/tools/run",' in source
    assert '"toolgate/tools/run": { params: ToolsRunParams; result: ToolsRunResult };' in source
    assert '"toolgate/approval/request": { params: ApprovalParams; result: ApprovalResult };' in source
    assert '"toolgate/tools/progress": ToolProgress;' in source
    assert "export interface InitializationOptions {" in source


def test_the_extension_gets_the_permission_modes_table_from_core() -> None:
    source = typescript_from_schema(protocol_schema())
    start = source.index("export const PERMISSION_MODE_TRAITS: readonly PermissionModeTraits[] = ")
    listed = json.loads(source[source.index("= [", start) + 2 : source.index("];", start) + 1])
    assert [entry["mode"] for entry in listed] == [mode.value for mode in MODE_TRAITS]
    by_mode = {entry["mode"]: entry for entry in listed}
    assert by_mode["plan"]["readOnly"] is True and by_mode["bypassPermissions"]["sharedDefault"] is False
    assert {mode for mode, entry in by_mode.items() if entry["automatic"]} == {"acceptEdits", "bypassPermissions"}


@pytest.mark.parametrize(
    ("wire", "runtime"), [(p.ApprovalParams, ApprovalRequest), (p.DiffReviewParams, ReviewRequest)]
)
def test_the_cards_on_the_wire_are_the_runtimes_requests(wire: type[p.WireModel], runtime: type[BaseModel]) -> None:
    # Defined once: a field added to the runtime's request is on the wire (and in the generated type) with no edit.
    assert issubclass(wire, runtime) and list(wire.model_fields) == list(runtime.model_fields)
    properties = protocol_schema()["$defs"][wire.__name__]["properties"]
    assert list(properties) == [field.alias for field in wire.model_fields.values()]


def test_cli_prints_the_schema_and_checks_the_typescript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["protocol", "schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["methods"][p.TOOLS_RUN]["params"] == {"$ref": "#/$defs/ToolsRunParams"}

    out = tmp_path / "protocol.generated.ts"
    assert main(["protocol", "typescript", "--out", str(out)]) == 0
    assert main(["protocol", "typescript", "--out", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "// drift\n")
    assert main(["protocol", "typescript", "--out", str(out), "--check"]) == 2
    assert "out of date" in capsys.readouterr().err
