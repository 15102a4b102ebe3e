"""Every tool result is bounded at 100,000 characters with the cut marked: an MCP tool, a plain
tool under the gating middleware and the gateway (`common.limits.clip`, the full size reported),
and a plain tool under the core scoping middleware (`attention_scoping.gate.clipped`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from mcp import types as mcp_types

from attention_scoping.adapters.refusals import bounded_result
from attention_scoping.common.limits import (
    PREVIEW_CHARS,
    RESULT_MAX_CHARS,
    check_result_limit,
    clip,
    clip_content,
)
from attention_scoping.gate import MAX_RESULT_CHARS
from attention_scoping.gateway import ToolGateway
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.mcp import McpServers
from attention_scoping.mcp.cache import ToolListCache, listing_from_tools
from attention_scoping.mcp.config import load_config
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

HUGE = 50_000_000
MARK = re.compile(r"\n\[\.\.\. cut: ([\d,]+) characters, showing the first ([\d,]+)\]$")


def assert_cut(text: str, limit: int, total: int) -> None:
    """`text` is exactly `limit` long, ends with the mark reporting `total`, and shows as many
    characters as it says."""
    match = MARK.search(text)
    assert match is not None, text[-100:]
    assert int(match.group(1).replace(",", "")) == total
    shown = int(match.group(2).replace(",", ""))
    assert match.start() == shown and len(text) == limit


def test_clip_marks_the_cut_and_reports_the_full_size() -> None:
    assert clip("short", 300) == "short"
    text = clip("x" * HUGE, 2_000)
    assert_cut(text, 2_000, HUGE)
    assert text.endswith("\n[... cut: 50,000,000 characters, showing the first 1,942]")
    assert clip(text, 2_000) is text  # clipping again changes nothing
    assert clip("abc", 300, total=9_000).endswith(
        "[... cut: 9,000 characters, showing the first 3]"
    )


def test_clip_content_cuts_blocks_in_order_and_drops_what_does_not_fit() -> None:
    blocks: list[Any] = [
        {"type": "text", "text": "a" * 150},
        {"type": "image", "base64": "b" * 10_000, "mime_type": "image/png"},
        {"type": "text", "text": "c" * 50},
    ]
    clipped = clip_content(blocks, 300)
    assert [b["type"] for b in clipped] == ["text", "text"]
    assert clipped[0]["text"] == "a" * 150
    assert clipped[1]["text"] == "[... cut: 10,200 characters, showing the first 150]"
    fits = blocks[:1]
    assert clip_content(fits, 300) is fits
    long_text = [{"type": "text", "text": "z" * 1_000}]
    assert clip_content(long_text, 300)[0]["text"].startswith("z" * 200)


def test_the_limit_is_checked_at_construction() -> None:
    assert check_result_limit(None) is None and check_result_limit(500) == 500
    for bad in (0, 10, 1.5, True):
        with pytest.raises(ValueError, match="result_max_chars must be None or an integer"):
            check_result_limit(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be an integer of at least 200, not None"):
        McpServers({"mcpServers": {"a": {"command": "x"}}}, result_max_chars=None)  # type: ignore[arg-type]


@pytest.fixture
def mcp_servers(tmp_path: Path) -> McpServers:
    """A server known from its cached listing, whose every call answers 50 MB of text."""
    config = load_config({"mcpServers": {"big": {"command": "big-server"}}})
    cache = ToolListCache(tmp_path)
    cache.put(config.servers["big"], listing_from_tools([{"name": "dump"}], None, None))
    servers = McpServers(config, cache_dir=str(tmp_path), discover="cache")

    async def answer(tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text="y" * HUGE)]
        )

    servers.connections["big"].call = answer  # type: ignore[method-assign]
    return servers


def test_an_mcp_tool_answering_50_mb_is_cut(mcp_servers: McpServers) -> None:
    dump = mcp_servers.tools[0]
    assert_cut(dump.invoke({}), RESULT_MAX_CHARS, HUGE)
    message = dump.invoke(tool_call("dump", {}, "c1"))  # as an agent's tool node calls it
    assert isinstance(message, ToolMessage)
    assert_cut(message.text, RESULT_MAX_CHARS, HUGE)
    mcp_servers.close()


async def test_an_mcp_tool_is_cut_on_the_async_path_too(mcp_servers: McpServers) -> None:
    assert_cut(await mcp_servers.tools[0].ainvoke({}), RESULT_MAX_CHARS, HUGE)
    await mcp_servers.aclose()


@tool
def dump_text(n: int) -> str:
    """Return n characters of text."""
    return "q" * n


@tool
def small_text() -> str:
    """Return a short text."""
    return "small"


def tool_texts(middleware: list[Any], tools: list[Any], steps: list[Any]) -> list[str]:
    model = ScriptedChatModel(script=[*steps, say("done")])
    agent = create_agent(model, tools=tools, middleware=middleware)
    result = agent.invoke({"messages": [HumanMessage("dump the text")]})
    return [m.text for m in result["messages"] if isinstance(m, ToolMessage)]


def test_plain_tools_are_cut_under_the_scoping_middleware() -> None:
    scoping = AttentionScopingMiddleware(
        [Scope("io", "text dumps", tools=[dump_text, small_text])], default_scope="io"
    )
    texts = tool_texts(
        [scoping],
        [dump_text, small_text],
        [calls(tool_call("dump_text", {"n": 300_000}), tool_call("small_text"))],
    )
    mark = "\n[result cut: 200,000 of 300,000 characters not shown]"
    assert MAX_RESULT_CHARS == RESULT_MAX_CHARS
    assert texts[0] == "q" * MAX_RESULT_CHARS + mark
    assert texts[1] == "small"


def test_plain_tools_are_cut_under_the_gate() -> None:
    """The gate cuts a plain tool's result at the core's one limit, with a visible mark."""
    gate = ToolAttentionMiddleware(ranker="bm25", k=2, summary_pool="off", pinned=["dump_text"])
    texts = tool_texts(
        [gate], [dump_text, small_text], [calls(tool_call("dump_text", {"n": 150_000}))]
    )
    assert len(texts[0]) < 101_000 and texts[0].startswith("q" * 1_000)
    assert "[result cut: 50,000 of 150,000 characters not shown]" in texts[0]


def test_bounded_result_cuts_messages_inside_a_command() -> None:
    big = ToolMessage("w" * 5_000, tool_call_id="c1", name="t")
    command: Command[Any] = Command(update={"messages": [big], "active_context": "x"})
    cut = bounded_result(command, 1_000)
    assert isinstance(cut, Command) and isinstance(cut.update, dict)
    assert_cut(cut.update["messages"][0].text, 1_000, 5_000)
    assert cut.update["active_context"] == "x"
    small: Command[Any] = Command(update={"messages": [ToolMessage("ok", tool_call_id="c2")]})
    assert bounded_result(small, 1_000) is small
    assert bounded_result(big, None) is big


def test_the_gateway_uses_the_same_limit_and_cut() -> None:
    gateway = ToolGateway([dump_text], ranker=lambda query, specs: [])
    assert gateway.execute("dump_text", {"n": RESULT_MAX_CHARS - 10})["status"] == "ok"
    body = gateway.execute("dump_text", {"n": 150_000})
    assert body["error"] == "result_too_large" and body["ran"] is True
    assert_cut(body["preview"], PREVIEW_CHARS, 150_000)
    assert len(json.dumps(body)) < 5_000
