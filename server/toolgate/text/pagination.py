"""Pages of a result list, and the sentence that announces one (a cap is never silent)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Page:
    """Items `start` (inclusive) to `stop` (exclusive) of `total`."""

    start: int
    stop: int
    total: int

    @property
    def count(self) -> int:
        return self.stop - self.start  # 0 when the offset is past the end

    @property
    def complete(self) -> bool:
        """Everything there is, from the first item."""
        return self.start == 0 and self.stop == self.total

    @property
    def has_more(self) -> bool:
        return self.stop < self.total


def paginate(total: int, offset: int, limit: int) -> Page:
    """`limit` 0 means no limit; an offset past the end gives an empty page (announced by `page_notice`)."""
    start = max(offset, 0)
    stop = max(start, total if limit <= 0 else min(total, start + limit))
    return Page(start, stop, total)


def page_notice(page: Page, noun: str, *, narrow: str = "", at_least: bool = False) -> str | None:
    """The announcement for a page that is not the whole list, or None when nothing was left out.

    `noun` is plural ("files", "lines"); `narrow` is an optional clause on how to get fewer results; `at_least`:
    the list was cut short, so its total is a lower bound.
    """
    if page.complete or page.total == 0:
        return None
    if page.count == 0:
        found = (
            f"only {page.total:,} {noun} were found before the search stopped"
            if at_least
            else f"there are only {page.total:,} {noun}"
        )
        return f"Offset {page.start} is past the end: {found}. Use an offset from 0 to {page.total - 1}."
    text = f"Showing {noun} {page.start + 1:,}–{page.stop:,} of {'at least ' if at_least else ''}{page.total:,}"
    if page.has_more:
        text += f" — use offset {page.stop} for more"
        if narrow:
            text += f", or {narrow}"
    return text + "."
