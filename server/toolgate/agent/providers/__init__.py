"""Model providers behind one small protocol (see `base.py`)."""

from __future__ import annotations

import importlib
import logging
import threading

from toolgate.agent.providers.base import ModelConfig, ModelError, Provider

_MODULES = {"anthropic": "toolgate.agent.providers.anthropic", "openai": "toolgate.agent.providers.openai"}
_warming: set[str] = set()
log = logging.getLogger("toolgate.agent")


def make_provider(config: ModelConfig) -> Provider:
    """The provider for `config`. The SDK is imported only for the provider in use."""
    if config.provider == "anthropic":
        from toolgate.agent.providers.anthropic import AnthropicProvider

        return AnthropicProvider(config)
    if config.provider == "openai":
        from toolgate.agent.providers.openai import OpenAIProvider

        return OpenAIProvider(config)
    raise ModelError("config", f"Unknown provider {config.provider!r}: use anthropic or openai.")


def warm_up(provider: str) -> None:
    """Import `provider`'s SDK in a background thread, so the first message does not wait for it.

    Importing the anthropic SDK takes a second or two; done inside the first `send`, it would also stall the
    sidecar's event loop (approvals, tool runs) for that long. A `make_provider` that arrives while the thread
    is still importing simply waits for the same import to finish. Once per provider per process.
    """
    module = _MODULES.get(provider)
    if module is None or provider in _warming:
        return
    _warming.add(provider)

    def run() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # make_provider will raise it again, where it can be reported
            log.exception("warming up the %s SDK failed", provider)

    threading.Thread(target=run, name=f"warm-up-{provider}", daemon=True).start()


__all__ = ["ModelConfig", "ModelError", "Provider", "make_provider", "warm_up"]
