"""Read for images, PDFs, notebooks and binaries, through the real runtime."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from toolgate.core.messages import ImageBlock, TextBlock, ToolResult
from toolgate.runtime import Runtime
from toolgate.testing import run1


def png(width: int, height: int, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height), color="red" if mode == "RGB" else None).save(out, format="PNG")
    return out.getvalue()


def blocks(result: ToolResult) -> tuple[list[str], list[ImageBlock]]:
    assert not result.is_error, result.text()
    assert isinstance(result.content, list)
    texts = [b.text for b in result.content if isinstance(b, TextBlock)]
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    return texts, images


def decoded_size(block: ImageBlock) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block.source.data))) as image:
        return image.size


# --- images ------------------------------------------------------------------------------------------------


async def test_small_image_is_sent_as_is_with_its_size(rt: Runtime, workspace: Path) -> None:
    data = png(10, 20)
    (workspace / "dot.png").write_bytes(data)
    texts, [image] = blocks(await run1(rt, "Read", file_path="dot.png"))
    assert "PNG 10×20 pixels" in texts[0] and "downscaled" not in texts[0]
    assert image.source.media_type == "image/png" and base64.b64decode(image.source.data) == data


async def test_large_image_is_downscaled_and_the_original_size_stated(rt: Runtime, workspace: Path) -> None:
    (workspace / "wide.png").write_bytes(png(3000, 1500))
    texts, [image] = blocks(await run1(rt, "Read", file_path="wide.png"))
    assert "3000×1500" in texts[0] and "downscaled to 2000×1000" in texts[0] and "1.50" in texts[0]
    assert decoded_size(image) == (2000, 1000)


async def test_transparent_image_stays_png_when_downscaled(rt: Runtime, workspace: Path) -> None:
    (workspace / "alpha.png").write_bytes(png(2400, 2400, mode="RGBA"))
    _, [image] = blocks(await run1(rt, "Read", file_path="alpha.png"))
    assert image.source.media_type == "image/png" and decoded_size(image) == (2000, 2000)


async def test_jpeg_keeps_its_media_type(rt: Runtime, workspace: Path) -> None:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), color="blue").save(out, format="JPEG")
    (workspace / "photo.jpg").write_bytes(out.getvalue())
    texts, [image] = blocks(await run1(rt, "Read", file_path="photo.jpg"))
    assert image.source.media_type == "image/jpeg" and "JPEG 40×30" in texts[0]


async def test_images_are_not_recorded_and_always_sent(rt: Runtime, workspace: Path) -> None:
    (workspace / "dot.png").write_bytes(png(4, 4))
    for _ in range(3):
        _, images = blocks(await run1(rt, "Read", file_path="dot.png"))
        assert len(images) == 1
    assert str(workspace / "dot.png") not in rt.session.file_state


@pytest.mark.parametrize(("content", "message"), [(b"", "empty"), (b"not a png at all", "cannot be decoded")])
async def test_broken_images_are_clear_errors(rt: Runtime, workspace: Path, content: bytes, message: str) -> None:
    (workspace / "bad.png").write_bytes(content)
    result = await run1(rt, "Read", file_path="bad.png")
    assert result.is_error and 'kind="state"' in result.text() and message in result.text()


# --- binaries ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["archive.zip", "lib.so", "Model.PT", "data.sqlite3"])
async def test_binary_extensions_are_refused_with_a_reason(rt: Runtime, workspace: Path, name: str) -> None:
    (workspace / name).write_bytes(b"looks like text but the name says otherwise\n")
    result = await run1(rt, "Read", file_path=name)
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "binary" in result.text()
        and Path(name).suffix.lower() in result.text()
    )


async def test_nul_bytes_under_a_text_name_are_refused(rt: Runtime, workspace: Path) -> None:
    (workspace / "notes.txt").write_bytes(b"text\x00\x00\x00more")
    result = await run1(rt, "Read", file_path="notes.txt")
    assert result.is_error and 'kind="state"' in result.text() and "binary" in result.text()


# --- PDFs --------------------------------------------------------------------------------------------------


def make_pdf(path: Path, pages: int, drawn: frozenset[int] = frozenset()) -> None:
    """Pages saying "Text of page N"; the `drawn` ones have no text, only a blue square (as a scan would)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for number in range(1, pages + 1):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = DecodedStreamObject()
        if number in drawn:
            stream.set_data(b"0 0 1 rg 156 246 300 300 re f")  # a blue square in the middle of the page
        else:
            stream.set_data(f"BT /F1 12 Tf 72 720 Td (Text of page {number}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    with open(path, "wb") as handle:
        writer.write(handle)


async def test_small_pdf_is_read_whole(rt: Runtime, workspace: Path) -> None:
    make_pdf(workspace / "doc.pdf", 3)
    result = await run1(rt, "Read", file_path="doc.pdf")
    assert not result.is_error, result.text()
    text = result.text()
    assert "3 pages" in text and "--- page 1 ---\nText of page 1" in text and "Text of page 3" in text
    assert str(workspace / "doc.pdf") not in rt.session.file_state


async def test_large_pdf_without_pages_is_refused_with_an_instruction(rt: Runtime, workspace: Path) -> None:
    make_pdf(workspace / "book.pdf", 12)
    result = await run1(rt, "Read", file_path="book.pdf")
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "12 pages" in result.text()
        and 'pages="1-5"' in result.text()
    )


@pytest.mark.parametrize(
    ("pages", "shown", "hidden"),
    [("11-12", [11, 12], [10]), ("5", [5], [4, 6]), ("10-", [10, 11, 12], [9])],
)
async def test_pdf_page_ranges(rt: Runtime, workspace: Path, pages: str, shown: list[int], hidden: list[int]) -> None:
    make_pdf(workspace / "book.pdf", 12)
    result = await run1(rt, "Read", file_path="book.pdf", pages=pages)
    assert not result.is_error, result.text()
    for number in shown:
        assert f"Text of page {number}\n" in result.text() + "\n"
    for number in hidden:
        assert f"Text of page {number}\n" not in result.text() + "\n"


async def test_an_unshown_remainder_is_announced(rt: Runtime, workspace: Path) -> None:
    make_pdf(workspace / "long.pdf", 25)
    result = await run1(rt, "Read", file_path="long.pdf", pages="1-")
    assert not result.is_error
    assert "Text of page 20" in result.text() and "Text of page 21" not in result.text()
    assert 'pages="21-"' in result.text()


@pytest.mark.parametrize(
    ("name", "pages", "message"),
    [
        ("book.pdf", "1-25", "at most 20"),
        ("book.pdf", "one", "not a page range"),
        ("book.pdf", "0", "not a page range"),
        ("book.pdf", "13", "only 12 pages"),
        ("notes.txt", "1", "only to PDF"),
    ],
)
async def test_bad_pages_are_clear_errors(rt: Runtime, workspace: Path, name: str, pages: str, message: str) -> None:
    make_pdf(workspace / "book.pdf", 12)
    (workspace / "notes.txt").write_text("x\n")
    result = await run1(rt, "Read", file_path=name, pages=pages)
    assert result.is_error and 'kind="state"' in result.text() and message in result.text()


async def test_a_page_without_text_is_shown_as_an_image(rt: Runtime, workspace: Path) -> None:
    make_pdf(workspace / "scan.pdf", 3, drawn=frozenset({2}))
    result = await run1(rt, "Read", file_path="scan.pdf")
    assert not result.is_error, result.text()
    texts, images = blocks(result)
    assert len(images) == 1
    assert "Text of page 1" in texts[0] and "--- page 2 ---\n(no text layer" in texts[0]
    assert "Text of page 3" in texts[1]  # the page's image comes right after its heading, before page 3
    with Image.open(io.BytesIO(base64.b64decode(images[0].source.data))) as page:
        width, height = page.size
        assert max(width, height) == 1568 and abs(width / height - 612 / 792) < 0.01
        red, green, blue = page.convert("RGB").getpixel((width // 2, height // 2))
        assert blue > 200 and red < 60 and green < 60  # the square, drawn where the PDF put it
        assert page.convert("RGB").getpixel((5, 5)) == (255, 255, 255)


async def test_pages_shown_as_images_are_capped_and_the_rest_announced(rt: Runtime, workspace: Path) -> None:
    make_pdf(workspace / "scans.pdf", 8, drawn=frozenset(range(1, 8)))
    result = await run1(rt, "Read", file_path="scans.pdf")
    assert not result.is_error, result.text()
    _, images = blocks(result)
    assert len(images) == 5
    assert 'read it alone with pages="6"' in result.text() and 'pages="7"' in result.text()
    assert "Text of page 8" in result.text()
    alone = await run1(rt, "Read", file_path="scans.pdf", pages="7")
    assert len(blocks(alone)[1]) == 1


async def test_a_damaged_pdf_is_a_clear_error(rt: Runtime, workspace: Path) -> None:
    (workspace / "bad.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    result = await run1(rt, "Read", file_path="bad.pdf")
    assert result.is_error and 'kind="state"' in result.text() and "cannot be read as a PDF" in result.text()


# --- notebooks ---------------------------------------------------------------------------------------------


def notebook(cells: list[dict[str, Any]]) -> str:
    nb = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def code(cell_id: str, source: str, outputs: list[dict[str, Any]], count: int | None = 1) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "id": cell_id,
        "metadata": {},
        "outputs": outputs,
        "source": source.splitlines(keepends=True),
    }


async def test_notebook_is_rendered_cell_by_cell_with_outputs(rt: Runtime, workspace: Path) -> None:
    image = base64.b64encode(png(8, 8)).decode()
    cells = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some text"]},
        code("calc", "x = 1\nprint(x)", [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]),
        code("plot", "plot()", [{"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}]),
        code(
            "boom",
            "1/0",
            [
                {
                    "output_type": "error",
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                }
            ],
        ),
    ]
    (workspace / "nb.ipynb").write_text(notebook(cells))
    result = await run1(rt, "Read", file_path="nb.ipynb")
    texts, [picture] = blocks(result)
    joined = "\n".join(texts)
    assert "4 cells" in joined
    assert '<cell id="intro" type="markdown">\n# Title\nSome text\n</cell>' in joined
    assert '<cell id="calc" type="code" execution_count="1">\nx = 1\nprint(x)\n</cell>' in joined
    assert '<output cell="calc">\n1\n</output>' in joined
    assert "ZeroDivisionError: division by zero" in joined and "\x1b" not in joined
    assert picture.source.media_type == "image/png"
    # The image sits between the plot cell and the next cell, in notebook order.
    assert isinstance(result.content, list)
    kinds = ["image" if isinstance(b, ImageBlock) else b.text for b in result.content]
    at = kinds.index("image")
    assert 'id="plot"' in kinds[at - 1] and 'id="boom"' in kinds[at + 1]
    content = (await run1(rt, "Read", file_path="nb.ipynb", offset=1, limit=400)).text()
    assert '"id": "plot"' in content  # offset/limit read the raw JSON


async def test_long_outputs_are_capped_and_announced(rt: Runtime, workspace: Path) -> None:
    long = "".join(f"row {i}\n" for i in range(5000))
    cells = [code("big", "dump()", [{"output_type": "stream", "name": "stdout", "text": long}])]
    (workspace / "nb.ipynb").write_text(notebook(cells))
    texts, _ = blocks(await run1(rt, "Read", file_path="nb.ipynb"))
    joined = "\n".join(texts)
    assert "output cut at 10,000 of" in joined and "cells[0].outputs" in joined
    assert "row 4999" not in joined


async def test_notebook_read_is_recorded_and_a_repeat_says_unchanged(rt: Runtime, workspace: Path) -> None:
    text = notebook([code("a", "1", [])])
    (workspace / "nb.ipynb").write_text(text)
    first = await run1(rt, "Read", file_path="nb.ipynb")
    assert not first.is_error
    record = rt.session.file_state.get(workspace / "nb.ipynb")
    assert record is not None and record.full and record.content == text
    again = await run1(rt, "Read", file_path="nb.ipynb")
    assert "has not changed" in again.text()


async def test_invalid_notebook_json_is_a_clear_error(rt: Runtime, workspace: Path) -> None:
    (workspace / "nb.ipynb").write_text("{not json")
    result = await run1(rt, "Read", file_path="nb.ipynb")
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "not valid JSON" in result.text()
        and "offset and limit" in result.text()
    )


async def test_notebook_images_beyond_the_cap_are_announced(rt: Runtime, workspace: Path) -> None:
    image = base64.b64encode(png(2, 2)).decode()
    outputs = [{"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}] * 22
    (workspace / "nb.ipynb").write_text(notebook([code("many", "show()", outputs)]))
    texts, images = blocks(await run1(rt, "Read", file_path="nb.ipynb"))
    assert len(images) == 20
    assert sum("at most 20 per read" in t for t in texts) == 2
