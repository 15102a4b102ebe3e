"""Translate an Anthropic Messages request into an OpenAI Chat Completions request, and the
completion back into a Messages `message`, under the documented deferral semantics.

What goes upstream: the loaded tools plus every deferred tool a `tool_reference` in an earlier
`tool_result` has expanded, in the request's `tools` order (what the API makes callable); the
system prompt as a system message; user text; assistant text and `tool_use` as content and
`tool_calls`; each `tool_result` as a `tool` message (its text blocks joined, its
`tool_reference` blocks as one line `Loaded tools: a, b`: the real API's rendering of an
expanded definition is not public, so that line is the bridge's choice). A call the model
makes of a tool that is not callable comes back as it was made: the client's gate must refuse
it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from attention_scoping_lab.eval.anthropic_wire import (
    REFERENCE,
    RequestError,
    blocks,
    callable_tools,
    is_custom,
    message_object,
)

LOADED = "Loaded tools: "
"""How a `tool_result`'s `tool_reference` blocks reach the upstream model: this prefix and the
tool names, comma-separated, on one line."""
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
"""What the Messages API accepts as a `tool_use` id."""
SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""Assistant blocks with no Chat Completions counterpart: left out."""


def _unsupported(where: str, j: int, kind: Any, allowed: str) -> RequestError:
    """The 400 for block `j` of `where`'s content, of a type the bridge cannot carry."""
    msg = f"{where}.content.{j}: the bridge forwards {allowed} blocks only, not {kind!r}"
    return RequestError(msg)


# -- request --------------------------------------------------------------------------------


def upstream_tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Chat Completions `tools` of the tools this request makes callable, in its order."""
    ready = set(callable_tools(body))
    out: list[dict[str, Any]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("name") not in ready:
            continue
        if not is_custom(tool):
            msg = f"tools.{i}: the bridge forwards custom tools only, not {tool.get('type')!r}"
            raise RequestError(msg)
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or {"type": "object"}
        out.append({"type": "function", "function": function})
    return out


def result_text(block: Mapping[str, Any], where: str) -> str:
    """A `tool_result`'s content as the text of a `tool` message: its text blocks, and its
    `tool_reference` blocks as one `Loaded tools: ...` line where the first of them stands."""
    parts: list[str | None] = []  # None: the line of the references
    names: list[str] = []
    for j, item in enumerate(blocks(block.get("content"))):
        if item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif item.get("type") == REFERENCE:
            if not names:
                parts.append(None)
            names.append(str(item.get("tool_name")))
        else:
            raise _unsupported(where, j, item.get("type"), "text and tool_reference")
    line = LOADED + ", ".join(names)
    return "\n".join(line if part is None else part for part in parts)


def _user(content: list[dict[str, Any]], where: str) -> Iterator[dict[str, Any]]:
    """The `tool` messages and user messages of one Anthropic user message, in order."""
    text: list[str] = []
    for j, block in enumerate(content):
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text", "")))
            continue
        if kind != "tool_result":
            raise _unsupported(where, j, kind, "text and tool_result")
        if text:
            yield {"role": "user", "content": "\n".join(text)}
            text = []
        yield {
            "role": "tool",
            "tool_call_id": str(block.get("tool_use_id")),
            "content": result_text(block, f"{where}.content.{j}"),
        }
    if text:
        yield {"role": "user", "content": "\n".join(text)}


def _assistant(content: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """One Anthropic assistant message as a Chat Completions assistant message."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            function = {"name": str(block.get("name")), "arguments": arguments}
            calls.append({"id": str(block.get("id")), "type": "function", "function": function})
        elif kind not in SKIPPED_BLOCKS:
            raise _unsupported(where, j, kind, "text, tool_use and thinking")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = calls
        message["content"] = message["content"] or None
    return message


def upstream_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Chat Completions messages of a Messages request (system first)."""
    out: list[dict[str, Any]] = []
    system = "\n\n".join(str(b.get("text", "")) for b in blocks(body.get("system")))
    if system:
        out.append({"role": "system", "content": system})
    for i, message in enumerate(body.get("messages") or []):
        content = blocks(message.get("content"))
        if message.get("role") == "user":
            out.extend(_user(content, f"messages.{i}"))
        else:
            out.append(_assistant(content, f"messages.{i}"))
    return out


def _tool_choice(choice: Mapping[str, Any] | None) -> Any:
    kind = (choice or {}).get("type")
    if kind == "any":
        return "required"
    if kind == "tool":
        return {"type": "function", "function": {"name": choice["name"]}}  # type: ignore[index]
    return kind  # "auto", "none" or None


def chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions request (non-streaming) for a Messages request.

    Raises:
        RequestError: a block or tool the bridge cannot carry.
    """
    request: dict[str, Any] = {
        "model": body["model"],
        "messages": upstream_messages(body),
        "max_tokens": body["max_tokens"],
        "stream": False,
    }
    for name, target in (("temperature", "temperature"), ("top_p", "top_p")):
        if body.get(name) is not None:
            request[target] = body[name]
    if body.get("stop_sequences"):
        request["stop"] = list(body["stop_sequences"])
    tools = upstream_tools(body)
    if tools:
        request["tools"] = tools
        choice = body.get("tool_choice")
        if _tool_choice(choice) is not None:
            request["tool_choice"] = _tool_choice(choice)
        if isinstance(choice, Mapping) and choice.get("disable_parallel_tool_use"):
            request["parallel_tool_calls"] = False
    return request


# -- response -------------------------------------------------------------------------------


class ToolUseIds:
    """`tool_use` ids: the upstream's when the Messages API accepts it, else `toolu_bridge_N`."""

    def __init__(self) -> None:
        """Start numbering made ids at 1."""
        self._count = itertools.count(1)

    def __call__(self, upstream: Any) -> str:
        """The id for an upstream tool call id."""
        if isinstance(upstream, str) and TOOL_USE_ID.match(upstream):
            return upstream
        return f"toolu_bridge_{next(self._count)}"


def _arguments(raw: Any) -> dict[str, Any] | None:
    """A call's arguments as an object, or None when they are not a JSON object."""
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _content(message: Mapping[str, Any], ids: ToolUseIds) -> list[dict[str, Any]]:
    text = message.get("content")
    if isinstance(text, list):
        text = "".join(str(p.get("text", "")) for p in text if isinstance(p, Mapping))
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": str(text)})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name, raw = str(function.get("name", "")), function.get("arguments")
        arguments = _arguments(raw)
        if arguments is None:  # not a JSON object: shown as written, nothing runs on a guess
            written = json.dumps({"name": name, "arguments": raw}, ensure_ascii=False)
            content.append({"type": "text", "text": written})
            continue
        content.append(
            {"type": "tool_use", "id": ids(call.get("id")), "name": name, "input": arguments}
        )
    return content


def _usage(completion: Mapping[str, Any]) -> dict[str, int]:
    usage = completion.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    cached = min(int(details.get("cached_tokens") or 0), prompt)
    return {
        "input_tokens": prompt - cached,
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    }


def anthropic_message(
    completion: Mapping[str, Any], model: str, ids: ToolUseIds, message_id: str
) -> dict[str, Any]:
    """The Messages `message` of a Chat Completions `chat.completion`."""
    choices = completion.get("choices") or [{}]
    content = _content(choices[0].get("message") or {}, ids)
    if any(b["type"] == "tool_use" for b in content):
        stop = "tool_use"
    elif choices[0].get("finish_reason") == "length":
        stop = "max_tokens"
    else:
        stop = "end_turn"
    return message_object(message_id, model, content, stop, _usage(completion))
