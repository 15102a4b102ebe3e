"""Bounds on what an MCP server lists, like the bound on what its tools return.

A server writes its tools' descriptions and input schemas, and both reach every model call of
its scope, the cache on disk and the pre-selection's reading. A description past
`DESCRIPTION_MAX_CHARS` is cut (`common.limits.clip`: the cut marked, the full size reported); an
input schema larger than `SCHEMA_MAX_CHARS` or nesting deeper than `SCHEMA_MAX_DEPTH` is
replaced by its top-level arguments alone (their type, a short description and a small enum:
the tool stays callable, the server still checks what it gets), and the description says so in
a line the model reads. The limits sit an order of magnitude above real servers: over the 5,228
tools of `data/` (BFCL, Seal-Tools) and the listings of `mcp-server-time` and `mcp-server-git`,
the longest description has 545 characters, the largest schema 2,871 and the deepest 7 levels;
the longest server-written descriptions we know of (tools that document a markup dialect) stay
under 10,000 characters. Framework-free.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from attention_scoping.common.limits import JsonLimits, clip, measure

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "INSTRUCTIONS_MAX_CHARS",
    "SCHEMA_MAX_CHARS",
    "SCHEMA_MAX_DEPTH",
    "Bounded",
    "bound_annotations",
    "bound_record",
    "bound_schema",
    "bound_text",
]

DESCRIPTION_MAX_CHARS = 16_000
"""Characters of a tool's description, its marks included (about 4,000 tokens)."""
INSTRUCTIONS_MAX_CHARS = 16_000
"""Characters of a server's instructions kept in a listing (the model is sent fewer:
`servertext.INSTRUCTIONS_MAX_CHARS`)."""
SCHEMA_MAX_CHARS = 64_000
"""Characters of a tool's input schema as JSON (about 16,000 tokens)."""
SCHEMA_MAX_DEPTH = 32
"""Nesting levels of a tool's input schema as JSON (each nested object schema takes two:
`properties`, then the property); real schemas use fewer than 10."""

REDACT_SLACK = 4_096
"""Characters past a limit that are redacted before the cut, so a secret straddling the cut is
masked whole (and a 5 MB description is not scanned whole)."""

_LIMITS = JsonLimits(max_depth=SCHEMA_MAX_DEPTH, max_chars=SCHEMA_MAX_CHARS)
_ARGUMENT_DESCRIPTION_CHARS = 300
_NAME_MAX_CHARS = 128
_ENUM_MAX_CHARS = 1_000
_ANNOTATION_FLAGS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_TITLE_MAX_CHARS = 200
_SCALAR_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "array", "object"})


@dataclass(frozen=True)
class Bounded:
    """A tool record within the bounds, and what was cut to get there."""

    record: dict[str, Any]
    cuts: tuple[str, ...] = ()
    """One phrase per cut part (`description of 2,000,000 characters cut to 16,000`)."""


def _argument(schema: Any) -> dict[str, Any]:
    """One top-level argument's schema reduced to its type, a short description and a small
    enum; a nested structure left out is said in the description."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _SCALAR_TYPES:
        out["type"] = kind
    elif isinstance(kind, list) and all(k in _SCALAR_TYPES for k in kind[:8]):
        out["type"] = [str(k) for k in kind[:8]]
    description = schema.get("description")
    text = clip(description, _ARGUMENT_DESCRIPTION_CHARS) if isinstance(description, str) else ""
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) <= 100:
        scalars = [v for v in enum if isinstance(v, (str, int, float, bool)) or v is None]
        if len(scalars) == len(enum) and len(json.dumps(enum)) <= _ENUM_MAX_CHARS:
            out["enum"] = enum
    if set(schema) - {"type", "description", "enum", "title", "default"}:
        text = (text + " " if text else "") + "[nested schema not shown]"
    if text:
        out["description"] = text
    return out


def _reduced(schema: Mapping[str, Any], note: str) -> dict[str, Any]:
    """The top-level arguments of `schema`, as many as fit in half the size limit (the first,
    in its order), each reduced by `_argument`; `note` as the schema's description."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    kept: dict[str, Any] = {}
    budget = SCHEMA_MAX_CHARS // 2
    for name, sub in islice(properties.items(), 10_000):
        if not isinstance(name, str) or len(name) > _NAME_MAX_CHARS:
            continue
        argument = _argument(sub)
        size = len(json.dumps({name: argument}, ensure_ascii=False))
        if size > budget:
            break
        kept[name] = argument
        budget -= size
    out: dict[str, Any] = {"type": "object", "description": note, "properties": kept}
    required = schema.get("required")
    if isinstance(required, list):
        needed = [r for r in islice(required, 10_000) if isinstance(r, str) and r in kept]
        if needed:
            out["required"] = needed
    return out


def bound_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """`schema` unchanged when it is within the bounds; else its top-level arguments
    (`_reduced`) and a phrase saying what was too big."""
    problem = measure(schema, _LIMITS)
    if problem is None:
        return dict(schema), None
    what = (
        f"nests deeper than {SCHEMA_MAX_DEPTH} levels"
        if problem.rule == "maxDepth"
        else f"is larger than {SCHEMA_MAX_CHARS:,} characters"
    )
    note = (
        f"[input schema cut: it {what}; only its top-level arguments are shown, without their "
        "nested structure; the server checks the arguments it gets]"
    )
    return _reduced(schema, note), f"input schema that {what}"


def bound_annotations(annotations: Any) -> dict[str, Any]:
    """The MCP tool annotations that mean something (the four hints as booleans, a short
    title); anything else a server sent is dropped."""
    if not isinstance(annotations, Mapping):
        return {}
    kept: dict[str, Any] = {k: annotations[k] for k in _ANNOTATION_FLAGS if k in annotations}
    kept = {k: v for k, v in kept.items() if isinstance(v, bool)}
    title = annotations.get("title")
    if isinstance(title, str):
        kept["title"] = clip(title, _TITLE_MAX_CHARS)
    return kept


def bound_text(text: str, limit: int, redact: Callable[[str], str] | None = None) -> str:
    """`text` redacted and cut to `limit` characters (`common.limits.clip`, the mark reporting
    the full size); only its head is redacted when it is far too long."""
    head = limit + REDACT_SLACK
    shown = redact(text[:head]) if redact is not None else text[:head]
    return clip(shown, limit, len(text) if len(text) > head else None)


def bound_record(record: Mapping[str, Any], redact: Callable[[str], str] | None = None) -> Bounded:
    """`record` (`name`, `description`, `inputSchema`, `annotations`) within the bounds, its
    description passed through `redact`: a long description cut and marked, an oversized schema
    reduced and the description saying so in its last line (the two together at most
    `DESCRIPTION_MAX_CHARS`)."""
    schema, schema_cut = bound_schema(record["inputSchema"])
    description = str(record.get("description") or "")
    cuts: list[str] = []
    note = f"\n{schema['description']}" if schema_cut else ""
    limit = DESCRIPTION_MAX_CHARS - len(note)
    if len(description) > limit:
        cuts.append(f"description of {len(description):,} characters cut to {limit:,}")
    if schema_cut:
        cuts.append(schema_cut)
    out = {**record, "description": bound_text(description, limit, redact) + note}
    out["inputSchema"] = schema
    if "annotations" in record:
        out["annotations"] = bound_annotations(record["annotations"])
        if not out["annotations"]:
            del out["annotations"]
    return Bounded(out, tuple(cuts))
