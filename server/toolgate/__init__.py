"""toolgate: the tool layer of a coding agent — the code between a model's tool_use and your files and shell."""

from __future__ import annotations

__version__ = "0.1.0"
