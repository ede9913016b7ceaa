"""Chats in the sidecar: which model they talk to, and one AgentChat per open session, created on demand.

The editor hands over the provider settings (and the API key, which lives in its secret storage and only
in this process's memory here). Every chat event goes to the editor as a `toolgate/chat/event` notification.
This module knows no transport: it is given a `notify` function.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import SecretStr

from toolgate.agent.call_summaries import call_summaries
from toolgate.agent.conversation import unanswered_tool_uses
from toolgate.agent.events import ChatEvent
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider, warm_up
from toolgate.agent.providers.base import DEFAULT_MODELS
from toolgate.agent.stored_chat import attach_chat
from toolgate.agent.subagent_record import read_back
from toolgate.agent.transcript import load_transcript
from toolgate.sidecar import protocol as p
from toolgate.sidecar.editor_sessions import EditorSession, SessionManager

logger = logging.getLogger("toolgate.sidecar.chat")

_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

Notify = Callable[[str, dict[str, Any]], None]


class ChatHost:
    def __init__(
        self, sessions: Callable[[], SessionManager], notify: Notify, environ: Mapping[str, str] | None = None
    ):
        self._sessions = sessions
        self._notify = notify
        self._environ = os.environ if environ is None else environ
        self.config = ModelConfig()

    # --- the provider -------------------------------------------------------------------------------------
    def configure(self, params: p.ProviderConfigureParams) -> p.ProviderStatus:
        """New settings apply to every chat from its next message on (a message being answered finishes first)."""
        update: dict[str, Any] = {"provider": params.provider, "model": params.model, "base_url": params.base_url}
        update["api_key"] = SecretStr(params.api_key) if params.api_key else None
        if params.max_tokens is not None:
            update["max_tokens"] = params.max_tokens
        update["context_window"] = params.context_window  # None: the catalogue's again
        return self._apply(update)

    def select_model(self, model: str) -> p.ProviderStatus:
        """The model picker's choice (or `/model NAME`): kept until the model settings change."""
        return self._apply({"model": model})

    def _apply(self, update: dict[str, Any]) -> p.ProviderStatus:
        self.config = self.config.model_copy(update=update)
        warm_up(self.config.provider)  # the SDK loads while the person types their first message
        for live in self._sessions().open_sessions():
            if live.chat is not None:
                live.chat.replace_provider(make_provider(self.config))
        return self.status()

    def status(self) -> p.ProviderStatus:
        config = self.config
        variable = _KEY_VARIABLES[config.provider]
        has_key = config.api_key is not None or bool(self._environ.get(variable))
        model = config.model or DEFAULT_MODELS[config.provider]
        if has_key:
            message = f"Ready: {config.provider} model {model}."
        elif config.provider == "openai" and config.base_url:
            message = f"Using {config.base_url} without an API key (fine for local servers such as Ollama)."
        else:
            message = (
                f"No API key for {config.provider}: run the command 'toolgate: Set API Key', or set {variable} "
                "in the environment the editor was started from."
            )
        return p.ProviderStatus(
            provider=config.provider, model=model, base_url=config.base_url, has_key=has_key, message=message
        )

    # --- chats ------------------------------------------------------------------------------------------------
    def chat_for(self, live: EditorSession) -> AgentChat:
        if live.chat is None:
            live.claim()  # opening the chat may repair its transcript (a crash left calls unanswered)
            sessions = self._sessions()
            chat = attach_chat(live.runtime, make_provider(self.config), sessions.store, live.meta)
            session_id = live.id

            def forward(event: ChatEvent) -> None:
                params = p.ChatEventParams(session_id=session_id, event=event)
                self._notify(p.CHAT_EVENT, params.wire())

            chat.subscribe(forward)
            live.chat = chat
        return live.chat

    def history(self, live: EditorSession) -> p.ChatHistoryResult:
        # Showing a stored conversation needs no model: read the transcript rather than start a chat (which
        # would make a provider and import its SDK, seconds of work, just to draw the history). The answered
        # approvals and reviews are only in the transcript, for an open chat too. It keeps every message, the
        # summarised ones too: a person reads the whole conversation back (the open chat holds what the model sees).
        loaded = load_transcript(self._sessions().store.transcript_path(live.id))
        chat = live.chat
        busy = chat.busy if chat is not None else False
        running = {use.id for use in unanswered_tool_uses(loaded.history)} if busy else set()
        return p.ChatHistoryResult(
            messages=loaded.history,
            todos=chat.todos if chat is not None else loaded.todos,
            busy=busy,
            decisions=loaded.decisions,
            calls=call_summaries(live.runtime, loaded.history),
            compactions=loaded.compactions,
            subagents=read_back(loaded.subagents, running),
        )
