"""How checkpoints behave: caps, retention and what is never captured. Defaults suit a normal repository."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from toolgate.checkpoints.capture import DEFAULT_MAX_FILE_BYTES

# Folders that are rebuilt, not written by hand: capturing them would cost time and space and restore nothing
# anyone wants back. gitignore syntax; the workspace's own .gitignore and .git/info/exclude apply as well.
DEFAULT_IGNORE = (
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".gradle/",
    ".next/",
    ".cache/",
    "target/debug/",
    "target/release/",
)


class CheckpointSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool = True
    max_file_bytes: int = Field(DEFAULT_MAX_FILE_BYTES, ge=0)
    time_cap_seconds: float = Field(60.0, gt=0)
    keep_per_session: int = Field(100, ge=1)
    max_store_bytes: int = Field(1024 * 1024 * 1024, ge=0)
    ignore: list[str] = Field(default_factory=lambda: list(DEFAULT_IGNORE))
