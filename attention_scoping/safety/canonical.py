"""Canonical JSON and the hashes that bind tokens and intents to exact arguments.

Two calls that mean the same thing must hash the same, whatever the key order or the spelling of
a number; two calls that differ in any value must not. `canonical_json` therefore sorts keys,
drops insignificant whitespace, writes integral floats as integers (`5.0` -> `5`, as RFC 8785
does) and refuses what JSON cannot represent exactly (NaN, infinities, non-string keys, sets,
arbitrary objects) instead of guessing with `str()`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["CanonicalJSONError", "canonical_json", "intent_hash", "sha256_hex", "tool_call_hash"]


class CanonicalJSONError(TypeError):
    """A value cannot be written as canonical JSON; the message names where it sits."""


def _normalize(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"{path}: {value!r} has no JSON form; use a finite number or a string"
            raise CanonicalJSONError(msg)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                msg = f"{path}: object keys must be strings, got {type(key).__name__} {key!r}"
                raise CanonicalJSONError(msg)
            out[key] = _normalize(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_normalize(item, f"{path}[{i}]") for i, item in enumerate(value)]
    msg = (
        f"{path}: {type(value).__name__} is not JSON (allowed: dict, list, tuple, str, int, "
        "float, bool, None); convert it explicitly before hashing"
    )
    raise CanonicalJSONError(msg)


def canonical_json(value: Any) -> str:
    """The one JSON text of `value`: sorted keys, no spaces, integral floats as integers.

    Raises:
        CanonicalJSONError: `value` holds something without an exact JSON form.
    """
    return json.dumps(
        _normalize(value, "$"),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def sha256_hex(data: str | bytes) -> str:
    """Hex SHA-256 of `data` (text is encoded as UTF-8)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def intent_hash(*, account: str, action: str, target: str, payload: Any) -> str:
    """SHA-256 of the canonical JSON of a mutation: who, what, on which resource, with what.

    Example:
        ```python
        intent_hash(account="acme", action="repo__comment", target="issue/42",
                    payload={"body": "Fixed in #43"})
        ```
    """
    return sha256_hex(
        canonical_json({"account": account, "action": action, "target": target, "payload": payload})
    )


def tool_call_hash(tool: str, args: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of one tool call: the tool name and its exact arguments."""
    return sha256_hex(canonical_json({"tool": tool, "args": dict(args)}))
