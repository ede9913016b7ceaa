"""What the ladder decides from: one call's facts, the rules, the mode and the places it may work in.

Its own module because both the ladder (steps 1-5, `ladder.py`) and its coverage steps (6-7, `coverage.py`)
take it, and the ladder calls coverage: defined in either, it would close an import loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.core.paths import Resolutions, resolved_forms, resolved_texts
from toolgate.core.permission import PermissionCheck, PermissionMode
from toolgate.permissions.facts import CallFacts
from toolgate.permissions.rules import Rule
from toolgate.permissions.sources import RuleBook


@dataclass(frozen=True, slots=True)
class LadderInput:
    facts: CallFacts
    book: RuleBook
    mode: PermissionMode
    working_dirs: Sequence[Path]
    workspace: Path
    home: Path
    tool_check: PermissionCheck
    # Whether a Bash rule's fixed command part is, by itself, read-only (`git log` is; `npm test` is not).
    reader_rule: Callable[[Rule], bool] = lambda _rule: False
    # The command will run in a working sandbox whose autoAllow is on (the ladder's sandbox step).
    sandbox_auto_allow: bool = False
    # This decision's path resolutions: its steps (rules, safety, coverage) ask about the same paths, each
    # resolved once here. A LadderInput is one decision, so a symlink swapped before the next is seen.
    resolved: Resolutions = field(default_factory=dict)

    def forms(self, path: Path) -> list[Path]:
        """`resolved_forms` of `path`, resolved once for this decision."""
        return resolved_forms(path, self.resolved)

    def texts(self, path: Path) -> tuple[str, ...]:
        """The same forms as strings (`resolved_texts`), for steps that only compare them."""
        return resolved_texts(path, self.resolved)
