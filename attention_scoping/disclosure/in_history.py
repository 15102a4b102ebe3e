"""Whether a request's tools are disclosed in the conversation (a native `disclosure=` mode):
what rewrites earlier turns must not run there, and which tools the model can call now (what
code may name to it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attention_scoping.adapters.tools import tool_name
from attention_scoping.disclosure.anthropic import deferred
from attention_scoping.disclosure.base import mode_class

__all__ = ["callable_tools", "history_mode"]

GROUPING = ("namespace", "tool_search")
"""OpenAI entries of the tools array that are not a function the model calls by name."""


def history_mode(tools: Sequence[Any], messages: Sequence[Any]) -> str | None:
    """The native mode whose disclosures live in the conversation, if this request carries one:
    `"anthropic"` (deferred tools, `tool_reference` blocks in the history) or `"openai"`
    (namespaces or a `tool_search` tool, `tool_search_output` items); else None. What rewrites
    earlier turns (`history.TurnDigestMiddleware`) must not run there."""
    found = _in_history(tools, messages)
    return None if found is None else found[0]


def callable_tools(tools: Sequence[Any], messages: Sequence[Any]) -> list[Any] | None:
    """The tool entries of a request the model can call now when a native mode discloses them
    in the history: those sent loaded, and those the history disclosed (Anthropic: deferred tools
    a `tool_reference` expanded; OpenAI: namespace members a `tool_search_output` loaded).
    None when the request carries no such mode: every bound tool is callable.

    A hint or a nudge names only these: the model has seen no schema of the others, and a call
    to one of them is refused."""
    found = _in_history(tools, messages)
    if found is None:
        return None
    seen = found[1]
    out: list[Any] = []
    for tool in tools:
        members = getattr(tool, "members", None)
        if members is not None:  # an OpenAI namespace: its functions, deferred
            out += [m for m in members if getattr(m, "name", None) in seen]
        elif isinstance(tool, Mapping) and tool.get("type") in GROUPING:
            continue
        elif not deferred(tool) or tool_name(tool) in seen:
            out.append(tool)
    return out


def _in_history(tools: Sequence[Any], messages: Sequence[Any]) -> tuple[str, frozenset[str]] | None:
    """The native mode a request carries and the names its history disclosed (the history is
    read once per mode)."""
    for mode, sends in (("anthropic", _defers), ("openai", _groups)):
        seen = mode_class(mode)().disclosed(messages) or frozenset()
        if seen or sends(tools):
            return mode, seen
    return None


def _defers(tools: Sequence[Any]) -> bool:
    """Whether the tools array sends a tool deferred (Anthropic)."""
    return any(deferred(t) for t in tools)


def _groups(tools: Sequence[Any]) -> bool:
    """Whether the tools array sends namespaces or a tool search (OpenAI)."""
    return any(isinstance(t, Mapping) and t.get("type") in GROUPING for t in tools)
