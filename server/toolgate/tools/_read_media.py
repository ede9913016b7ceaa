"""What Read does with files that are not plain text: images, PDFs, notebooks, and binaries it refuses."""

from __future__ import annotations

import base64
import io
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from toolgate.core.errors import StateError
from toolgate.core.messages import ContentBlock, ImageBlock, ImageSource, TextBlock
from toolgate.text import notebook
from toolgate.text.sizes import format_bytes
from toolgate.text.tokens import estimate_tokens

# The image and PDF libraries are imported by the first image or PDF read: together they take about 0.3 s to import,
# which every session paid when it started (the Read tool module is imported with the others).
if TYPE_CHECKING:
    from PIL import Image

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_IMAGE_EDGE = 2000  # pixels on the long side; larger images are downscaled
MAX_IMAGE_BYTES = 3_750_000  # 5 MB once base64-encoded: the most a model API accepts per image
MAX_MEDIA_FILE_BYTES = 64 * 1024 * 1024
MAX_PDF_PAGES_PER_READ = 20
MAX_PDF_PAGES_WITHOUT_RANGE = 10
MAX_PDF_PAGE_IMAGES = 5  # pages without text (scans, drawings) shown as images, per read
PDF_PAGE_EDGE = 1568  # pixels on a rendered page's long side: what model APIs take without shrinking it
MAX_NOTEBOOK_IMAGES = 20

# Formats Read refuses by name: their bytes mean nothing as text. Images and PDFs it reads are not here.
_BINARY_FORMATS = (
    "bmp ico tif tiff psd heic avif raw cr2 nef",  # images it does not show
    "mp3 wav flac ogg oga m4a aac wma opus mid midi mp4 m4v mov avi mkv webm wmv flv mpg mpeg",  # audio, video
    "zip tar gz tgz bz2 xz zst 7z rar lz lzma iso dmg cab jar war ear whl egg apk ipa",  # archives
    "exe dll so dylib bin o a obj lib ko elf msi deb rpm app com class pyc pyo pyd wasm node rlib beam",  # code
    "doc docx xls xlsx ppt pptx odt ods odp pages numbers key ttf otf woff woff2 eot",  # documents, fonts
    "sqlite sqlite3 db mdb accdb dbf parquet feather arrow avro orc npy npz pkl pickle h5 hdf5",  # data
    "pt pth onnx safetensors ckpt tflite swf fla blend fbx glb 3ds sketch fig xd ai indd lockb dat",  # models, design
)
BINARY_SUFFIXES = frozenset("." + name for line in _BINARY_FORMATS for name in line.split())

_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def binary_refusal(path: Path, shown: str) -> str | None:
    suffix = path.suffix.lower()
    if suffix not in BINARY_SUFFIXES:
        return None
    return (
        f"{shown} is a binary {suffix} file; its bytes are not text, so Read does not show them. Inspect it with "
        "a program made for the format (for example `file`, `unzip -l`, `tar -tf`, `sqlite3` or `xxd | head`)."
    )


# --- images ------------------------------------------------------------------------------------------------


def image_block(data: bytes, label: str) -> tuple[ImageBlock, str]:
    """An image content block (downscaled when large) and a sentence stating the original size."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise StateError(f"{label} is empty (0 bytes), so there is no image to show.")
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            fmt = image.format or ""
            width, height = image.size
            note = f"{label}: {fmt or 'image'} {width}×{height} pixels, {format_bytes(len(data))}."
            if fmt in _MEDIA_TYPES and max(width, height) <= MAX_IMAGE_EDGE and len(data) <= MAX_IMAGE_BYTES:
                return _block(_MEDIA_TYPES[fmt], data), note
            payload, media_type, size = _downscale(image)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise StateError(f"{label} cannot be decoded as an image ({exc}).") from None
    scale = width / size[0]
    note += (
        f" Shown downscaled to {size[0]}×{size[1]}: multiply coordinates you read off it by {scale:.2f} to get "
        "the original's."
    )
    return _block(media_type, payload), note


def _block(media_type: str, data: bytes) -> ImageBlock:
    return ImageBlock(source=ImageSource(media_type=media_type, data=base64.b64encode(data).decode("ascii")))


def _downscale(image: Image.Image) -> tuple[bytes, str, tuple[int, int]]:
    from PIL import Image

    frame = image.convert("RGBA") if image.mode in ("P", "LA", "RGBA", "PA") else image.convert("RGB")
    edge = min(MAX_IMAGE_EDGE, max(frame.size))
    while True:
        copy = frame.copy()
        copy.thumbnail((edge, edge), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        if copy.mode == "RGBA":
            copy.save(out, format="PNG", optimize=True)
            media_type = "image/png"
        else:
            copy.save(out, format="JPEG", quality=85)
            media_type = "image/jpeg"
        if out.tell() <= MAX_IMAGE_BYTES or edge <= 256:
            return out.getvalue(), media_type, copy.size
        edge = edge * 3 // 4


def read_image(path: Path, shown: str, check: Callable[[int], None] | None = None) -> list[ContentBlock]:
    """`check`: told the descriptor of the file once it is open, before anything is read (it may refuse)."""
    data = _read_capped(path, shown, check)
    block, note = image_block(data, f"Image {shown}")
    return [TextBlock(text=note), block]


def _read_capped(path: Path, shown: str, check: Callable[[int], None] | None) -> bytes:
    with open(path, "rb") as handle:
        if check is not None:
            check(handle.fileno())
        data = handle.read(MAX_MEDIA_FILE_BYTES + 1)
    if len(data) > MAX_MEDIA_FILE_BYTES:
        raise StateError(f"{shown} is over {format_bytes(MAX_MEDIA_FILE_BYTES)}, too large for Read to open.")
    return data


# --- PDFs --------------------------------------------------------------------------------------------------

_PAGES = re.compile(r"^\s*(\d+)\s*(?:(-)\s*(\d+)?)?\s*$")


def parse_pages(spec: str) -> tuple[int, int | None]:
    """ "3" → (3, 3); "2-5" → (2, 5); "7-" → (7, None). Pages are 1-based; at most 20 in a range."""
    match = _PAGES.match(spec)
    if not match or int(match.group(1)) < 1 or (match.group(3) and int(match.group(3)) < int(match.group(1))):
        raise StateError(
            f'pages "{spec}" is not a page range. Use one page ("3"), a range ("1-5") or an open range ("10-"); '
            "pages count from 1."
        )
    first = int(match.group(1))
    last = int(match.group(3)) if match.group(3) else (None if match.group(2) else first)
    if last is not None and last - first + 1 > MAX_PDF_PAGES_PER_READ:
        raise StateError(
            f'pages "{spec}" covers {last - first + 1} pages; read at most {MAX_PDF_PAGES_PER_READ} per call '
            f'(for example "{first}-{first + MAX_PDF_PAGES_PER_READ - 1}").'
        )
    return first, last


def read_pdf(
    path: Path, shown: str, pages: str | None, max_tokens: int, check: Callable[[int], None] | None = None
) -> list[ContentBlock]:
    """The text of the pages asked for; a page with no text (a scan, a drawing) is shown as an image instead.
    `check`: as for `read_image`."""
    return pdf_blocks(_read_capped(path, shown, check), shown, pages, max_tokens)


def pdf_blocks(data: bytes, shown: str, pages: str | None, max_tokens: int) -> list[ContentBlock]:
    """`read_pdf` for a PDF already in memory (WebFetch's downloads); `shown` names it in every message."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise StateError(f"{shown} is password-protected, so its text cannot be read.")
        count = len(reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise StateError(f"{shown} cannot be read as a PDF ({exc}).") from None
    if count == 0:
        return [TextBlock(text=f"(The PDF {shown} has no pages.)")]
    if pages is None:
        if count > MAX_PDF_PAGES_WITHOUT_RANGE:
            raise StateError(
                f"{shown} has {count} pages, too many to read in one go. Read it in parts with pages, for example "
                f'pages="1-5", at most {MAX_PDF_PAGES_PER_READ} pages per call.'
            )
        first, last = 1, count
    else:
        first, wanted_last = parse_pages(pages)
        if first > count:
            raise StateError(f"{shown} has only {count} page{'s' if count != 1 else ''}; ask for pages 1-{count}.")
        last = min(wanted_last or first + MAX_PDF_PAGES_PER_READ - 1, count)

    texts: dict[int, str] = {}
    for number in range(first, last + 1):
        try:
            texts[number] = (reader.pages[number - 1].extract_text() or "").strip()
        except Exception as exc:  # pypdf raises many kinds of error on damaged pages
            texts[number] = f"(this page's text could not be extracted: {exc})"
    textless = [number for number, text in texts.items() if not text]
    images = _render_pages(data, textless[:MAX_PDF_PAGE_IMAGES])

    header = f"PDF {shown}: {count} page{'s' if count != 1 else ''}, {format_bytes(len(data))}. Pages {first}–{last}:"
    blocks: list[ContentBlock] = []
    text_parts = [header]
    for number in range(first, last + 1):
        if texts[number]:
            text_parts.append(f"--- page {number} ---\n{texts[number]}")
            continue
        rendered = images.get(number)
        if isinstance(rendered, ImageBlock):
            text_parts.append(f"--- page {number} ---\n(no text layer: a scan or a drawing; shown as an image)")
            blocks.append(TextBlock(text="\n\n".join(text_parts)))
            blocks.append(rendered)
            text_parts = []
        elif rendered is not None:
            text_parts.append(f"--- page {number} ---\n(no text layer, and it could not be drawn: {rendered})")
        else:
            text_parts.append(
                f"--- page {number} ---\n(no text layer: a scan or a drawing; at most {MAX_PDF_PAGE_IMAGES} such "
                f'pages are shown as images per read, so read it alone with pages="{number}" to see it)'
            )
    if last < count:
        text_parts.append(f'(Pages {last + 1}–{count} not shown; read them with pages="{last + 1}-".)')
    if text_parts:
        blocks.append(TextBlock(text="\n\n".join(text_parts)))
    tokens = sum(estimate_tokens(block.text) for block in blocks if isinstance(block, TextBlock))
    if tokens > max_tokens:
        raise StateError(
            f"Pages {first}–{last} of {shown} come to about {tokens:,} tokens, over the {max_tokens:,}-token limit "
            "for one read. Ask for fewer pages."
        )
    return blocks


# pdfium keeps global state and is not thread-safe, and Reads run in worker threads: one render at a time.
_PDFIUM_LOCK = threading.Lock()


def _render_pages(data: bytes, numbers: list[int]) -> dict[int, ImageBlock | str]:
    """Each page drawn as an image block (its long side PDF_PAGE_EDGE pixels), or why it could not be drawn."""
    import pypdfium2

    if not numbers:
        return {}
    out: dict[int, ImageBlock | str] = {}
    with _PDFIUM_LOCK:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as exc:
            return dict.fromkeys(numbers, f"pdfium could not open the file ({exc})")
        try:
            for number in numbers:
                try:
                    page = document[number - 1]
                    width, height = page.get_size()  # in points
                    scale = PDF_PAGE_EDGE / max(width, height, 1.0)
                    image = page.render(scale=scale).to_pil()
                    page.close()
                except (pypdfium2.PdfiumError, ValueError, OSError) as exc:
                    out[number] = str(exc)
                    continue
                encoded = io.BytesIO()
                image.convert("RGB").save(encoded, format="PNG", optimize=True)
                block, _ = image_block(encoded.getvalue(), f"page {number}")
                out[number] = block
        finally:
            document.close()
    return out


# --- notebooks ---------------------------------------------------------------------------------------------


def render_notebook(text: str, shown: str, max_tokens: int) -> list[ContentBlock]:
    try:
        nb, _ = notebook.parse(text)
    except notebook.NotebookError as exc:
        raise StateError(
            f"{shown} cannot be shown as a notebook: {exc}. Read it with offset and limit as text."
        ) from None
    cells = len(nb["cells"])
    blocks: list[ContentBlock] = [TextBlock(text=f"Notebook {shown}: {cells} cell{'s' if cells != 1 else ''}.")]
    text_tokens = 0
    images = 0
    for part in notebook.render(nb):
        if part.text is not None:
            text_tokens += estimate_tokens(part.text)
            blocks.append(TextBlock(text=part.text))
        elif part.image is not None:
            images += 1
            if images > MAX_NOTEBOOK_IMAGES:
                blocks.append(TextBlock(text=f"(an output image left out: at most {MAX_NOTEBOOK_IMAGES} per read)"))
                continue
            _, data = part.image
            try:
                block, _ = image_block(base64.b64decode(data), "an output image")
            except (StateError, ValueError):
                blocks.append(TextBlock(text="(an output image could not be decoded and is left out)"))
                continue
            blocks.append(block)
    if text_tokens > max_tokens:
        raise StateError(
            f"{shown} renders to about {text_tokens:,} tokens, over the {max_tokens:,}-token limit for one read. "
            "Read the raw notebook JSON in parts with offset and limit instead."
        )
    return blocks
