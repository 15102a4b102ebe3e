"""The disclosed tool schemas as the hesitation radar sees them: parameters, which ones only the
user can give (critical), and what kind of value each takes. Framework-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from attention_scoping.common.text import split_identifier
from attention_scoping.common.tool import is_critical
from attention_scoping.hesitation.errors import KitTypeError

__all__ = ["COMMON_WORDS", "ParamInfo", "SchemaInfo", "name_words", "parse_schemas"]

COMMON_WORDS_TEXT = """
    a all an and any as at be body by content count data date day days do end filter
    filters for force format from id ids if in input inputs is it item items key keys kind
    limit list mode name names new note notes number of old on option options or output
    page path q query size start tag tags text the time to type types up url user users
    value values with
"""
COMMON_WORDS = frozenset(COMMON_WORDS_TEXT.split())
"""Single-word parameter names so common in prose that only a field-like mention counts."""


_TITLE_WORDS = frozenset({"title", "subject", "summary", "topic", "headline"})


def name_words(name: str) -> tuple[str, ...]:
    """An identifier or label as lower-case words (`scheduleTime` -> ("schedule", "time"))."""
    return tuple(split_identifier(name).split())


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of a disclosed schema, as the radar sees it."""

    name: str
    tool: str
    critical: bool
    """Only the user can give it (`common.tool.is_critical`: required, no default or suggested
    one, not nullable): the model cannot fill it in by itself."""
    default: Any = None
    """The schema's default or the gateway's suggested default, if any."""
    kind: str = ""
    """What a value looks like, from the schema: "number", "date", "time", "datetime",
    "email", "phone" or "" (anything). Used to see whether a user's request already holds one."""
    choices: tuple[str, ...] = ()
    """The schema's `enum` values, as strings."""

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The name split into lower-case words (`scheduleTime` -> ("schedule", "time"))."""
        return name_words(self.name)

    @cached_property
    def identifier(self) -> bool:
        """Whether the name can only be written as an identifier (has `_`, digits or caps)."""
        return len(self.words) > 1 or any(c.isdigit() for c in self.name)

    @cached_property
    def inferable(self) -> bool:
        """A title-like text (`title`, `subject`, `summary`, `topic`) the model can write itself."""
        return not self.kind and bool(set(self.words) & _TITLE_WORDS)

    @cached_property
    def common(self) -> bool:
        """A one-word name that is a common English word (`name`, `date`, `to`)."""
        return len(self.words) == 1 and self.words[0] in COMMON_WORDS


@dataclass(frozen=True)
class SchemaInfo:
    """A disclosed tool: its name and parameters."""

    name: str
    params: tuple[ParamInfo, ...]


def _tool_dict(schema: Any) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping):
        msg = (
            f"a disclosed schema must be a mapping or a SchemaInfo, not {type(schema).__name__}; "
            "convert a LangChain tool with attention_scoping.adapters.tools.to_provider_schema"
        )
        raise KitTypeError(msg)
    fn = schema.get("function")
    return fn if isinstance(fn, Mapping) else schema


_DATE_HINT = re.compile(r"\byyyy-mm-dd\b|\bdate\b", re.I)
_TIME_HINT = re.compile(r"\bhh:mm\b", re.I)
_DATETIME_HINT = re.compile(r"\biso[ -]?8601\b|\bdate-?time\b|\btimestamp\b", re.I)


def _kind(name: str, spec: Mapping[str, Any]) -> str:
    """What a value of this parameter looks like (see `ParamInfo.kind`)."""
    words = set(name_words(name))
    items = spec.get("items")
    fmt = str(spec.get("format") or (items.get("format") if isinstance(items, Mapping) else ""))
    kinds = spec.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    description = str(spec.get("description") or "")
    if kinds & {"boolean", "object"}:
        return ""
    if fmt == "email" or "email" in words:
        return "email"
    if "phone" in words or re.search(r"\bphone\b|\be\.?164\b", description, re.I):
        return "phone"
    if kinds & {"integer", "number"}:
        return "number"
    if fmt == "date-time" or _DATETIME_HINT.search(description):
        return "datetime"
    if fmt == "date" or "date" in words or _DATE_HINT.search(description):
        return "date"
    if fmt == "time" or "time" in words or _TIME_HINT.search(description):
        return "time"
    if fmt in ("uri", "url") or words & {"url", "uri", "link", "webhook"}:
        return "url"
    if words & {"path", "file", "filename", "dir", "directory"}:
        return "path"
    if "channel" in words:
        return "channel"
    if words & {"repo", "repository"}:
        return "repo"
    if words & {"id", "ids"}:
        return "id"
    if words & {"text", "body", "message", "content", "description", "query", "command"}:
        return "text"
    return ""


def _params(
    tool: str, schema: Mapping[str, Any], hints: Mapping[str, Any], depth: int = 0
) -> list[ParamInfo]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    raw_required = schema.get("required")
    required = {str(r) for r in raw_required} if isinstance(raw_required, list | tuple) else set()
    out: list[ParamInfo] = []
    for pname, raw in props.items():
        spec = raw if isinstance(raw, Mapping) else {}
        default = hints.get(pname, spec.get("default"))
        critical = is_critical(str(pname), spec, required=required, defaults=hints)
        enum = spec.get("enum")
        choices = tuple(str(v) for v in enum) if isinstance(enum, list) else ()
        out.append(ParamInfo(str(pname), tool, critical, default, _kind(str(pname), spec), choices))
        if depth == 0 and spec.get("type") == "object":
            out.extend(_params(tool, spec, {}, depth + 1))
    return out


def parse_schemas(schemas: Iterable[Any]) -> list[SchemaInfo]:
    """Normalize disclosed schemas of any common shape.

    Accepted per item: `{"name", "parameters"}` (plus an optional `defaults` mapping of
    suggested defaults, as `get_tool_schema` payloads carry), an OpenAI-style tool dict
    (`{"type": "function", "function": {...}}`), an Anthropic-style `{"name", "input_schema"}`,
    or a bare JSON schema with `properties`. The radar imports no framework: convert a
    LangChain tool first (`attention_scoping.adapters.tools.to_provider_schema`).
    """
    out: list[SchemaInfo] = []
    for item in schemas:
        if isinstance(item, SchemaInfo):
            out.append(item)
            continue
        fn = _tool_dict(item)
        name = str(fn.get("name", ""))
        params = fn.get("parameters") or fn.get("input_schema")
        if params is None and "properties" in fn:
            params = fn
        hints = fn.get("defaults")
        if not isinstance(params, Mapping):
            out.append(SchemaInfo(name, ()))
            continue
        out.append(
            SchemaInfo(
                name, tuple(_params(name, params, hints if isinstance(hints, Mapping) else {}))
            )
        )
    return out
