"""toolgate/models/list|select: the panel's model picker (and `/model NAME`).

A chosen model applies to every chat from its next message on and lasts until the model settings change (the
editor then configures the provider afresh): the picker is a quick switch, the settings are the default.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from toolgate.sidecar import protocol_composer as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the chats (and the providers' modules) load with the first chat
    from toolgate.sidecar.chat import ChatHost


def composer_handlers(chats: Callable[[], ChatHost]) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    async def listing(params: p.ModelsListParams) -> p.ModelsListResult:
        from toolgate.agent.providers.model_list import model_choices

        choices = await model_choices(chats().config, params.configured)
        return p.ModelsListResult(current=choices.current, models=choices.models, problem=choices.problem)

    async def select(params: p.ModelsSelectParams) -> p.ModelsSelectResult:
        status = chats().select_model(params.model)
        return p.ModelsSelectResult(model=status.model, message=f"Chats use {status.model} from the next message on.")

    return {p.MODELS_LIST: listing, p.MODELS_SELECT: select}
