"""Canonical JSON and the hashes that bind tokens and intents to exact arguments.

Two calls that mean the same thing must hash the same, whatever the key order or the spelling of
a number; two calls that differ in any value must not. `canonical_json` therefore sorts keys,
drops insignificant whitespace, writes integral floats as integers (`5.0` -> `5`, as RFC 8785
does) and refuses what JSON cannot represent exactly (NaN, infinities, non-string keys, sets,
arbitrary objects) instead of guessing with `str()`.

A *result* is different: the change already happened, so refusing to record it would leave the
intent `executing` forever. `to_safe_json` records what canonical JSON refuses as tagged objects
(`{"$float": "NaN"}`, `{"$map": [[1, "a"]]}`, ...) under the encoding `SAFE_JSON`, and
`from_safe_json` reads them back.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping, Set
from typing import Any

from attention_scoping.errors import AttentionScopingError

__all__ = [
    "SAFE_JSON",
    "CanonicalJSONError",
    "canonical_json",
    "from_safe_json",
    "intent_hash",
    "plain_json",
    "sha256_hex",
    "to_safe_json",
    "tool_call_hash",
]

SAFE_JSON = "safe-json/v1"
"""Name of the tagged encoding of values canonical JSON refuses (see `to_safe_json`)."""


class CanonicalJSONError(AttentionScopingError, TypeError):
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


def plain_json(value: Any) -> Any:
    """`value` as plain JSON data: tuples become lists, unknown objects their `str` (the form
    results were always recorded in); a value JSON cannot hold at all becomes its `str`."""
    try:
        return json.loads(json.dumps(value, default=_text))
    except (TypeError, ValueError, RecursionError):  # circular or too deep: keep its text
        return _text(value)


def _text(value: Any) -> str:
    """`str(value)`, or the default repr when the object's own `__str__` fails."""
    try:
        return str(value)
    except Exception:
        return object.__repr__(value)


def _type_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _tag_float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}


def _tag(value: Any, seen: frozenset[int]) -> Any:
    """One value in the tagged encoding; containers already on the path are cycles."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return _tag_float(value)
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if id(value) in seen:
        return {"$cycle": type(value).__name__}
    inner = seen | {id(value)}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value):
            return {"$object": {k: _tag(v, inner) for k, v in value.items()}}
        return {"$map": [[_tag(k, inner), _tag(v, inner)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [_tag(item, inner) for item in value]
    if isinstance(value, Set):
        return {"$set": [_tag(item, inner) for item in value]}
    return {"$type": _type_name(value), "$str": _text(value)}


def to_safe_json(value: Any) -> tuple[Any, str | None]:
    """`value` in a form canonical JSON accepts, and its encoding (None: plain JSON).

    A value JSON can hold is kept as `plain_json` makes it (tuples as lists, unknown objects
    as their `str`, as results were always recorded). One it cannot (NaN or an infinity,
    non-text keys JSON would drop, a cycle) is written whole in the tagged encoding
    `SAFE_JSON`, which `from_safe_json` reverses: non-finite floats (`{"$float": "NaN"}`),
    mappings (`{"$object": {...}}`, or `{"$map": [[key, value], ...]}` for other keys), sets
    (`{"$set": [...]}`), bytes (`{"$bytes": base64}`), cycles (`{"$cycle": type}`), and other
    objects as their type and `str` (`{"$type", "$str"}`, the one lossy case). Never raises.
    """
    try:
        plain = json.loads(json.dumps(value, default=_text))
        canonical_json(plain)
    except (TypeError, ValueError, RecursionError):  # CanonicalJSONError is a TypeError
        pass
    else:
        return plain, None
    try:
        tagged = _tag(value, frozenset())
        canonical_json(tagged)
    except (CanonicalJSONError, RecursionError):  # too deep to walk: its type, no content
        return {"$type": _type_name(value), "$str": "<too deeply nested to record>"}, SAFE_JSON
    return tagged, SAFE_JSON


def _untag_object(tag: str, body: Any) -> Any:
    if tag == "$float":
        return _FLOATS[body]
    if tag == "$object":
        return {k: from_safe_json(v) for k, v in body.items()}
    if tag == "$map":
        return {_hashable(from_safe_json(k)): from_safe_json(v) for k, v in body}
    if tag == "$set":
        return {_hashable(from_safe_json(item)) for item in body}
    if tag == "$bytes":
        return base64.b64decode(body)
    return None


def _hashable(value: Any) -> Any:
    """Keys and set items come back hashable: lists as tuples, sets as frozensets."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set):
        return frozenset(value)
    return value


def from_safe_json(value: Any) -> Any:
    """Read back a value written by `to_safe_json` with the `SAFE_JSON` encoding.

    Cycles and other objects come back as their tag (there is nothing to rebuild them from).
    """
    if isinstance(value, list):
        return [from_safe_json(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, body),) = value.items()
        if tag in ("$float", "$object", "$map", "$set", "$bytes"):
            return _untag_object(tag, body)
    return value
