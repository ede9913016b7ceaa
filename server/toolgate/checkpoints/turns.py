"""A session's turns as the checkpoints tell them: which checkpoint starts the turn of which prompt, which one
ends it, and which files the turn's tool calls changed (Bash's included: they are captured like any other; see
checkpoints.attribution for why the person's edits between calls are not among them).

A turn runs from its turn checkpoint (taken before the prompt joined the transcript) to the last checkpoint of
the same turn before any restore. What the turn checkpoint itself lists as changed happened before the prompt
(the person's own edits between turns), so it is not the turn's.
"""

from __future__ import annotations

import bisect
import hashlib

from pydantic import BaseModel, ConfigDict

from toolgate.checkpoints.models import Checkpoint


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    turn: int
    start: str  # the turn checkpoint: restoring it goes back to before the prompt
    end: str  # the turn's last checkpoint: start → end is what the turn did
    prompt: int | None  # which prompt of the conversation as it is now (0 = the first); None: cut away since
    changed: list[str]


def session_turns(checkpoints: list[Checkpoint], transcript: bytes, prompt_offsets: list[int]) -> list[Turn]:
    """`prompt_offsets`: where each prompt's line starts in `transcript`, in order."""
    current = _points_in(transcript, [c for c in checkpoints if c.kind == "turn"])
    turns: list[Turn] = []
    for at, start in enumerate(checkpoints):
        if start.kind != "turn":
            continue
        end = start
        changed: dict[str, None] = {}
        for later in checkpoints[at + 1 :]:
            if later.turn != start.turn or later.kind != "tool":
                break
            end = later
            if later.agent_since is not None:  # what a call changed; not the person's edits between calls
                changed.update(dict.fromkeys(later.changed))
        prompt: int | None = None
        if start.id in current:
            index = bisect.bisect_left(prompt_offsets, current[start.id])
            prompt = index if index < len(prompt_offsets) else None  # a turn whose prompt was never written
        turns.append(Turn(turn=start.turn, start=start.id, end=end.id, prompt=prompt, changed=sorted(changed)))
    # After a conversation rewind, the turn that was cut away and the turn that followed the rewind start at
    # the same point; the prompt there is the newer turn's.
    claimed: set[int] = set()
    for index in reversed(range(len(turns))):
        prompt = turns[index].prompt
        if prompt is not None and prompt in claimed:
            turns[index] = turns[index].model_copy(update={"prompt": None})
        elif prompt is not None:
            claimed.add(prompt)
    return turns


def _points_in(transcript: bytes, checkpoints: list[Checkpoint]) -> dict[str, int]:
    """The checkpoints whose point of the conversation is in `transcript` (a prefix of it), with that point.
    One pass of hashing, however many there are."""
    marked = sorted((c.conversation.size, c.conversation.sha256, c.id) for c in checkpoints if c.conversation)
    found: dict[str, int] = {}
    running = hashlib.sha256()
    hashed = 0
    for size, sha, checkpoint_id in marked:
        if size > len(transcript):
            break
        running.update(transcript[hashed:size])
        hashed = size
        if running.hexdigest() == sha:
            found[checkpoint_id] = size
    return found
