"""What the editor's language servers report (its Problems panel), for the sessions that have an editor.

Headless sessions have none: the dependency is None there, and the Problems tool and the problems step after an
edit are simply not offered. The sidecar installs the source (`toolgate.sidecar.problems`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolgate.core.deps import Dep
from toolgate.text.problems import Problem


class ProblemsUnavailable(Exception):
    """The editor gave no usable answer (gone, refused, off-protocol, or too late); the message says which."""


@dataclass(frozen=True, slots=True)
class FileReport:
    path: Path
    covered: bool  # some language server reports on files like this one; False: the editor waited for nothing
    settled: bool  # the editor had the requested content and its problems stopped changing within the wait
    problems: tuple[Problem, ...]
    heard: bool = True  # a language server has reported on this file's language; False: none yet (maybe starting)
    loaded: bool = True  # the editor's buffer took the content asked about; False: never (its problems are the old's)


@dataclass(frozen=True, slots=True)
class ProblemsReport:
    files: tuple[FileReport, ...]
    waited_seconds: float  # the bound the editor waited within (its setting)

    def of(self, path: Path) -> FileReport | None:
        return next((f for f in self.files if f.path == path), None)


@dataclass(frozen=True, slots=True)
class Wanted:
    """A file to ask about: `text` is the content the editor must hold first (None: as it holds it now)."""

    path: Path
    text: str | None = None


class ProblemsSource(Protocol):
    async def problems(self, files: Sequence[Wanted] | None, *, wait: bool, patient: bool = True) -> ProblemsReport:
        """The problems of `files` (None: every file the editor has problems for). `wait`: until the language
        servers settle, bounded by the editor's setting; `patient`: a server not heard from yet gets the whole wait
        to start reporting (False: a short one). Raises ProblemsUnavailable."""
        ...


EDITOR_PROBLEMS: Dep[ProblemsSource | None] = Dep("editor_problems", lambda _r: None)


def text_digest(text: str) -> str:
    """How the editor recognises a content: the SHA-256 of its UTF-8 bytes with every line ending as LF (the editor
    may hold CRLF text, and normalises a file that mixes the two)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8", "surrogatepass")).hexdigest()
