"""LSP and Rename over a stand-in for the editor's language features (the boundary: what the editor answers).

The stand-in answers the way a language server would for a tiny workspace: a rename edits every whole-word use of
the name in every file; the other questions get the answer a test sets. What is under test is everything on our
side: placing the symbol, the ladder, the review, staleness, the write and the results the model reads.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolgate.core.code_intel import (
    CODE_INTEL,
    FileTextEdits,
    IntelAnswer,
    IntelLocation,
    IntelQuery,
    Span,
    TextEditModel,
)
from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.messages import ToolResult
from toolgate.core.permission import PermissionMode, ReviewAnswer, ReviewedFile, ReviewRequest
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sidecar.approvals import ClientUnavailable
from toolgate.sidecar.editor_intel import EditorIntel
from toolgate.sidecar.wire_model import WireModel
from toolgate.testing import AllowingApprover, run1
from toolgate.tools import builtin_tools
from toolgate.tools.lsp import MAX_ITEMS, LspTool
from toolgate.tools.rename import RenameTool

SHAPES = (
    "export interface Shape {\n  area(): number;\n}\n\n"
    "export function totalArea(shapes: Shape[]): number {\n"
    "  return shapes.reduce((sum, s) => sum + s.area(), 0);\n}\n"
)
MAIN = "import { totalArea } from './shapes';\n\nconsole.log(totalArea([]));\n"


def span(line: int, start: int, end: int) -> Span:
    return Span(start_line=line, start_character=start, end_line=line, end_character=end)


class StandInEditor:
    """What the editor's language features answer (see the module docstring); it records every question."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.questions: list[IntelQuery] = []
        self.answer = IntelAnswer(provided=True)

    @property
    def languages(self) -> frozenset[str] | None:
        return frozenset({"typescript"})

    async def ask(self, query: IntelQuery) -> IntelAnswer:
        self.questions.append(query)
        if query.operation != "rename":
            return self.answer
        assert query.path is not None and query.line is not None and query.character is not None
        line = Path(query.path).read_text().split("\n")[query.line]
        old = re.match(r"[\w$]+", line[query.character :])
        assert old is not None
        files = []
        for path in sorted(self.root.rglob("*.ts")):
            edits = [
                TextEditModel(span=span(number, m.start(), m.end()), new_text=query.new_name or "")
                for number, text in enumerate(path.read_text().split("\n"))
                for m in re.finditer(rf"\b{re.escape(old.group())}\b", text)
            ]
            if edits:
                files.append(FileTextEdits(path=str(path), edits=edits))
        return IntelAnswer(provided=True, edits=files)


class Documents:
    def __init__(self) -> None:
        self.dirty: set[Path] = set()

    def is_dirty(self, path: Path) -> bool:
        return path in self.dirty

    def text(self, path: Path) -> str | None:
        return None


async def ask_at_call(runtime: Runtime, operation: str) -> ToolResult:
    """The LSP tool's `operation` at `totalArea` on main.ts's call line."""
    return await run1(
        runtime,
        "LSP",
        operation=operation,
        file_path="src/main.ts",
        symbol="totalArea",
        line_text="console.log(totalArea([]));",
    )


@pytest.fixture
def editor(workspace: Path) -> StandInEditor:
    (workspace / "src").mkdir()
    (workspace / "src" / "shapes.ts").write_text(SHAPES)
    (workspace / "src" / "main.ts").write_text(MAIN)
    return StandInEditor(workspace)


@pytest.fixture
def documents() -> Documents:
    return Documents()


def runtime_with(workspace: Path, intel: object, approver: AllowingApprover, documents: object) -> Runtime:
    return build_runtime(
        workspace,
        approver,
        RuntimeOptions(
            mode=PermissionMode.DEFAULT,
            tools=[*builtin_tools(), LspTool(), RenameTool()],
            dependencies={CODE_INTEL: intel, OPEN_DOCUMENTS: documents},
        ),
    )


@pytest.fixture
async def rt(
    workspace: Path, editor: StandInEditor, approver: AllowingApprover, documents: Documents
) -> AsyncIterator[Runtime]:
    runtime = runtime_with(workspace, editor, approver, documents)
    yield runtime
    await runtime.aclose()


@pytest.fixture
def approver() -> AllowingApprover:
    return AllowingApprover()


# --- LSP ---------------------------------------------------------------------------------------------------------
async def test_references_are_asked_at_the_symbols_position_and_shown_with_their_lines(
    rt: Runtime, editor: StandInEditor, workspace: Path
) -> None:
    main, shapes = str(workspace / "src" / "main.ts"), str(workspace / "src" / "shapes.ts")
    editor.answer = IntelAnswer(
        provided=True,
        locations=[IntelLocation(path=shapes, span=span(4, 16, 25)), IntelLocation(path=main, span=span(2, 12, 21))],
    )
    result = await ask_at_call(rt, "findReferences")
    assert not result.is_error, result.text()
    [question] = editor.questions
    assert (question.operation, question.path, question.line, question.character) == ("references", main, 2, 12)
    assert result.text() == (
        "References to totalArea (2 references):\n"
        "src/shapes.ts:5: export function totalArea(shapes: Shape[]): number {\n"
        "src/main.ts:3: console.log(totalArea([]));"
    )


async def test_a_long_list_is_capped_and_the_cap_announced(rt: Runtime, editor: StandInEditor, workspace: Path) -> None:
    shapes = str(workspace / "src" / "shapes.ts")
    editor.answer = IntelAnswer(
        provided=True, locations=[IntelLocation(path=shapes, span=span(0, 0, 1)) for _ in range(MAX_ITEMS + 50)]
    )
    result = await run1(
        rt,
        "LSP",
        operation="findReferences",
        file_path="src/shapes.ts",
        symbol="Shape",
        line_text="export interface Shape {",
    )
    text = result.text()
    assert text.count("src/shapes.ts:1") == MAX_ITEMS
    assert text.endswith(
        f"Showing references 1–{MAX_ITEMS} of {MAX_ITEMS + 50} — use offset {MAX_ITEMS} for more, "
        "or narrow the question."
    )


async def test_a_location_outside_the_working_directories_is_named_but_not_quoted(
    rt: Runtime, editor: StandInEditor, tmp_path: Path
) -> None:
    outside = tmp_path / "lib.d.ts"
    outside.write_text("declare const secret: string;\n")
    editor.answer = IntelAnswer(provided=True, locations=[IntelLocation(path=str(outside), span=span(0, 14, 20))])
    result = await ask_at_call(rt, "goToDefinition")
    assert "declare const" not in result.text()
    assert result.text().endswith("lib.d.ts:1 (outside the working directories; reading it is a Read that may ask)")


async def test_hover_symbols_and_workspace_search_read_as_the_model_needs(
    rt: Runtime, editor: StandInEditor, workspace: Path
) -> None:
    shapes = str(workspace / "src" / "shapes.ts")
    editor.answer = IntelAnswer(provided=True, hover=["```ts\nfunction totalArea(shapes: Shape[]): number\n```", ""])
    hover = await run1(
        rt,
        "LSP",
        operation="hover",
        file_path="src/main.ts",
        symbol="totalArea",
        line_text="import { totalArea } from './shapes';",
    )
    assert hover.text() == "Hover on totalArea:\n```ts\nfunction totalArea(shapes: Shape[]): number\n```"
    editor.answer = IntelAnswer(
        provided=True,
        locations=[
            IntelLocation(path=shapes, span=span(0, 0, 1), name="Shape", kind="Interface"),
            IntelLocation(path=shapes, span=span(1, 2, 6), name="area", kind="Method", depth=1),
        ],
    )
    outline = await run1(rt, "LSP", operation="documentSymbol", file_path="src/shapes.ts")
    assert outline.text() == "Symbols of src/shapes.ts (2 symbols):\nInterface Shape (line 1)\n  Method area (line 2)"
    search = await run1(rt, "LSP", operation="workspaceSymbol", query="Sha")
    assert search.text().startswith(
        "Symbols matching 'Sha' (2 symbols):\nInterface Shape — src/shapes.ts:1: export interface Shape {"
    )
    assert editor.questions[-1].query == "Sha" and editor.questions[-1].path is None


async def test_an_ambiguous_position_is_an_error_listing_the_candidates_and_nothing_is_asked(
    rt: Runtime, editor: StandInEditor, workspace: Path
) -> None:
    (workspace / "src" / "main.ts").write_text(MAIN + "console.log(totalArea([]));\n")
    result = await ask_at_call(rt, "goToDefinition")
    assert result.is_error
    assert "2 lines are reading 'console.log(totalArea([]));':\n3\tconsole.log(totalArea([]));\n4\t" in result.text()
    assert editor.questions == []


async def test_no_provider_is_a_clear_error(rt: Runtime, editor: StandInEditor) -> None:
    editor.answer = IntelAnswer(provided=False)
    result = await ask_at_call(rt, "goToImplementation")
    assert result.is_error
    assert "No language feature in the editor answers goToImplementation for src/main.ts" in result.text()


async def test_a_missing_argument_is_named(rt: Runtime) -> None:
    result = await run1(rt, "LSP", operation="findReferences", file_path="src/main.ts")
    assert result.is_error and "findReferences needs symbol and line_text" in result.text()


class Channel:
    """The editor's end of the wire: gone, or never answering (until withdrawn)."""

    def __init__(self, gone: bool) -> None:
        self.gone = gone
        self.asked = asyncio.Event()

    async def request(self, method: str, params: WireModel, result: type[WireModel]) -> WireModel:
        self.asked.set()
        if self.gone:
            raise ClientUnavailable("the editor has disconnected")
        await asyncio.Event().wait()  # never answers
        raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("gone", "says"),
    [(True, "the editor has disconnected"), (False, "the editor did not answer the references question within 0.2 s")],
)
async def test_an_editor_that_is_gone_or_silent_ends_the_call_with_a_clear_error(
    workspace: Path, editor: StandInEditor, approver: AllowingApprover, documents: Documents, gone: bool, says: str
) -> None:
    channel = Channel(gone)
    runtime = runtime_with(workspace, EditorIntel(channel, answer_seconds=0.2), approver, documents)
    try:
        result = await ask_at_call(runtime, "findReferences")
    finally:
        await runtime.aclose()
    assert channel.asked.is_set()
    assert result.is_error and says in result.text() and "use Grep and Read instead" in result.text()


class LanguagesChannel:
    """An editor that says which languages it covers."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def request(self, method: str, params: WireModel, result: type[WireModel]) -> WireModel:
        self.asked.append(method)
        return result.from_wire({"languages": ["typescript", "python"]})


async def test_the_tools_are_offered_only_with_an_editor_and_describe_its_languages() -> None:
    from toolgate.core.tool import DescribeContext

    names = {tool.name for tool in builtin_tools()}
    assert "LSP" not in names and "Rename" not in names
    channel = LanguagesChannel()
    intel = EditorIntel(channel)
    tools = {tool.name: tool for tool in intel.tools()}
    assert set(tools) == {"LSP", "Rename"}
    context = DescribeContext(frozenset(tools), PermissionMode.DEFAULT, Path("/"))
    assert "The editor has these features" not in tools["LSP"].description(context)  # not known yet
    asking = intel.attach()
    assert asking is not None and intel.attach() is asking  # asked once
    async with asyncio.timeout(5):
        await asking
    assert channel.asked == ["toolgate/editor/intelLanguages"]
    for tool in tools.values():
        assert tool.description(context).endswith("The editor has these features for: python, typescript.")


# --- Rename --------------------------------------------------------------------------------------------------------
async def test_a_rename_is_reviewed_as_one_multi_file_diff_and_written(
    rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    rt.session.review_edits = "always"
    result = await run1(
        rt,
        "Rename",
        file_path="src/shapes.ts",
        symbol="totalArea",
        line_text="export function totalArea(shapes: Shape[]): number {",
        new_name="sumOfAreas",
    )
    assert not result.is_error, result.text()
    [review] = approver.reviews
    assert review.tool_name == "Rename" and [Path(f.path).name for f in review.files] == ["main.ts", "shapes.ts"]
    assert result.text() == "Renamed totalArea to sumOfAreas: 3 changes in 2 files.\nsrc/main.ts (2)\nsrc/shapes.ts (1)"
    assert (workspace / "src" / "main.ts").read_text() == MAIN.replace("totalArea", "sumOfAreas")
    assert (workspace / "src" / "shapes.ts").read_text() == SHAPES.replace("totalArea", "sumOfAreas")


async def test_the_person_edits_one_file_and_keeps_the_other_as_it_was(
    rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    rt.session.review_edits = "always"
    main, shapes = workspace / "src" / "main.ts", workspace / "src" / "shapes.ts"

    def review(request: ReviewRequest) -> ReviewAnswer:
        edited = MAIN.replace("totalArea", "sumOfAreas") + "// checked\n"
        return ReviewAnswer(
            decision="accept",
            files=[ReviewedFile(path=str(main), content=edited), ReviewedFile(path=str(shapes), content=SHAPES)],
        )

    approver.reviewer = review
    result = await run1(
        rt,
        "Rename",
        file_path="src/main.ts",
        symbol="totalArea",
        line_text="import { totalArea } from './shapes';",
        new_name="sumOfAreas",
    )
    assert main.read_text().endswith("// checked\n") and shapes.read_text() == SHAPES
    text = result.text()
    assert text.startswith("Renamed totalArea to sumOfAreas: 2 changes in 1 file.\nsrc/main.ts (2)\n")
    assert "The user kept these files as they were (not renamed there): src/shapes.ts." in text
    assert "+// checked" in text


async def test_a_file_changed_during_the_review_stops_the_whole_rename(
    rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    rt.session.review_edits = "always"
    shapes = workspace / "src" / "shapes.ts"

    def review(request: ReviewRequest) -> ReviewAnswer:
        shapes.write_text(SHAPES + "// the person typed this meanwhile\n")
        return ReviewAnswer(decision="accept")

    approver.reviewer = review
    result = await run1(
        rt,
        "Rename",
        file_path="src/main.ts",
        symbol="totalArea",
        line_text="import { totalArea } from './shapes';",
        new_name="sumOfAreas",
    )
    assert result.is_error and "src/shapes.ts changed after the rename was computed" in result.text()
    assert (workspace / "src" / "main.ts").read_text() == MAIN  # all or nothing


@pytest.mark.parametrize(
    ("rule", "named"), [("Edit(src/main.ts)", "src/main.ts"), ("Edit", "every Edit call")], ids=["path", "tool"]
)
async def test_each_file_goes_through_the_ladder_as_an_edit(
    workspace: Path, editor: StandInEditor, approver: AllowingApprover, documents: Documents, rule: str, named: str
) -> None:
    # The call names shapes.ts; the editor's answer adds main.ts, which the path rule is about.
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text(f'{{"permissions": {{"deny": ["{rule}"]}}}}')
    runtime = runtime_with(workspace, editor, approver, documents)
    runtime.session.mode = PermissionMode.ACCEPT_EDITS
    try:
        result = await run1(
            runtime,
            "Rename",
            file_path="src/shapes.ts",
            symbol="totalArea",
            line_text="export function totalArea(shapes: Shape[]): number {",
            new_name="sumOfAreas",
        )
    finally:
        await runtime.aclose()
    assert result.is_error and "Permission denied" in result.text() and f"(rule `{rule}`)" in result.text()
    assert named in result.text()
    assert (workspace / "src" / "shapes.ts").read_text() == SHAPES


async def test_a_file_with_unsaved_changes_in_the_editor_is_refused(
    rt: Runtime, documents: Documents, workspace: Path
) -> None:
    documents.dirty.add(workspace / "src" / "main.ts")
    result = await run1(
        rt,
        "Rename",
        file_path="src/shapes.ts",
        symbol="totalArea",
        line_text="export function totalArea(shapes: Shape[]): number {",
        new_name="sumOfAreas",
    )
    assert result.is_error and "src/main.ts has unsaved changes in the editor" in result.text()
    assert (workspace / "src" / "shapes.ts").read_text() == SHAPES


async def test_a_file_the_model_had_read_stays_known_after_the_rename(
    rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    await run1(rt, "Read", file_path="src/main.ts")
    rt.session.mode = PermissionMode.ACCEPT_EDITS
    await run1(
        rt,
        "Rename",
        file_path="src/main.ts",
        symbol="totalArea",
        line_text="import { totalArea } from './shapes';",
        new_name="sumOfAreas",
    )
    edit_main = await run1(rt, "Edit", file_path="src/main.ts", old_string="console.log", new_string="console.info")
    assert not edit_main.is_error, edit_main.text()
    edit_shapes = await run1(rt, "Edit", file_path="src/shapes.ts", old_string="Shape[]", new_string="readonly Shape[]")
    assert edit_shapes.is_error and "has not been read in this session" in edit_shapes.text()


async def test_lookups_run_without_asking_in_the_default_mode(
    workspace: Path, editor: StandInEditor, documents: Documents
) -> None:
    from toolgate.core.permission import NonInteractiveApprover

    runtime = runtime_with(workspace, editor, NonInteractiveApprover(), documents)  # type: ignore[arg-type]
    try:
        search = await run1(runtime, "LSP", operation="workspaceSymbol", query="Shape")
        outline = await run1(runtime, "LSP", operation="documentSymbol", file_path="src/shapes.ts")
        rename = await run1(
            runtime,
            "Rename",
            file_path="src/main.ts",
            symbol="totalArea",
            line_text="import { totalArea } from './shapes';",
            new_name="sumOfAreas",
        )
    finally:
        await runtime.aclose()
    assert not search.is_error and not outline.is_error, (search.text(), outline.text())
    assert rename.is_error and "needs approval" in rename.text()  # a write is not a lookup


async def test_a_rename_that_changes_nothing_is_said_to(rt: Runtime, editor: StandInEditor, workspace: Path) -> None:
    main = str(workspace / "src" / "main.ts")
    same = TextEditModel(span=span(2, 12, 21), new_text="totalArea")  # what is there already

    async def answer(query: IntelQuery) -> IntelAnswer:
        edits = [FileTextEdits(path=main, edits=[same] if query.new_name == "same" else [])]
        return IntelAnswer(provided=True, edits=edits)

    editor.ask = answer  # type: ignore[method-assign]
    at_call = {"file_path": "src/main.ts", "symbol": "totalArea", "line_text": "console.log(totalArea([]));"}
    unchanged = await run1(rt, "Rename", **at_call, new_name="same")
    assert unchanged.is_error and "Renaming totalArea to same would change no file." in unchanged.text()
    nothing = await run1(rt, "Rename", **at_call, new_name="other")
    assert nothing.is_error and "The editor found nothing to rename for totalArea" in nothing.text()
    assert (workspace / "src" / "main.ts").read_text() == MAIN


async def test_locations_in_guarded_and_credential_files_are_left_out_and_counted(
    workspace: Path, editor: StandInEditor, approver: AllowingApprover, documents: Documents
) -> None:
    # As Grep leaves such files out: the lines that use a name, and the names a file defines, are its content.
    secret = workspace / "src" / "secret.ts"
    secret.write_text("const key = totalArea; // hunter2\n")
    env = workspace / ".env"
    env.write_text("export const hunter2Token = totalArea;\n")
    main = workspace / "src" / "main.ts"
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Read(src/secret.ts)"]}}')
    editor.answer = IntelAnswer(
        provided=True,
        locations=[
            IntelLocation(path=str(secret), span=span(0, 12, 21)),
            IntelLocation(path=str(main), span=span(2, 12, 21)),
            IntelLocation(path=str(env), span=span(0, 13, 25), name="hunter2Token", kind="Variable"),
        ],
    )
    runtime = runtime_with(workspace, editor, approver, documents)
    try:
        references = (await ask_at_call(runtime, "findReferences")).text()
        symbols = (await run1(runtime, "LSP", operation="workspaceSymbol", query="Token")).text()
        editor.answer = IntelAnswer(provided=True, locations=editor.answer.locations[:1])
        only_guarded = (await ask_at_call(runtime, "findReferences")).text()
    finally:
        await runtime.aclose()
    note = "locations are left out: their files are guarded by a permission rule or hold credentials (.env files, keys)"
    assert "hunter2" not in references + symbols + only_guarded
    assert "secret.ts" not in references + symbols + only_guarded and ".env" not in references.split("[")[0]
    assert references.startswith("References to totalArea (1 reference):\nsrc/main.ts:3: console.log(totalArea([]));")
    assert f"[2 {note}" in references and f"[2 {note}" in symbols
    assert only_guarded.startswith("References to totalArea: none found.\n\n[1 location is left out: their files")


async def test_a_hover_quoting_a_guarded_definition_is_withheld(
    workspace: Path, editor: StandInEditor, approver: AllowingApprover, documents: Documents
) -> None:
    # Hover shows the definition's documentation: from a file a Read rule guards, that is its text under another name.
    secret = workspace / "src" / "secret.ts"
    secret.write_text("/** the vault code is hunter2 */\nexport const totalArea = 1;\n")
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Read(src/secret.ts)"]}}')
    editor.answer = IntelAnswer(
        provided=True,
        hover=["const totalArea: 1", "the vault code is hunter2"],
        locations=[IntelLocation(path=str(secret), span=span(1, 13, 22))],
    )
    runtime = runtime_with(workspace, editor, approver, documents)
    try:
        result = await ask_at_call(runtime, "hover")
    finally:
        await runtime.aclose()
    assert "hunter2" not in result.text()
    assert result.text() == (
        "The hover on totalArea is not shown: it quotes src/secret.ts:2, which a permission rule or its credentials "
        "keep from being read freely."
    )
    assert [q.operation for q in editor.questions] == ["hover", "definition"]


async def test_a_hover_whose_definition_the_editor_cannot_place_is_withheld(rt: Runtime, editor: StandInEditor) -> None:
    # Unknown where the text comes from: fail closed, and say what to do instead.
    editor.answer = IntelAnswer(provided=True, hover=["const totalArea: 1"])

    async def no_definition(query: IntelQuery) -> IntelAnswer:
        editor.questions.append(query)
        return editor.answer if query.operation == "hover" else IntelAnswer(provided=False)

    editor.ask = no_definition  # type: ignore[method-assign]
    result = await ask_at_call(rt, "hover")
    assert result.text().startswith("The hover on totalArea is not shown: the editor could not say where")
    assert "goToDefinition and Read" in result.text()
