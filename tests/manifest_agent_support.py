"""Shared pieces of the manifest-agent tests: read the tool messages of a run, and a scripted
model that previews a write and confirms it with the code it was given."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from attention_scoping.testing import calls, say, tool_call

__all__ = ["Policy", "bodies", "last_body", "two_phase"]

Policy = Callable[[list[BaseMessage], list[str]], AIMessage]


def bodies(result: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(tool, status, parsed body) of every tool message."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for m in result["messages"]:
        if isinstance(m, ToolMessage):
            try:
                body = json.loads(m.content)  # type: ignore[arg-type]
            except json.JSONDecodeError:
                body = {"text": m.content}
            out.append((m.name or "", m.status, body))
    return out


def last_body(messages: list[BaseMessage]) -> dict[str, Any]:
    """The parsed body of the last tool message."""
    tm = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    body: dict[str, Any] = json.loads(str(tm.content))
    return body


def two_phase(
    name: str, args: dict[str, Any], *, confirm_with: dict[str, Any] | None = None
) -> Policy:
    """A model that previews `name(args)`, then confirms with the code it was given."""

    def policy(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        if not isinstance(messages[-1], ToolMessage):
            return calls(tool_call(name, args))
        body = last_body(messages)
        if body.get("status") == "confirmation_required":
            final = {**(confirm_with or args), "confirmation_code": body["confirmation_code"]}
            return calls(tool_call(name, final))
        return say(f"final: {body.get('status') or body.get('error')}")

    return policy
