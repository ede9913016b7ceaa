"""Model providers behind one small protocol (see `base.py`)."""

from __future__ import annotations

from toolgate.agent.providers.base import ModelConfig, ModelError, Provider


def make_provider(config: ModelConfig) -> Provider:
    """The provider for `config`. The SDK is imported only for the provider in use."""
    if config.provider == "anthropic":
        from toolgate.agent.providers.anthropic import AnthropicProvider

        return AnthropicProvider(config)
    if config.provider == "openai":
        from toolgate.agent.providers.openai import OpenAIProvider

        return OpenAIProvider(config)
    raise ModelError("config", f"Unknown provider {config.provider!r}: use anthropic or openai.")


__all__ = ["ModelConfig", "ModelError", "Provider", "make_provider"]
