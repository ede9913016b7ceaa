"""The language-feature questions over real JSON-RPC: the sidecar asks the test client (standing in for the
extension) and turns its answer, or its failure to answer, into the LSP tool's result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar.protocol_editor_intel import EDITOR_INTEL


async def test_a_question_goes_out_camel_cased_with_an_lsp_position_and_the_answer_comes_back(
    sidecar: SidecarClient, workspace: Path
) -> None:
    source = workspace / "app.ts"
    source.write_text("const 😀 = 1; export function greet() {}\ngreet();\n")
    asked: list[dict[str, Any]] = []

    @sidecar.feature(EDITOR_INTEL)
    async def intel(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        span = {"startLine": 0, "startCharacter": 31, "endLine": 0, "endCharacter": 36}
        return {"provided": True, "locations": [{"path": str(source), "span": span}]}

    session_id = await sidecar.new_session(workspace)
    [result] = await sidecar.run(
        session_id,
        use("LSP", operation="goToDefinition", file_path="app.ts", symbol="greet", line_text="greet();"),
    )
    assert asked == [
        {
            "operation": "definition",
            "path": str(source),
            "line": 1,
            "character": 0,
            "query": None,
            "newName": None,
        }
    ]
    assert result["content"] == (
        "Definition of greet (1 definition):\napp.ts:1: const 😀 = 1; export function greet() {}"
    ), result


async def test_an_editor_without_the_method_is_a_clear_error_and_the_session_goes_on(
    sidecar: SidecarClient, workspace: Path
) -> None:
    (workspace / "app.ts").write_text("greet();\n")
    session_id = await sidecar.new_session(workspace)
    call = use("LSP", operation="hover", file_path="app.ts", symbol="greet", line_text="greet();")
    [result] = await sidecar.run(session_id, call)
    assert result["is_error"] and "The editor gave no answer for hover" in result["content"], result
    assert "the editor answered toolgate/editor/intel with an error" in result["content"]
    [again] = await sidecar.run(session_id, use("Read", file_path="app.ts"))
    assert not again["is_error"]
