"""TypeScript declarations from the protocol's JSON Schema (pure: a dict in, source text out).

It covers the subset of JSON Schema that pydantic emits for the protocol models: objects, arrays,
`$ref`, `anyOf`/`oneOf`, `enum`, `const` and the scalar types. Anything else fails loudly, so a new kind of
field cannot silently become `any` in the extension.
"""

from __future__ import annotations

import json
import re
from typing import Any

HEADER = (
    "// Generated from the sidecar's protocol models (server/toolgate/sidecar/protocol.py).\n"
    "// Do not edit: run `make protocol`. A test fails when this file is out of date.\n"
)
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}


class UnsupportedSchema(ValueError):
    pass


def type_name(ref_or_name: str) -> str:
    """`#/$defs/RuleSuggestion-Input` → `RuleSuggestionInput`."""
    name = ref_or_name.rsplit("/", 1)[-1]
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def method_constant(method: str) -> str:
    """`toolgate/settings/setMode` → `settingsSetMode`."""
    parts = [p for p in method.split("/")[1:] if p]
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _doc(text: str | None, indent: str) -> str:
    if not text:
        return ""
    lines = text.replace("*/", "*\\/").strip().splitlines()
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    body = "".join(f"{indent} * {line}".rstrip() + "\n" for line in lines)
    return f"{indent}/**\n{body}{indent} */\n"


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else json.dumps(name)


def _union(members: list[str]) -> str:
    unique = list(dict.fromkeys(members))
    return " | ".join(unique) if unique else "never"


def _wrap(text: str) -> str:
    """Parenthesise a union before `[]` is appended."""
    return f"({text})" if " | " in text else text


def render_type(node: dict[str, Any], indent: str = "") -> str:
    if "$ref" in node:
        return type_name(node["$ref"])
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return _union([json.dumps(v) for v in node["enum"]])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return _union([render_type(member, indent) for member in node[key]])
    kind = node.get("type")
    if kind is None:
        if set(node) - {"description", "default", "title", "examples"}:
            raise UnsupportedSchema(f"no TypeScript rendering for schema {node!r}")
        return "unknown"
    if isinstance(kind, list):
        return _union([render_type({**node, "type": k}, indent) for k in kind])
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = node.get("items")
        return f"{_wrap(render_type(items, indent))}[]" if items else "unknown[]"
    if kind == "object":
        return _render_object(node, indent)
    raise UnsupportedSchema(f"no TypeScript rendering for type {kind!r}")


def _render_members(node: dict[str, Any], indent: str) -> str:
    required = set(node.get("required", []))
    out = ""
    for name, prop in node["properties"].items():
        optional = "" if name in required else "?"
        out += _doc(prop.get("description"), indent)
        out += f"{indent}{_key(name)}{optional}: {render_type(prop, indent)};\n"
    return out


def _render_object(node: dict[str, Any], indent: str) -> str:
    extra = node.get("additionalProperties", True)
    if not node.get("properties"):
        if extra is False:
            return "Record<string, never>"
        value = "unknown" if extra is True else render_type(extra, indent)
        return f"Record<string, {value}>"
    inner = indent + "  "
    return "{\n" + _render_members(node, inner) + indent + "}"


def _render_definition(name: str, node: dict[str, Any]) -> str:
    doc = _doc(node.get("description"), "")
    if node.get("type") == "object" and node.get("properties"):
        return f"{doc}export interface {name} {{\n{_render_members(node, '  ')}}}\n"
    return f"{doc}export type {name} = {render_type(node)};\n"


def typescript_from_schema(schema: dict[str, Any]) -> str:
    parts = [HEADER, f"\nexport const PROTOCOL_VERSION = {json.dumps(schema.get('version'))};\n"]
    for name, node in schema.get("$defs", {}).items():
        parts.append("\n" + _render_definition(type_name(name), node))

    for name, constant in schema.get("constants", {}).items():
        values = json.dumps(constant["values"], indent=2)
        item = _wrap(render_type(constant["items"]))
        parts.append(f"\n{_doc(constant.get('description'), '')}export const {name}: readonly {item}[] = {values};\n")

    methods: dict[str, dict[str, Any]] = schema["methods"]
    parts.append("\n/** Every method name, by a short constant name. */\nexport const Methods = {\n")
    parts.extend(f"  {method_constant(m)}: {json.dumps(m)},\n" for m in methods)
    parts.append("} as const;\n")

    groups = (
        ("ClientRequests", "clientToServer", "request", "Requests the extension sends; the sidecar answers."),
        ("ServerRequests", "serverToClient", "request", "Requests the sidecar sends; the extension answers."),
        ("ServerNotifications", "serverToClient", "notification", "Notifications the sidecar sends."),
        ("ClientNotifications", "clientToServer", "notification", "Notifications the extension sends."),
    )
    for interface, direction, kind, doc in groups:
        chosen = {m: e for m, e in methods.items() if e["direction"] == direction and e["kind"] == kind}
        if not chosen:
            continue
        parts.append(f"\n/** {doc} */\nexport interface {interface} {{\n")
        for method, entry in chosen.items():
            parts.append(_doc(entry.get("description"), "  "))
            params = render_type(entry["params"])
            if kind == "request":
                result = render_type(entry["result"])
                parts.append(f"  {json.dumps(method)}: {{ params: {params}; result: {result} }};\n")
            else:
                parts.append(f"  {json.dumps(method)}: {params};\n")
        parts.append("}\n")
    return "".join(parts)
