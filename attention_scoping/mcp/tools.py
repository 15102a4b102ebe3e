"""LangChain tools that stand for MCP tools: registered up front, connected on first call.

An `McpTool` is built from a tool listing (live or cached), so the agent can register every
MCP tool with `create_agent` before any server runs (LangChain only lets middleware narrow the
registered tools, never add). Calling it goes through `McpServers`, which opens the server's
session on first use. A failure comes back as a `status="error"` ToolMessage whose JSON body
says what happened and what to do next. Every result is cut to `common.limits.RESULT_MAX_CHARS`
(the cut marked, the full size reported) and passes the server's redaction (`core.redact`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import StructuredTool, ToolException
from mcp import types as mcp_types
from typing_extensions import override

from attention_scoping.common.errors import render_payload
from attention_scoping.common.limits import (
    RESULT_MAX_CHARS,
    JsonLimits,
    clip,
    clip_content,
    content_size,
    measure,
)
from attention_scoping.mcp.faults import McpFault, fault_payload

Content = str | list[dict[str, Any]]
Redact = Callable[[str], str]
"""Masks secrets in a text (`ServerConfig.redact`)."""


def _keep(text: str) -> str:
    return text


class McpTool(StructuredTool):
    """One MCP tool of one server, exposed under a provider-safe (maybe namespaced) name.

    Called as a tool call (by an agent), a failure becomes a `status="error"` ToolMessage; called
    with plain arguments (`tool.invoke({...})`, the gateway), it raises `ToolException` with the
    same JSON payload, so callers that wrap errors themselves see a failure, not a result.
    """

    server: str
    """The configured server name (the key in `mcpServers`)."""
    remote_name: str
    """The tool's name on its server (what `tools/call` is sent)."""

    def _raising(self) -> McpTool:
        return self.model_copy(update={"handle_tool_error": False})

    @override
    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Run; faults raise unless this is a tool call (then they become error messages)."""
        if kwargs.get("tool_call_id") is None and self.handle_tool_error:
            return self._raising().run(tool_input, *args, **kwargs)
        return super().run(tool_input, *args, **kwargs)

    @override
    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Async form of `run`."""
        if kwargs.get("tool_call_id") is None and self.handle_tool_error:
            return await self._raising().arun(tool_input, *args, **kwargs)
        return await super().arun(tool_input, *args, **kwargs)


def _block(item: Any) -> dict[str, Any]:
    """One MCP content item as a LangChain content block (text where nothing better fits)."""
    if isinstance(item, mcp_types.TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, mcp_types.ImageContent):
        return {"type": "image", "base64": item.data, "mime_type": item.mime_type}
    if isinstance(item, mcp_types.EmbeddedResource):
        resource = item.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return {"type": "text", "text": resource.text}
        return {"type": "text", "text": f"[binary resource {resource.uri} omitted]"}
    if isinstance(item, mcp_types.ResourceLink):
        return {"type": "text", "text": f"[resource {item.name}: {item.uri}]"}
    return {"type": "text", "text": f"[{getattr(item, 'type', 'unknown')} content omitted]"}


STRUCTURED_LIMITS = JsonLimits(max_depth=64, max_chars=10_000_000)
"""Bounds on a result's `structuredContent` before it is written as JSON text (a value built
in-process can nest past the interpreter's recursion limit)."""


def structured_text(value: Any) -> str:
    """`value` (a result's `structuredContent`) as JSON text, or a marked notice when it nests
    too deep or cannot be written (never a `RecursionError`)."""
    problem = measure(value, STRUCTURED_LIMITS)
    if problem is not None and problem.rule != "maxSize":
        return f"[structured content omitted: {problem.message}]"
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return "[structured content omitted: it nests too deep to write]"
    except (TypeError, ValueError) as exc:
        return f"[structured content omitted: {type(exc).__name__}]"


def result_content(result: mcp_types.CallToolResult) -> Content:
    """The content of a successful result: plain text when it is all text, else blocks."""
    blocks = [_block(item) for item in result.content]
    if not blocks and result.structured_content is not None:
        return structured_text(result.structured_content)
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return blocks


ERROR_MAX_CHARS = 4_000
"""The most characters of a tool's own error text the model is sent."""


def fault_exception(fault: McpFault) -> ToolException:
    """The exception LangChain turns into an error ToolMessage carrying `fault`'s payload."""
    return ToolException(render_payload(fault_payload(fault)))


REDACT_SLACK = 4_096
"""Characters past the limit that are redacted before the cut, so a secret straddling the cut
is masked whole (and a 50 MB answer is not scanned whole)."""


def safe_content(
    content: Content, redact: Redact = _keep, limit: int = RESULT_MAX_CHARS
) -> Content:
    """`content` with its text redacted and cut to `limit` characters (`common.limits.clip`),
    the mark reporting the full size."""
    head = limit + REDACT_SLACK
    if isinstance(content, str):
        total = len(content) if len(content) > head else None
        return clip(redact(content[:head]), limit, total)
    cut = any(len(b.get("text") or "") > head for b in content if isinstance(b, dict))
    redacted = [
        {**b, "text": redact(b["text"][:head])} if isinstance(b.get("text"), str) else b
        for b in content
    ]
    return clip_content(redacted, limit, content_size(content) if cut else None)


def tool_error(
    server: str, tool: str, result: mcp_types.CallToolResult, redact: Redact = _keep
) -> ToolException:
    """The exception (turned into an error ToolMessage) for a result with `isError: true`."""
    content = result_content(result)
    text = content if isinstance(content, str) else structured_text(content)
    head = ERROR_MAX_CHARS + REDACT_SLACK
    text = clip(redact(text[:head]), ERROR_MAX_CHARS, len(text) if len(text) > head else None)
    fault = McpFault(server, text or "the tool reported an error", code="tool_error", tool=tool)
    return fault_exception(fault)


def as_content(
    server: str,
    tool: str,
    result: mcp_types.CallToolResult,
    redact: Redact = _keep,
    limit: int = RESULT_MAX_CHARS,
) -> Content:
    """Content of `result`, bounded and redacted (`safe_content`), raising the error-ToolMessage
    exception for an `isError` result."""
    if result.is_error:
        raise tool_error(server, tool, result, redact)
    return safe_content(result_content(result), redact, limit)


def tool_metadata(server: str, record: dict[str, Any]) -> dict[str, Any]:
    """The metadata of the tool for `record`: its server, remote name, annotations and `risk`.

    `risk` is `"read"` only when the server says `readOnlyHint: true` (and not
    `destructiveHint: true`): missing annotations mean "may write", the spec's default, so
    approval (`approval.asks_approval`), `attention_scoping.risk` and the repeat guard treat an
    unannotated tool as a write. The annotations are kept (`idempotentHint` informs the repeat
    guard, `hesitation.repeats`).
    """
    hints = record.get("annotations")
    hints = dict(hints) if isinstance(hints, dict) else {}
    reads = hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True
    metadata: dict[str, Any] = {
        "mcp_server": server,
        "mcp_tool": str(record["name"]),
        "risk": "read" if reads else "write",
    }
    if hints:
        metadata["annotations"] = hints
    return metadata


def make_tool(
    *,
    name: str,
    server: str,
    record: dict[str, Any],
    call: Callable[[str, str, dict[str, Any]], Content],
    acall: Callable[[str, str, dict[str, Any]], Awaitable[Content]],
    description: str | None = None,
) -> McpTool:
    """An `McpTool` for the raw MCP tool `record` of `server`, calling through `call`/`acall`
    (described by `description`, default the record's)."""
    remote = str(record["name"])

    def run(**arguments: Any) -> Content:
        try:
            return call(server, remote, arguments)
        except McpFault as fault:
            raise fault_exception(fault) from None

    async def arun(**arguments: Any) -> Content:
        try:
            return await acall(server, remote, arguments)
        except McpFault as fault:
            raise fault_exception(fault) from None

    return McpTool(
        name=name,
        description=str(record.get("description") or "") if description is None else description,
        args_schema=dict(record["inputSchema"]),
        func=run,
        coroutine=arun,
        handle_tool_error=True,
        metadata=tool_metadata(server, record),
        server=server,
        remote_name=remote,
    )


def refresh_tool(tool: McpTool, record: dict[str, Any], description: str | None = None) -> None:
    """Update a registered tool's description (default the record's), schema and annotations
    from a fresh listing."""
    tool.description = str(record.get("description") or "") if description is None else description
    tool.args_schema = dict(record["inputSchema"])
    tool.metadata = tool_metadata(tool.server, record)
