"""The Anthropic Messages API as `langchain_anthropic.ChatAnthropic` uses it: where the real API
answers 400, which tools a request makes callable (deferred tools and `tool_reference`
expansion), and the server-sent events that stream a `message`.

Pure functions over the JSON bodies, shared by the eval's bridge (`anthropic_bridge`) and the
tests' scripted Messages server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
"""What the Messages API accepts as a custom tool name."""
TOOL_CHOICE_TYPES = {"auto", "any", "tool", "none"}
DEFER = "defer_loading"
REFERENCE = "tool_reference"


class RequestError(Exception):
    """A request the real API rejects with HTTP 400."""

    def payload(self) -> dict[str, Any]:
        """The body Anthropic sends with a 400."""
        return {"type": "error", "error": {"type": "invalid_request_error", "message": str(self)}}


def blocks(content: Any) -> list[dict[str, Any]]:
    """A message or `tool_result` content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


# -- tools ----------------------------------------------------------------------------------


def is_custom(tool: Mapping[str, Any]) -> bool:
    """A user-defined tool (no server `type`, or `type: custom`)."""
    return tool.get("type") in (None, "custom")


def validate_tools(body: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Raise `RequestError` for bad tools / `tool_choice`; return the tools by name."""
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        msg = "tools: Input should be a valid list"
        raise RequestError(msg)
    by_name: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            msg = f"tools.{i}.name: String should match pattern '{TOOL_NAME.pattern}'"
            raise RequestError(msg)
        if name in by_name:
            msg = "tools: Tool names must be unique."
            raise RequestError(msg)
        if is_custom(tool):
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                msg = f"tools.{i}.custom.input_schema.type: Input should be 'object'"
                raise RequestError(msg)
        if tool.get(DEFER) is True and "cache_control" in tool:
            msg = f"tools.{i}: cache_control cannot be set on a tool with defer_loading: true."
            raise RequestError(msg)
        by_name[name] = tool
    if by_name and all(t.get(DEFER) is True for t in by_name.values()):
        msg = "tools: At least one tool must not have defer_loading: true."
        raise RequestError(msg)
    choice = body.get("tool_choice")
    if choice is not None:
        ctype = choice.get("type") if isinstance(choice, dict) else None
        if ctype not in TOOL_CHOICE_TYPES:
            msg = "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
            raise RequestError(msg)
        if ctype == "tool" and choice.get("name") not in by_name:
            msg = f"tool_choice: Tool '{choice.get('name')}' not found in tools."
            raise RequestError(msg)
    return by_name


# -- messages -------------------------------------------------------------------------------


def _check_results(
    content: list[dict[str, Any]], where: str, open_ids: list[str], tools: Mapping[str, Any]
) -> None:
    """Every `tool_result` in a user message answers the previous assistant's `tool_use`, and
    every `tool_reference` in it names a defined tool."""
    answered = []
    for j, block in enumerate(content):
        if block.get("type") != "tool_result":
            continue
        tid = block.get("tool_use_id")
        if tid not in open_ids:
            msg = (
                f"{where}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{tid}. Each `tool_result` block must have a corresponding `tool_use` block in "
                "the previous message."
            )
            raise RequestError(msg)
        answered.append(tid)
        for ref in blocks(block.get("content")):
            if ref.get("type") == REFERENCE and ref.get("tool_name") not in tools:
                msg = (
                    f"{where}.content.{j}: tool_reference to '{ref.get('tool_name')}', which is "
                    "not defined in tools."
                )
                raise RequestError(msg)
    missing = [t for t in open_ids if t not in answered]
    if missing:
        msg = (
            f"{where}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(missing)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )
        raise RequestError(msg)


def validate_messages(body: Mapping[str, Any], tools: Mapping[str, Any]) -> None:
    """Raise `RequestError` where the real API rejects the message list."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        msg = "messages: at least one message is required"
        raise RequestError(msg)
    if messages[0].get("role") != "user":
        msg = 'messages: first message must use the "user" role'
        raise RequestError(msg)
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            msg = f"{where}.role: Input should be 'user' or 'assistant'"
            raise RequestError(msg)
        content = blocks(message.get("content"))
        if role == "user":
            _check_results(content, where, open_ids, tools)
            open_ids = []
        else:
            if open_ids:
                _check_results([], f"messages.{i - 1}", open_ids, tools)
            open_ids = [b["id"] for b in content if b.get("type") == "tool_use"]
    if open_ids:
        _check_results([], f"messages.{len(messages) - 1}", open_ids, tools)


def validate_request(body: Any) -> dict[str, dict[str, Any]]:
    """Raise `RequestError` where the real Messages endpoint answers 400; return the tools."""
    if not isinstance(body, dict):
        msg = "Could not parse the JSON body of your request."
        raise RequestError(msg)
    if not isinstance(body.get("model"), str) or not body["model"]:
        msg = "model: Field required"
        raise RequestError(msg)
    if not isinstance(body.get("max_tokens"), int):
        msg = "max_tokens: Field required"
        raise RequestError(msg)
    tools = validate_tools(body)
    validate_messages(body, tools)
    return tools


def referenced(body: Mapping[str, Any]) -> set[str]:
    """Tool names of the `tool_reference` blocks in the `tool_result`s of the history."""
    names: set[str] = set()
    for msg in body.get("messages") or []:
        for block in blocks(msg.get("content")):
            if block.get("type") == "tool_result":
                for ref in blocks(block.get("content")):
                    if ref.get("type") == REFERENCE:
                        names.add(str(ref.get("tool_name")))
    return names


def callable_tools(body: Mapping[str, Any]) -> list[str]:
    """Tools the model may call after this request's history, in the request's `tools` order:
    the loaded ones and every deferred one a `tool_reference` has expanded."""
    refs = referenced(body)
    return [
        str(t["name"])
        for t in body.get("tools") or []
        if t.get(DEFER) is not True or t.get("name") in refs
    ]


# -- replies --------------------------------------------------------------------------------


def message_object(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: Mapping[str, int],
) -> dict[str, Any]:
    """A Messages API `message` object (the non-streamed reply)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }


# -- streaming ------------------------------------------------------------------------------


def stream_events(message: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events (name, data) that stream a Messages API `message` object."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "usage": usage}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message.get("content") or []):
        if block["type"] == "text":
            opening = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def sse(name: str, data: Mapping[str, Any]) -> str:
    """One server-sent event as sent on the wire."""
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"
