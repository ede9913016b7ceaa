"""What WebFetch makes of a response body: Markdown from HTML, text, pretty JSON, a PDF's pages, an image.

HTML goes through markdownify (on BeautifulSoup with the standard library's parser): it keeps the whole
document (headings, lists, tables, code blocks, links), which is what documentation pages need, where a
main-content extractor would drop the navigation and the API tables a model came for. Scripts, styles and
other non-content elements are removed before converting.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from email.message import Message

from toolgate.core.errors import StateError
from toolgate.core.messages import ContentBlock, TextBlock
from toolgate.text.encoding import UndecodableError, decode
from toolgate.tools._read_media import MAX_PDF_PAGES_PER_READ, image_block, pdf_blocks

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_TEXT_APPLICATION_TYPES = frozenset(
    {"application/javascript", "application/ecmascript", "application/xml", "application/x-sh", "application/toml",
     "application/yaml", "application/x-yaml", "application/sql", "application/graphql", "application/x-ndjson"}
)  # fmt: skip
_DROPPED_ELEMENTS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "head")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BLANK_RUNS = re.compile(r"\n{3,}")
_SNIFF = 1024


@dataclass(frozen=True, slots=True)
class Converted:
    """A body made readable: `text` for the paging window, or ready blocks (an image, a PDF's pages)."""

    kind: str  # "html", "text", "json", "pdf", "image"
    text: str = ""
    blocks: tuple[ContentBlock, ...] = ()
    title: str | None = None
    note: str | None = None  # something the model should know (e.g. a charset that could not be used)


def media_type(header: str | None) -> tuple[str, str | None]:
    """(`type/subtype` in lower case, the charset parameter) of a Content-Type header; ("", None) when absent."""
    if not header:
        return "", None
    message = Message()
    message["content-type"] = header
    charset = message.get_param("charset")
    return message.get_content_type().lower(), charset if isinstance(charset, str) else None


def sniff_type(data: bytes) -> str:
    """The type of a body sent without a Content-Type, from its first bytes."""
    head = data[:_SNIFF].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head:
        return "text/html"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith((b"{", b"[")):
        return "application/json"
    return "text/plain" if b"\x00" not in data[:8192] else "application/octet-stream"


def is_text_type(kind: str) -> bool:
    return (
        kind.startswith("text/")
        or kind in _TEXT_APPLICATION_TYPES
        or kind.endswith(("+xml", "+json"))
        or kind in ("application/json", "application/xhtml+xml")
    )


def is_known_type(kind: str) -> bool:
    """Whether WebFetch shows bodies of this type at all (asked before the body is downloaded)."""
    return is_text_type(kind) or kind in IMAGE_TYPES or kind == "application/pdf"


def decode_text(data: bytes, charset: str | None, kind: str) -> tuple[str, str | None]:
    """The body as text: the header's charset, else (HTML) a <meta> charset, else a BOM, else UTF-8 with a
    single-byte fallback. Returns the text and a note when a named charset could not be used."""
    names: list[str] = []
    if charset:
        names.append(charset)
    if kind in ("text/html", "application/xhtml+xml") and not charset:
        found = _META_CHARSET.search(data[:4096])
        if found:
            names.append(found.group(1).decode("ascii", "replace"))
    for name in names:
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            return _fallback(data), f"the page names the unknown charset {name!r}; it was read as UTF-8"
        if data.startswith(codecs.BOM_UTF8) and codec == "utf-8":
            codec = "utf-8-sig"
        return data.decode(codec, errors="replace"), None
    return _fallback(data), None


def _fallback(data: bytes) -> str:
    try:
        return decode(data).text
    except UndecodableError:
        return data.decode("utf-8", errors="replace")


def html_to_markdown(html: str) -> tuple[str, str | None]:
    """(Markdown, the page title) of an HTML document."""
    # Imported by the first HTML page: together about 0.15 s, which every session paid when it started.
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag is not None else None
    for element in soup.find_all(_DROPPED_ELEMENTS):
        element.decompose()
    markdown = MarkdownConverter(heading_style="ATX", bullets="-", code_language="").convert_soup(soup)
    return _BLANK_RUNS.sub("\n\n", markdown).strip(), title or None


def convert(data: bytes, content_type: str | None, label: str) -> Converted:
    """Make `data` readable for the model; `StateError` naming the type for anything WebFetch does not show."""
    kind, charset = media_type(content_type)
    if not kind or kind == "application/octet-stream":
        kind = sniff_type(data)
    if kind in IMAGE_TYPES:
        block, size_note = image_block(data, label)
        return Converted("image", blocks=(TextBlock(text=size_note), block))
    if kind == "application/pdf":
        # The first pages, like a Read without pages; pages past them are named in the result.
        pages = f"1-{MAX_PDF_PAGES_PER_READ}"
        # No token limit here: WebFetch pages the text itself (max_chars/offset and the output store).
        return Converted("pdf", blocks=tuple(pdf_blocks(data, label, pages, max_tokens=10**9)))
    if not is_text_type(kind):
        raise StateError(
            f"{label} is {kind}, which WebFetch does not show (it reads HTML, text, JSON, PDF and PNG/JPEG/GIF/WebP "
            "images). If you need this file, ask the user to download it into the workspace."
        )
    text, note = decode_text(data, charset, kind)
    if kind in ("text/html", "application/xhtml+xml"):
        markdown, title = html_to_markdown(text)
        return Converted("html", text=markdown, title=title, note=note)
    if kind == "application/json" or kind.endswith("+json"):
        try:
            return Converted("json", text=json.dumps(json.loads(text), indent=2, ensure_ascii=False), note=note)
        except ValueError as exc:
            return Converted("text", text=text, note=f"the body is labelled JSON but does not parse ({exc})")
    return Converted("text", text=text, note=note)
