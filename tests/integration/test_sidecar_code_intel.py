"""The language-feature questions over real JSON-RPC: the sidecar asks the test client (standing in for the
extension) and turns its answer, or its failure to answer, into the LSP tool's result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar import protocol as p
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


async def test_a_rename_over_the_wire_is_reviewed_written_and_checkpointed(
    sidecar: SidecarClient, workspace: Path
) -> None:
    lib, app = workspace / "lib.ts", workspace / "app.ts"
    lib.write_text("export function greet() {}\n")
    app.write_text("import { greet } from './lib';\ngreet();\n")

    @sidecar.feature(EDITOR_INTEL)
    async def intel(params: dict[str, Any]) -> dict[str, Any]:
        def edit(line: int, start: int) -> dict[str, Any]:
            span = {"startLine": line, "startCharacter": start, "endLine": line, "endCharacter": start + 5}
            return {"span": span, "newText": params["newName"]}

        edits = [{"path": str(lib), "edits": [edit(0, 16)]}, {"path": str(app), "edits": [edit(0, 9), edit(1, 0)]}]
        return {"provided": True, "edits": edits}

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "accept"}

    sidecar.answer_review = accept
    session_id = await sidecar.new_session(workspace)
    call = use("Rename", file_path="lib.ts", symbol="greet", line_text="export function greet() {}", new_name="hello")
    [result] = await sidecar.run(session_id, call)
    assert result["content"] == "Renamed greet to hello: 3 changes in 2 files.\nlib.ts (1)\napp.ts (2)", result
    [review] = sidecar.reviews
    assert [(Path(f["path"]).name, f["proposed"]) for f in review["files"]] == [
        ("lib.ts", "export function hello() {}\n"),
        ("app.ts", "import { hello } from './lib';\nhello();\n"),
    ]
    listing = await sidecar.call(p.CHECKPOINTS_LIST, {"sessionId": session_id})
    # The call's checkpoints: the workspace before it, and after it (oldest first).
    before, after = [c for c in listing["checkpoints"] if c["toolUseId"] == call["id"]]
    assert set(before["changed"]) == set(after["changed"]) == {"lib.ts", "app.ts"}
    done = await sidecar.call(p.CHECKPOINTS_RESTORE, {"sessionId": session_id, "checkpointId": before["id"]})
    assert done["restored"] is True
    assert (
        lib.read_text() == "export function greet() {}\n"
        and app.read_text() == "import { greet } from './lib';\ngreet();\n"
    )
