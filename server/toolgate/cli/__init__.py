"""The `toolgate` command line. Only this package (and sidecar/) knows about argv and stdio framing."""

from __future__ import annotations

from toolgate.cli.main import main

__all__ = ["main"]
