"""Denial tracking: when automatic decisions keep saying no, stop deciding automatically for a moment.

In an automatic mode (acceptEdits, bypassPermissions) nobody watches each call. A model that is refused
three times in a row, or twenty times in a session, is probably working against the rules; the next call
that would have been allowed automatically is handed to the human instead, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CONSECUTIVE = 3
MAX_TOTAL = 20


@dataclass(slots=True)
class DenialTracker:
    max_consecutive: int = MAX_CONSECUTIVE
    max_total: int = MAX_TOTAL
    consecutive: int = 0
    total: int = 0
    last_reason: str = ""

    def record_denial(self, reason: str) -> None:
        self.consecutive += 1
        self.total += 1
        self.last_reason = reason

    def record_allow(self) -> None:
        self.consecutive = 0

    def hand_back_reason(self) -> str | None:
        """Why the next automatic allow should go to the human instead, or None."""
        if self.consecutive >= self.max_consecutive:
            what = f"the last {self.consecutive} calls were refused automatically"
        elif self.total >= self.max_total:
            what = f"{self.total} calls were refused automatically in this session"
        else:
            return None
        return f"{what} (most recently: {self.last_reason}); a person should look before anything else runs"

    def handed_back(self) -> None:
        """The human now has the decision: start counting afresh."""
        self.consecutive = 0
        if self.total >= self.max_total:
            self.total = 0
