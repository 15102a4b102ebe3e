"""The Responses API's wire shapes for `disclosure="openai"` (pure: JSON dicts in, dicts out).

Deferred functions are grouped in `namespace`s (one per scope, split above `MAX_PER_NAMESPACE`
functions, as OpenAI recommends), a client-executed `tool_search` tool sits last, and a
`tool_search_output` item carrying the chosen functions' namespaces discloses them at the tail of
the conversation. A call to a namespaced function must echo its namespace in history. See
docs/disclosure-openai.md for the wire format and its sources.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attention_scoping.common.blast_radius import tool_listing

MAX_PER_NAMESPACE = 10
"""Most functions in one namespace; a larger group is split into `<name>_1`, `<name>_2`, ..."""

DEFAULT_GROUP = "tools"
"""Namespace of deferred tools no group names (a gate without scopes)."""

SEARCH_DESCRIPTION = (
    "Search the tools that are not loaded yet and load the best matches. Describe the "
    "capability you need in a few words, or give a tool's exact name; the tools found can be "
    "called right after."
)
SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the tool you need does, or its name."}
    },
    "required": ["query"],
    "additionalProperties": False,
}

TOOL_SEARCH_CALL = "tool_search_call"
TOOL_SEARCH_OUTPUT = "tool_search_output"
FUNCTION_CALL = "function_call"

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Namespace:
    """One namespace: its name, its description and its function definitions (Responses form,
    `defer_loading: true`)."""

    name: str
    description: str
    functions: tuple[dict[str, Any], ...]

    def names(self) -> tuple[str, ...]:
        """The function names, in order."""
        return tuple(str(f["name"]) for f in self.functions)

    def as_tool(self, only: Iterable[str] | None = None) -> dict[str, Any]:
        """The `{"type": "namespace", ...}` entry (with just the functions in `only`)."""
        keep = None if only is None else set(only)
        functions = [dict(f) for f in self.functions if keep is None or f["name"] in keep]
        return {
            "type": "namespace",
            "name": self.name,
            "description": self.description,
            "tools": functions,
        }


def function_definition(spec: Mapping[str, Any], *, deferred: bool = True) -> dict[str, Any]:
    """A Responses function definition from an OpenAI tool dict (chat form
    `{"type": "function", "function": {...}}` or Responses form), deferred when asked."""
    body = spec["function"] if isinstance(spec.get("function"), Mapping) else spec
    out: dict[str, Any] = {"type": "function", "name": str(body["name"])}
    for key in ("description", "parameters", "strict"):
        if body.get(key) is not None:
            out[key] = body[key]
    if deferred:
        out["defer_loading"] = True
    return out


def namespace_name(group: str, taken: Iterable[str]) -> str:
    """A valid namespace name for `group` (characters outside `[A-Za-z0-9_-]` become `_`), not
    among `taken` (a numeric suffix when it is)."""
    base = _INVALID.sub("_", group)[:60] or DEFAULT_GROUP
    used = set(taken)
    name, n = base, 2
    while name in used:
        name, n = f"{base}_{n}", n + 1
    return name


def split(names: Sequence[str], limit: int = MAX_PER_NAMESPACE) -> list[list[str]]:
    """`names` in consecutive chunks of at most `limit`, as even as possible."""
    if not names:
        return []
    parts = math.ceil(len(names) / limit)
    size, extra = divmod(len(names), parts)
    out: list[list[str]] = []
    start = 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(list(names[start:end]))
        start = end
    return out


def group_description(
    group: str, names: Sequence[str], description: str = "", writing: Collection[str] = ()
) -> str:
    """The namespace description: the group's own, else one naming up to 8 of its tools that
    read and counting those in `writing` without naming them (code-written text never names a
    write: `core.blast_radius`). The same arguments give the same bytes."""
    if description:
        return description
    shown = tool_listing(names, writing, limit=8, more=", ...", label="")
    return f"Tools of the {group!r} context" + (f": {shown}." if shown else ".")


def build_namespaces(
    groups: Mapping[str, Sequence[str]],
    definitions: Mapping[str, Mapping[str, Any]],
    *,
    descriptions: Mapping[str, str] | None = None,
    taken: Iterable[str] = (),
    limit: int = MAX_PER_NAMESPACE,
    writing: Collection[str] = (),
) -> list[Namespace]:
    """One namespace per group of the deferred functions in `definitions` (group order, the
    group's tool order), split above `limit`; deferred functions no group names go in a last
    `DEFAULT_GROUP` namespace, by name. Names a group lists without a definition are skipped.

    `definitions`: name -> Responses function definition of every deferred tool. `taken`: names
    the namespaces must not reuse (top-level functions). `writing`: names of the tools that
    write (a generated description counts them without naming them).
    """
    used = set(taken)
    grouped: list[tuple[str, list[str]]] = []
    placed: set[str] = set()
    for group, names in groups.items():
        members = [n for n in dict.fromkeys(names) if n in definitions]
        placed.update(members)
        grouped.append((group, members))
    rest = sorted(n for n in definitions if n not in placed)
    if rest:
        grouped.append((DEFAULT_GROUP, rest))
    out: list[Namespace] = []
    for group, members in grouped:
        chunks = split(members, limit)
        own = (descriptions or {}).get(group, "")
        base = group_description(group, members, own, writing)
        for i, chunk in enumerate(chunks, 1):
            label = group if len(chunks) == 1 else f"{group}_{i}"
            name = namespace_name(label, used)
            used.add(name)
            text = base if len(chunks) == 1 else f"{base} (part {i} of {len(chunks)})"
            functions = tuple(dict(definitions[n]) for n in chunk)
            out.append(Namespace(name, text, functions))
    return out


def search_tool(
    description: str | None = None, parameters: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The client-executed `tool_search` tool (our ranker answers its calls)."""
    return {
        "type": "tool_search",
        "execution": "client",
        "description": description or SEARCH_DESCRIPTION,
        "parameters": dict(parameters or SEARCH_PARAMETERS),
    }


def home(namespaces: Iterable[Namespace]) -> dict[str, str]:
    """Function name -> the first namespace holding it (where a disclosure loads it)."""
    out: dict[str, str] = {}
    for ns in namespaces:
        for name in ns.names():
            out.setdefault(name, ns.name)
    return out


def search_output(
    names: Iterable[str], namespaces: Sequence[Namespace], call_id: str | None = None
) -> dict[str, Any]:
    """The `tool_search_output` item loading `names` (each in its home namespace, namespaces in
    catalog order, functions in namespace order; unknown names skipped)."""
    where = home(namespaces)
    wanted: dict[str, set[str]] = {}
    for name in names:
        if name in where:
            wanted.setdefault(where[name], set()).add(name)
    tools = [ns.as_tool(wanted[ns.name]) for ns in namespaces if ns.name in wanted]
    item: dict[str, Any] = {"type": TOOL_SEARCH_OUTPUT}
    if call_id is not None:
        item["call_id"] = call_id
    item.update({"execution": "client", "status": "completed", "tools": tools})
    return item


def search_call(call_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A client `tool_search_call` item (a synthetic one pairs a disclosure code made)."""
    return {
        "type": TOOL_SEARCH_CALL,
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "arguments": dict(arguments),
    }


def loaded_by(item: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """`(namespace or None, function name)` of every function a `tool_search_output` loads."""
    out: list[tuple[str | None, str]] = []
    for tool in item.get("tools") or []:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "namespace":
            out.extend((str(tool["name"]), str(f.get("name"))) for f in tool.get("tools") or [])
        elif tool.get("name"):
            out.append((None, str(tool["name"])))
    return out


def echo(block: Mapping[str, Any], namespace: str | None) -> dict[str, Any]:
    """A `function_call` block with `namespace` set (the API answers 400 for a namespaced
    function replayed without it); unchanged when it has one or `namespace` is None."""
    out = dict(block)
    if namespace is not None and not out.get("namespace"):
        out["namespace"] = namespace
    return out


__all__ = [
    "DEFAULT_GROUP",
    "MAX_PER_NAMESPACE",
    "SEARCH_DESCRIPTION",
    "SEARCH_PARAMETERS",
    "Namespace",
    "build_namespaces",
    "echo",
    "function_definition",
    "group_description",
    "home",
    "loaded_by",
    "namespace_name",
    "search_call",
    "search_output",
    "search_tool",
    "split",
]
