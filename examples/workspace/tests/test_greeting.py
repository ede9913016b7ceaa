from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from greeting import greet


def test_greets_by_name() -> None:
    assert greet("Ada") == "Hello, Ada!"


def test_greets_the_world_when_the_name_is_empty() -> None:
    assert greet("") == "Hello, world!"
