"""What we know about each model: its context window and its price. The one place for both.

A model not in the table gets a conservative window (a smaller one compacts earlier, which is safe) and no price
(its cost is reported as unknown, never guessed). Both can be set per session (`ModelConfig.context_window`,
`ModelConfig.prices`), for a new model or a negotiated price.

Usage is counted differently by the two APIs, and `context_tokens` / `cost_usd` hide that: Anthropic's
`input_tokens` excludes the cached prefix (cache reads and writes are reported beside it), OpenAI's
`prompt_tokens` includes the cached part (`cached_tokens` is a subset of it).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from toolgate.agent.events import MIN_CONTEXT_WINDOW as MIN_CONTEXT_WINDOW  # the settings' floor, defined light
from toolgate.agent.events import Usage

UNKNOWN_MODEL_WINDOW = 128_000


class Prices(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    input: float
    output: float
    cache_write: float  # Anthropic's cache_creation_input_tokens (OpenAI caches for free: same as input)
    cache_read: float


class ModelInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    context_window: int
    prices: Prices | None = None  # None: unknown, the cost is not reported


def _anthropic(window: int, input_price: float, output_price: float) -> ModelInfo:
    # Anthropic's published ratios: a 5-minute cache write costs 1.25x input, a cache read 0.1x.
    prices = Prices(input=input_price, output=output_price, cache_write=input_price * 1.25, cache_read=input_price / 10)
    return ModelInfo(context_window=window, prices=prices)


def _openai(window: int, input_price: float, output_price: float, cached: float) -> ModelInfo:
    return ModelInfo(
        context_window=window,
        prices=Prices(input=input_price, output=output_price, cache_write=input_price, cache_read=cached),
    )


# Matched by prefix, longest first, so a dated snapshot ("claude-sonnet-4-5-20250929") finds its family.
MODELS: dict[str, ModelInfo] = {
    "claude-opus-4": _anthropic(200_000, 15.0, 75.0),
    "claude-sonnet-4": _anthropic(200_000, 3.0, 15.0),
    "claude-haiku-4": _anthropic(200_000, 1.0, 5.0),
    "claude-3-5-haiku": _anthropic(200_000, 0.8, 4.0),
    "claude": ModelInfo(context_window=200_000),  # the family's window; a newer model's price is not guessed
    "gpt-5": _openai(400_000, 1.25, 10.0, 0.125),
    "gpt-4.1": _openai(1_047_576, 2.0, 8.0, 0.5),
    "gpt-4o": _openai(128_000, 2.5, 10.0, 1.25),
    "o3": _openai(200_000, 2.0, 8.0, 0.5),
}


def model_info(model: str, *, context_window: int | None = None, prices: Prices | None = None) -> ModelInfo:
    """The table's entry for `model` (or the unknown-model default), with any settings applied over it."""
    known = next(
        (info for prefix, info in sorted(MODELS.items(), key=lambda kv: -len(kv[0])) if model.startswith(prefix)),
        ModelInfo(context_window=UNKNOWN_MODEL_WINDOW),
    )
    return ModelInfo(
        context_window=context_window or known.context_window,
        prices=prices if prices is not None else known.prices,
    )


def context_tokens(usage: Usage, provider: str) -> int:
    """How much of the window the request took (its whole input, cached or not)."""
    if provider == "openai":
        return usage.input_tokens
    return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


def cost_usd(usage: Usage, provider: str, prices: Prices | None) -> float | None:
    if prices is None:
        return None
    uncached = usage.input_tokens
    if provider == "openai":
        uncached -= usage.cache_read_input_tokens  # OpenAI's prompt_tokens include the cached ones
    dollars = (
        uncached * prices.input
        + usage.output_tokens * prices.output
        + usage.cache_creation_input_tokens * prices.cache_write
        + usage.cache_read_input_tokens * prices.cache_read
    )
    return dollars / 1_000_000
