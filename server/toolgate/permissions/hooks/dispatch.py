"""Running an event's hooks for a session: which hooks match, the JSON they read, where they run, and the merge.

One `HookDispatcher` per permission engine (it holds the engine's current hooks; the engine replaces them on every
reload). The engine runs the tool events (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure); the
agent loop runs the session's own (SessionStart, UserPromptSubmit, Stop, SubagentStop, PreCompact, SessionEnd);
the editor's approver runs Notification. Every hook of an event runs concurrently, with the scrubbed environment
(core/child_env.py: secrets out, apart from the person's own env.passThrough for the person's own hooks), in the
session's sandbox when it is on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from toolgate.core.child_env import child_environment
from toolgate.core.containment import CONTAINMENT
from toolgate.core.context import HOME_DIR
from toolgate.core.tool_session import ToolSession
from toolgate.permissions.hooks.config import ConfiguredHook
from toolgate.permissions.hooks.events import MATCHED_FIELD, TOOL_EVENTS, HookEvent
from toolgate.permissions.hooks.outcome import HookOutcome, merge
from toolgate.permissions.hooks.process import HookRun, run_hook
from toolgate.session_files import TRANSCRIPT_FILE


def common_fields(event: HookEvent, session: ToolSession) -> dict[str, Any]:
    """The fields every event's JSON has."""
    transcript = session.data_dir / TRANSCRIPT_FILE if session.data_dir is not None else None
    return {
        "hook_event_name": event,
        "event": event,
        "session_id": session.id,
        "cwd": str(session.cwd),
        "transcript_path": str(transcript) if transcript is not None else None,
        "permission_mode": session.mode.value,
    }


class HookDispatcher:
    def __init__(self, workspace: Path, environ: Mapping[str, str], pass_through: Callable[[], Sequence[str]]) -> None:
        self._workspace = workspace
        self._environ = dict(environ)
        self._pass_through = pass_through
        self._hooks: list[ConfiguredHook] = []
        self._matching: dict[tuple[HookEvent, tuple[str, ...]], list[ConfiguredHook]] = {}

    def replace(self, hooks: Sequence[ConfiguredHook]) -> None:
        """The hooks that may run from now on (after a settings reload)."""
        self._hooks = list(hooks)
        self._matching = {}

    def matching(self, event: HookEvent, names: Sequence[str] = ()) -> list[ConfiguredHook]:
        """The hooks for `event` whose matcher covers one of `names` (a tool's name and aliases, or the event's
        matched value); events without a matcher get all theirs. Remembered until the next `replace`."""
        key = (event, tuple(names))
        found = self._matching.get(key)
        if found is None:
            uses_matcher = event in TOOL_EVENTS or event in MATCHED_FIELD
            found = [h for h in self._hooks if h.event == event and (not uses_matcher or h.matches(key[1]))]
            self._matching[key] = found
        return found

    async def run(
        self,
        event: HookEvent,
        session: ToolSession,
        fields: Mapping[str, Any],
        *,
        names: Sequence[str] | None = None,
        hooks: Sequence[ConfiguredHook] | None = None,
    ) -> HookOutcome:
        """Run the event's matching hooks (or `hooks`, already matched) on the common fields plus `fields`.
        `names`: what the matcher is matched against (default: the event's matched field, if it has one)."""
        if hooks is None:
            if names is None:
                matched = MATCHED_FIELD.get(event)
                names = (str(fields.get(matched, "")),) if matched else ()
            hooks = self.matching(event, names)
        if not hooks:
            return HookOutcome()
        payload = json.dumps({**common_fields(event, session), **fields}, ensure_ascii=False, default=str)
        data = payload.encode("utf-8")
        env = {
            **self._environ,
            "TOOLGATE_PROJECT_DIR": str(self._workspace),
            "TOOLGATE_SESSION_ID": session.id,
        }
        runs: list[HookRun | None] = [None] * len(hooks)

        async def one(index: int) -> None:
            runs[index] = await self._run_one(hooks[index], data, session, env)

        async with anyio.create_task_group() as group:
            for index in range(len(hooks)):
                group.start_soon(one, index)
        return merge(event, [run for run in runs if run is not None])  # configuration order

    async def _run_one(
        self, hook: ConfiguredHook, payload: bytes, session: ToolSession, env: Mapping[str, str]
    ) -> HookRun:
        # The person's own hooks get the secrets the person named in env.passThrough, as Bash does; a hook from
        # the workspace's files never does, since the workspace wrote it.
        kept = () if hook.from_workspace else tuple(self._pass_through())
        try:
            place = session.deps.get(CONTAINMENT).hook_place(session.working_dirs, session.deps.get(HOME_DIR))
        except Exception as exc:  # the sandbox should run but cannot: the hook must not run outside it
            return HookRun(hook, None, failure=f"could not be started in the sandbox ({exc})")
        try:
            return await run_hook(hook, payload, session.cwd, child_environment(env, pass_through=kept), place)
        finally:
            place.finish()
