"""The scoping middleware in a provider-native disclosure mode (`disclosure=`, see
`attention_scoping.disclosure`): every tool sent, the system prompt fixed, and the scope's tools
and prompt module disclosed at the tail by `load_context` results.

A scope the model loads discloses all its tools in its `load_context` result. A scope opened by
code (pre-selection) or the application (`active_context`, the default scope) is disclosed by a
`load_context` call-and-result pair the middleware puts in front of the model's reply; a scope
code opened discloses only its tools that read (`core.blast_radius`). The unscoped start set is
not offered in these modes: while no scope is active the model loads one (or searches, with a
gate after this middleware).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from attention_scoping.common.blast_radius import Opener
from attention_scoping.common.errors import render_payload
from attention_scoping.scoping.breadcrumbs import loaded_payload
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog
from attention_scoping.scoping.prompts import module_layer

OPENED_MESSAGES: Mapping[str, str] = {
    "code": (
        "Context {scope!r} was opened for this request: its tools that read are loaded. Load it "
        "yourself with load_context to use its tools that change something."
    ),
    "application": "Context {scope!r} is active.",
}
"""What the result of a `load_context` pair says, by who opened the scope."""


def scope_groups(catalog: ScopeCatalog) -> dict[str, list[str]]:
    """Scope -> its tool names (OpenAI namespaces group by it)."""
    return {name: list(scope.tools) for name, scope in catalog.scopes.items()}


def opened_text(catalog: ScopeCatalog, scope: str, visible: Sequence[str], opener: Opener) -> str:
    """The JSON text of a `load_context` pair's result: the scope, what is loaded, its module."""
    payload = loaded_payload(catalog, scope, None, with_module=True)
    payload.pop("previous_context", None)
    payload["message"] = OPENED_MESSAGES.get(opener, OPENED_MESSAGES["application"]).format(
        scope=scope
    )
    payload["tools_now_available"] = list(visible)
    return render_payload(payload)


def with_module_text(content: Any, catalog: ScopeCatalog, scope: str) -> str:
    """A `load_context` result's JSON text with the scope's prompt module in it."""
    text = content if isinstance(content, str) else json.dumps(content)
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    if isinstance(payload, dict) and "prompt_module" not in payload:
        payload["prompt_module"] = module_layer(catalog, scope)
        return render_payload(payload)
    return text


def disclosed_load(
    result: Any,
    call_id: str,
    names: Iterable[str],
    content: Any,
) -> Any:
    """`result` of a `load_context` call (a `Command` or `ToolMessage`) with its message's content
    replaced by `content(names, text)`, the tools the scope loaded disclosed with the module."""

    def rewrite(message: Any) -> Any:
        if not isinstance(message, ToolMessage) or message.tool_call_id != call_id:
            return message
        if message.status == "error" or message.name not in (None, LOAD_CONTEXT):
            return message
        return message.model_copy(update={"content": content(list(names), message.content)})

    if isinstance(result, ToolMessage):
        return rewrite(result)
    if isinstance(result, Command) and isinstance(result.update, Mapping):
        messages = result.update.get("messages")
        if isinstance(messages, list):
            update = {**result.update, "messages": [rewrite(m) for m in messages]}
            return Command(
                graph=result.graph, update=update, resume=result.resume, goto=result.goto
            )
    return result
