"""Jupyter notebooks (.ipynb, nbformat 4): render them cell by cell for a model, and edit their cells.

Editing keeps the file's own JSON layout (indentation, key order, escaping, final newline), so a changed
cell is the only change a diff shows.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

MAX_OUTPUT_CHARS = 10_000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")

CellType = Literal["code", "markdown", "raw"]


class NotebookError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class JsonLayout:
    indent: int | None
    ensure_ascii: bool
    final_newline: bool


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a rendered notebook: text, or an image (media type, base64 data)."""

    text: str | None = None
    image: tuple[str, str] | None = None


def parse(text: str) -> tuple[dict[str, Any], JsonLayout]:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("it is not a notebook: the top level has no list of cells")
    return nb, _layout(text)


def _layout(text: str) -> JsonLayout:
    indent: int | None = None
    lines = text.split("\n", 2)
    if len(lines) > 1:
        stripped = lines[1].lstrip(" ")
        indent = len(lines[1]) - len(stripped) if stripped else None
    ascii_only = text.isascii()
    return JsonLayout(indent=indent, ensure_ascii=ascii_only and "\\u" in text, final_newline=text.endswith("\n"))


def dump(nb: dict[str, Any], layout: JsonLayout) -> str:
    text = json.dumps(nb, indent=layout.indent, ensure_ascii=layout.ensure_ascii)
    return text + "\n" if layout.final_newline else text


def source_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def cell_id(cell: dict[str, Any], index: int) -> str:
    """A cell's own id (nbformat 4.5+), or `cell-N` (0-based) for notebooks without ids."""
    value = cell.get("id")
    return value if isinstance(value, str) and value else f"cell-{index}"


def find_cell(nb: dict[str, Any], wanted: str) -> int:
    cells = nb["cells"]
    for index, cell in enumerate(cells):
        if cell.get("id") == wanted:
            return index
    match = re.fullmatch(r"cell-(\d+)", wanted)
    if match:
        index = int(match.group(1))
        if index < len(cells):
            return index
        raise NotebookError(
            f"there is no cell {wanted}: the notebook has {len(cells)} cells (cell-0 to cell-{len(cells) - 1})"
        )
    known = ", ".join(cell_id(c, i) for i, c in enumerate(cells[:10]))
    raise NotebookError(f"no cell has the id '{wanted}'. The cells are: {known}{' …' if len(cells) > 10 else ''}")


def language(nb: dict[str, Any]) -> str:
    info = nb.get("metadata", {}).get("language_info", {}) or nb.get("metadata", {}).get("kernelspec", {})
    name = info.get("name") or info.get("language") or "python"
    return str(name)


def _as_source(text: str, like: Any) -> Any:
    """nbformat stores source as a list of lines (each keeping its newline) or a string: keep the file's choice."""
    if isinstance(like, str):
        return text
    return text.splitlines(keepends=True)


def new_cell(nb: dict[str, Any], cell_type: CellType, source: str) -> dict[str, Any]:
    like: Any = next((c.get("source") for c in nb["cells"] if "source" in c), [])
    cell: dict[str, Any] = {"cell_type": cell_type}
    minor = nb.get("nbformat_minor", 0)
    if nb.get("nbformat", 4) >= 4 and isinstance(minor, int) and minor >= 5:
        cell["id"] = _fresh_id(nb, cell_type, source)
    cell["metadata"] = {}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    cell["source"] = _as_source(source, like)
    return _ordered_like(cell, nb["cells"][0] if nb["cells"] else {"a": 0, "b": 0})


def _fresh_id(nb: dict[str, Any], cell_type: str, source: str) -> str:
    """A new cell id that is unique in the notebook and the same every time for the same edit.

    Deterministic on purpose: a diff review computes the new notebook once to show it and once to write
    it, and the two must agree.
    """
    taken = {c.get("id") for c in nb["cells"]}
    seed = json.dumps([sorted(str(t) for t in taken), cell_type, source])
    for attempt in range(1000):
        candidate = hashlib.sha256(f"{attempt}:{seed}".encode()).hexdigest()[:8]
        if candidate not in taken:
            return candidate
    raise NotebookError("could not find a free cell id")


def replace_cell(cell: dict[str, Any], source: str, cell_type: CellType | None) -> None:
    """New source (and maybe type) in place; a code cell's outputs and execution count no longer apply."""
    was_sorted = list(cell) == sorted(cell)
    if cell_type is not None and cell_type != cell.get("cell_type"):
        cell["cell_type"] = cell_type
        if cell_type == "code":
            cell.setdefault("execution_count", None)
            cell.setdefault("outputs", [])
        else:
            cell.pop("execution_count", None)
            cell.pop("outputs", None)
    cell["source"] = _as_source(source, cell.get("source", []))
    if cell.get("cell_type") == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    if was_sorted:
        ordered = dict(sorted(cell.items()))
        cell.clear()
        cell.update(ordered)


def _ordered_like(cell: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """nbformat writes keys sorted; a new cell follows the notebook's habit so the diff stays one cell."""
    return dict(sorted(cell.items())) if list(model) == sorted(model) else cell


# --- rendering ---------------------------------------------------------------------------------------------


def render(nb: dict[str, Any], max_output_chars: int = MAX_OUTPUT_CHARS) -> list[Part]:
    parts: list[Part] = []
    lang = language(nb)
    cells = nb["cells"]
    for index, cell in enumerate(cells):
        kind = cell.get("cell_type", "code")
        attrs = f'id="{cell_id(cell, index)}" type="{kind}"'
        if kind == "code" and lang != "python":
            attrs += f' language="{lang}"'
        if kind == "code" and cell.get("execution_count") is not None:
            attrs += f' execution_count="{cell["execution_count"]}"'
        parts.append(Part(text=f"<cell {attrs}>\n{source_text(cell)}\n</cell>"))
        if kind == "code":
            parts.extend(_outputs(cell.get("outputs") or [], cell_id(cell, index), index, max_output_chars))
    return _merge_text(parts)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _outputs(outputs: list[dict[str, Any]], cid: str, index: int, cap: int) -> list[Part]:
    texts: list[str] = []
    images: list[Part] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            texts.append(_text(output.get("text", "")))
        elif kind == "error":
            trace = "\n".join(_text(line) for line in output.get("traceback", []))
            texts.append(_ANSI.sub("", trace) or f"{output.get('ename')}: {output.get('evalue')}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            image_type = next((t for t in _IMAGE_TYPES if t in data), None)
            if image_type is not None:
                images.append(Part(image=(image_type, _text(data[image_type]).replace("\n", ""))))
            elif "text/plain" in data:
                texts.append(_text(data["text/plain"]))
    parts: list[Part] = []
    if texts:
        joined = "".join(t if t.endswith("\n") else t + "\n" for t in texts).rstrip("\n")
        if len(joined) > cap:
            joined = (
                f"{joined[:cap]}\n[output cut at {cap:,} of {len(joined):,} characters; the full output is in "
                f"the notebook JSON under cells[{index}].outputs: Read the file with offset and limit to see it]"
            )
        parts.append(Part(text=f'<output cell="{cid}">\n{joined}\n</output>'))
    parts.extend(images)
    return parts


def _merge_text(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if part.text is not None and merged and merged[-1].text is not None:
            merged[-1] = Part(text=f"{merged[-1].text}\n{part.text}")
        else:
            merged.append(part)
    return merged
