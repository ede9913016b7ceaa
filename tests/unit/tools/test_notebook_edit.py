"""NotebookEdit through the real runtime: checks in order, the three modes, layout kept byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolgate.runtime import Runtime
from toolgate.testing import AllowingApprover, run1


def nb_text(cells: list[dict[str, Any]], minor: int = 5) -> str:
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3"}, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": minor,
    }
    # What nbformat itself writes: indent 1, sorted keys, non-ASCII as is, a final newline.
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


CELLS = [
    {"cell_type": "markdown", "id": "md1", "metadata": {}, "source": ["# Résumé\n", "text"]},
    {
        "cell_type": "code",
        "execution_count": 3,
        "id": "code1",
        "metadata": {"tags": ["x"]},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["1\n"]}],
        "source": ["x = 1\n", "print(x)"],
    },
]


@pytest.fixture
def nb(workspace: Path) -> Path:
    path = workspace / "nb.ipynb"
    path.write_text(nb_text(CELLS), encoding="utf-8")
    return path


async def notebook_edit(rt: Runtime, path: Path, **kw: object) -> tuple[bool, str]:
    result = await run1(rt, "NotebookEdit", notebook_path=str(path), **kw)
    return result.is_error, result.text()


async def test_replace_changes_one_cell_clears_outputs_and_keeps_layout(rt: Runtime, nb: Path) -> None:
    await run1(rt, "Read", file_path=str(nb))
    failed, text = await notebook_edit(rt, nb, cell_id="code1", new_source="y = 2\nprint(y)")
    assert not failed, text
    assert "Replaced" in text and "outputs were cleared" in text
    expected_cells = json.loads(json.dumps(CELLS))
    expected_cells[1].update(execution_count=None, outputs=[], source=["y = 2\n", "print(y)"])
    assert nb.read_text(encoding="utf-8") == nb_text(expected_cells)  # byte for byte what nbformat would write


async def test_insert_after_a_cell_and_at_the_top(rt: Runtime, nb: Path) -> None:
    await run1(rt, "Read", file_path=str(nb))
    failed, text = await notebook_edit(
        rt, nb, cell_id="md1", new_source="import os", cell_type="code", edit_mode="insert"
    )
    assert not failed and "Inserted a new code cell" in text
    failed, _ = await notebook_edit(rt, nb, new_source="# Top", cell_type="markdown", edit_mode="insert")
    assert not failed
    cells = json.loads(nb.read_text())["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "markdown", "code", "code"]
    assert cells[0]["source"] == ["# Top"] and cells[2]["source"] == ["import os"]
    assert list(cells[2]) == sorted(cells[2]) and cells[2]["outputs"] == [] and len(cells[2]["id"]) == 8


async def test_delete_by_index_for_cells_without_ids(rt: Runtime, workspace: Path) -> None:
    path = workspace / "old.ipynb"
    cells = [{k: v for k, v in c.items() if k != "id"} for c in CELLS]
    path.write_text(nb_text(cells, minor=4))
    await run1(rt, "Read", file_path=str(path))
    failed, text = await notebook_edit(rt, path, cell_id="cell-0", edit_mode="delete")
    assert not failed and "Deleted cell cell-0" in text and "now has 1 cells" in text
    assert [c["cell_type"] for c in json.loads(path.read_text())["cells"]] == ["code"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"edit_mode": "insert", "new_source": "x"}, "needs cell_type"),
        ({"edit_mode": "replace", "new_source": "x"}, "name it with cell_id"),
        ({"cell_id": "nope", "new_source": "x"}, "no cell has the id 'nope'. The cells are: md1, code1"),
        ({"cell_id": "cell-9", "new_source": "x"}, "there is no cell cell-9: the notebook has 2 cells"),
    ],
)
async def test_bad_arguments_are_explained(rt: Runtime, nb: Path, kwargs: dict[str, Any], message: str) -> None:
    await run1(rt, "Read", file_path=str(nb))
    before = nb.read_bytes()
    failed, text = await notebook_edit(rt, nb, **kwargs)
    assert failed and 'kind="state"' in text and message in text
    assert nb.read_bytes() == before


async def test_unknown_mode_is_invalid_input(rt: Runtime, nb: Path) -> None:
    failed, text = await notebook_edit(rt, nb, cell_id="md1", new_source="x", edit_mode="append")
    assert failed and 'kind="invalid_input"' in text and "edit_mode" in text


async def test_checks_run_in_order(rt: Runtime, nb: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("x\n")
    failed, text = await notebook_edit(rt, workspace / "notes.txt", cell_id="a", new_source="x")
    assert failed and 'kind="state"' in text and "not a Jupyter notebook" in text
    failed, text = await notebook_edit(rt, workspace / "missing.ipynb", cell_id="a", new_source="x")
    assert failed and 'kind="state"' in text and "No notebook exists" in text
    failed, text = await notebook_edit(rt, nb, cell_id="nope", new_source="x")
    assert failed and 'kind="state"' in text and "Read it first" in text  # read-first comes before looking at the cells
    await run1(rt, "Read", file_path=str(nb))
    nb.write_text(nb_text([*CELLS, CELLS[0]]))
    os.utime(nb, ns=(1, nb.stat().st_mtime_ns + 5_000_000_000))
    failed, text = await notebook_edit(rt, nb, cell_id="md1", new_source="x")
    assert failed and 'kind="state"' in text and "Read it again" in text


async def test_invalid_json_is_explained(rt: Runtime, workspace: Path) -> None:
    path = workspace / "broken.ipynb"
    path.write_text('{"cells": [')
    await run1(rt, "Read", file_path=str(path), offset=1, limit=5)
    failed, text = await notebook_edit(rt, path, cell_id="cell-0", new_source="x")
    assert failed and 'kind="state"' in text and "not valid JSON" in text


async def test_a_second_edit_needs_no_new_read(rt: Runtime, nb: Path) -> None:
    await run1(rt, "Read", file_path=str(nb))
    assert not (await notebook_edit(rt, nb, cell_id="md1", new_source="# One"))[0]
    assert not (await notebook_edit(rt, nb, cell_id="md1", new_source="# Two"))[0]
    assert json.loads(nb.read_text())["cells"][0]["source"] == ["# Two"]


async def test_an_insert_under_diff_review_writes_what_was_reviewed(
    reviewed_rt: Runtime, approver: AllowingApprover, nb: Path
) -> None:
    await run1(reviewed_rt, "Read", file_path=str(nb))
    failed, text = await notebook_edit(
        reviewed_rt, nb, cell_id="code1", new_source="print(2)", cell_type="code", edit_mode="insert"
    )
    assert not failed, text
    [request] = approver.reviews
    assert nb.read_text(encoding="utf-8") == request.files[0].proposed
