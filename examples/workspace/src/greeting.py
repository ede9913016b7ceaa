"""Greetings for the demo workspace."""

from __future__ import annotations


def greet(name: str) -> str:
    """Greet someone by name; an empty name should greet the world."""
    return f"Hello, {name}!"
