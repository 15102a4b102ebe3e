"""A tool's call signature on one line: its required arguments, so a model can call it without
reading the full schema.

`call_signature("create_issue", schema)` gives `create_issue(repo, title, labels: [str],
state: open|closed)`: string arguments by name alone, other types abbreviated (`int`,
`number`, `bool`, `[str]`), short enums spelled out, and `{…}` for an argument whose shape only
the schema shows. Optional arguments are left out, unmarked: nearly every tool has some, so a
marker per line would be paid for on every call and say little. `signature_is_complete`
says whether the line alone is enough to fill every required argument (no `{…}` in it): the
gateway's pool shows these lines so a model can call `execute_tool` directly, and the gateway
validates the call against the full schema anyway (an invalid call comes back with the schema).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_ENUM_CHARS", "MAX_ENUM_VALUES", "call_signature", "signature_is_complete"]

MAX_ENUM_VALUES = 8
"""Enums with more values than this are shown as `{…}` (the schema lists them)."""

MAX_ENUM_CHARS = 60
"""Enums whose spelled-out values are longer than this are shown as `{…}`."""

OPAQUE = "{…}"
"""How an argument whose shape the line cannot show is written."""

_SCALARS = {"string": "", "integer": "int", "number": "number", "boolean": "bool"}


def _kind(schema: Any) -> str | None:
    """The single JSON type of `schema` (a nullable `["string", "null"]` counts as string),
    or None when it has none or several."""
    if not isinstance(schema, Mapping):
        return None
    if "type" not in schema:  # untyped: any value, written like a string unless composed
        composed = any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "enum"))
        return None if composed else "string"
    kind = schema["type"]
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    return kind if isinstance(kind, str) else None


def _enum(values: Any) -> str | None:
    if not isinstance(values, list) or not values or len(values) > MAX_ENUM_VALUES:
        return None
    text = "|".join(v if isinstance(v, str) else json.dumps(v) for v in values)
    return text if len(text) <= MAX_ENUM_CHARS else None


def _shape(schema: Any) -> str:
    """How one argument's type is written: "" for a plain string, else its abbreviation."""
    if isinstance(schema, Mapping) and "enum" in schema:
        return _enum(schema["enum"]) or OPAQUE
    kind = _kind(schema)
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = schema.get("items") if isinstance(schema, Mapping) else None
        inner = _shape(items) if items is not None else "any"
        inner = inner or "str"
        return OPAQUE if inner == OPAQUE else f"[{inner}]"
    return OPAQUE


def _required(parameters: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """(properties, required names in schema order; required names the schema does not
    describe last)."""
    props = parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    raw = parameters.get("required")
    wanted = [str(r) for r in raw] if isinstance(raw, list) else []
    names = [str(p) for p in props if p in wanted] + [r for r in wanted if r not in props]
    return props, names


def call_signature(name: str, parameters: Mapping[str, Any]) -> str:
    """`name(required arguments)` as described in the module docstring."""
    props, names = _required(parameters)
    parts = []
    for arg in names:
        shape = _shape(props.get(arg, {"type": "string"}))
        parts.append(f"{arg}: {shape}" if shape else arg)
    return f"{name}({', '.join(parts)})"


def signature_is_complete(parameters: Mapping[str, Any]) -> bool:
    """Whether `call_signature` shows every required argument fully (none is `{…}`)."""
    props, names = _required(parameters)
    return all(_shape(props.get(arg, {"type": "string"})) != OPAQUE for arg in names)
