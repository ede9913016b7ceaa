"""Byte counts as a person reads them in a message: "512 bytes", "3.4 KiB", "12.0 MiB"."""

from __future__ import annotations


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"
