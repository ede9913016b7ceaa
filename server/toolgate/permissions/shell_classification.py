"""The shell classifier's answer, as the permission ladder reads it: protocols for a classification, its simple
commands and their redirects (any classifier with that shape will do), the classifier itself
(`toolgate.bash.classify`, loaded on first use), and `Unclassified`, the answer of no classifier at all: every
command "cannot be checked", so every command is asked about.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class ShellRedirect(Protocol):
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def writes(self) -> bool: ...


class ShellCommand(Protocol):
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def effective_argv(self) -> tuple[str, ...]: ...
    @property
    def assignments(self) -> tuple[str, ...]: ...
    @property
    def redirects(self) -> Sequence[ShellRedirect]: ...
    @property
    def text(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def write_targets(self) -> tuple[str, ...]: ...
    @property
    def read_targets(self) -> tuple[str, ...]: ...

    # Optional (read with getattr): whether it runs inside $(…) / `…` / <(…).


class ShellClassification(Protocol):
    @property
    def command(self) -> str: ...
    @property
    def parsed(self) -> bool: ...
    @property
    def operators(self) -> tuple[str, ...]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def commands(self) -> Sequence[ShellCommand]: ...
    @property
    def has_substitution(self) -> bool: ...
    @property
    def raw_check_failures(self) -> tuple[str, ...]: ...
    @property
    def write_targets(self) -> tuple[str, ...]: ...


Classifier = Callable[[str], ShellClassification]


@dataclass(frozen=True, slots=True)
class Unclassified:
    """A classifier that knows nothing (for tests of the fail-closed path): nothing is read-only."""

    command: str
    reason: str = "the shell command classifier is not part of this build, so no command can be checked"
    parsed: bool = False
    read_only: bool = False
    commands: tuple[ShellCommand, ...] = ()
    operators: tuple[str, ...] = ()
    has_substitution: bool = False
    raw_check_failures: tuple[str, ...] = ()
    write_targets: tuple[str, ...] = ()


def load_classifier() -> Classifier:
    """The shell classifier (`toolgate.bash.classify`). Tests may pass another one, or `Unclassified`."""
    from toolgate.bash.classify import classify

    return classify
