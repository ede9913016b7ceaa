"""An item of the model's task list (TodoWrite): the shape the tool takes, the chat shows and transcripts keep.

Apart from the tool so that the chat's events and the sidecar's protocol can name it without importing the tool
machinery (the protocol is imported before `initialize`, which every editor window waits for).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(min_length=1, description="A short stable id for the item (keep it when the item changes).")
    content: str = Field(min_length=1, description="What has to be done, as an imperative sentence.")
    status: TodoStatus = Field(description="pending, in_progress (at most one item at a time) or completed.")
