"""The models a provider offers, for the panel's model picker: the ones named in the settings, then the ones the
provider's models API lists (Anthropic's and OpenAI's, through their official SDKs), the current one always among
them. Listing is a convenience: when the API cannot be reached, the picker still offers the settings' models and
says why the rest are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolgate.agent.providers.base import DEFAULT_MODELS, ModelConfig

LIST_TIMEOUT_SECONDS = 10.0
MAX_LISTED_MODELS = 200  # a local server can list thousands of files as models; the picker shows a page


class ModelChoices(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    current: str
    models: list[str]
    problem: str | None = None  # why the provider's API did not list its models (None: it did, or was not asked)


async def model_choices(config: ModelConfig, configured: Sequence[str]) -> ModelChoices:
    current = config.model or DEFAULT_MODELS[config.provider]
    problem: str | None = None
    try:
        listed = await _listed_models(config)
    except Exception as exc:  # any SDK or network failure: the settings' models are still worth offering
        listed = []
        problem = (
            f"The {config.provider} models API did not answer ({type(exc).__name__}: {exc}); only the models "
            "from the settings are offered. Check the API key and base URL, or type /model NAME."
        )
    ordered = dict.fromkeys([current, *(m.strip() for m in configured if m.strip()), *listed[:MAX_LISTED_MODELS]])
    return ModelChoices(current=current, models=list(ordered), problem=problem)


def _client_options(config: ModelConfig) -> dict[str, Any]:
    options: dict[str, Any] = {"max_retries": 0, "timeout": LIST_TIMEOUT_SECONDS}
    if config.api_key is not None:
        options["api_key"] = config.api_key.get_secret_value()
    if config.base_url:
        options["base_url"] = config.base_url
    return options


async def _listed_models(config: ModelConfig) -> list[str]:
    if config.provider == "anthropic":
        import anthropic

        async with anthropic.AsyncAnthropic(**_client_options(config)) as client:
            page = await client.models.list(limit=100)
            return [model.id for model in page.data]
    import openai

    from toolgate.agent.providers.openai import LOCAL_PLACEHOLDER_KEY

    options = _client_options(config)
    try:
        opened = openai.AsyncOpenAI(**options)
    except openai.OpenAIError:  # no key anywhere: fine for a local server, as for chatting
        opened = openai.AsyncOpenAI(**{**options, "api_key": LOCAL_PLACEHOLDER_KEY})
    async with opened as client:
        openai_page = await client.models.list()
        return sorted(model.id for model in openai_page.data)
