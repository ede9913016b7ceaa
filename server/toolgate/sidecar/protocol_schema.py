"""The protocol as one JSON Schema document: what `toolgate protocol schema` prints and the TypeScript types are
generated from (`make protocol`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema
from pydantic_core import core_schema

from toolgate.sidecar.protocol import METHODS, PROTOCOL_VERSION, InitializationOptions, Method
from toolgate.sidecar.protocol_rules import PermissionModeTraits, permission_mode_table


def _modes(method: Method) -> tuple[JsonSchemaMode, JsonSchemaMode]:
    """Which side builds each value decides its schema: what we send is complete, what we accept may omit defaults."""
    if method.direction == "clientToServer":
        return "validation", "serialization"
    return "serialization", "validation"


class _ProtocolSchema(GenerateJsonSchema):
    """Two adjustments to pydantic's schemas for the wire.

    Field titles are dropped (pydantic titles every field with its own name, "Sessionid": noise). And in
    serialization mode (values toolgate sends) every field is required, because every field is always sent,
    defaults included; the nested Anthropic shapes do not carry our model config, so this is done here.
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if self.mode == "serialization":
            return not field.get("serialization_exclude")
        return super().field_is_required(field, total)


def protocol_schema() -> dict[str, Any]:
    """One JSON Schema document: every model under `$defs`, and a `methods` table that refers to them."""
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for method in METHODS:
        params_mode, result_mode = _modes(method)
        wanted.append((method.params, params_mode))
        if method.result is not None:
            wanted.append((method.result, result_mode))
    wanted.extend([(InitializationOptions, "validation"), (PermissionModeTraits, "serialization")])
    unique = list(dict.fromkeys(wanted))
    refs, top = models_json_schema(
        unique, ref_template="#/$defs/{model}", by_alias=True, schema_generator=_ProtocolSchema
    )
    methods: dict[str, Any] = {}
    for method in METHODS:
        params_mode, result_mode = _modes(method)
        entry: dict[str, Any] = {
            "direction": method.direction,
            "kind": "request" if method.result is not None else "notification",
            "description": method.doc,
            "params": refs[(method.params, params_mode)],
        }
        if method.result is not None:
            entry["result"] = refs[(method.result, result_mode)]
        methods[method.name] = entry
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "toolgate sidecar protocol",
        "version": PROTOCOL_VERSION,
        "initializationOptions": refs[(InitializationOptions, "validation")],
        "methods": methods,
        "constants": {
            "PERMISSION_MODE_TRAITS": {
                "description": "Every permission mode and what it means, in the order a person is offered them.",
                "items": refs[(PermissionModeTraits, "serialization")],
                "values": permission_mode_table(),
            }
        },
        "$defs": top.get("$defs", {}),
    }
