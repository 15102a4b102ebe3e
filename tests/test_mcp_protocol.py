"""The MCP client on the current protocol: revisions, cache-stable listings, list changes between
turns, annotations feeding approval and the repeat guard, and faults that cannot crash.

Servers written for the tests run with this interpreter: `fastmcp_server.py` (MCPServer, protocol
2026-07-28) and `changing_server.py` (the 2025 handshake; its tool list changes mid-session).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from mcp import types as mcp_types

from attention_scoping.approval.middleware import ApprovalGate, ApprovalMiddleware, asks_approval
from attention_scoping.hesitation.repeats import REPEAT_MARK, RepeatedCallMiddleware
from attention_scoping.mcp import (
    McpConnectMiddleware,
    McpFault,
    McpServers,
    McpTool,
    ServerDescription,
    discover_servers,
)
from attention_scoping.mcp.cache import ToolListCache, listing_from_tools
from attention_scoping.mcp.config import load_config
from attention_scoping.mcp.faults import exception_text
from attention_scoping.mcp.tools import as_content, make_tool, tool_metadata
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.prompt import Layout
from attention_scoping.risk import declared_read
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.mcp_support import child_pids, python_server, wait_for

CALC = python_server("fastmcp_server.py")
CHANGING = python_server("changing_server.py")
HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@pytest.fixture
def changing(tmp_path: Path) -> Iterator[McpServers]:
    servers = McpServers({"mcpServers": {"changing": CHANGING}}, cache_dir=str(tmp_path / "c"))
    yield servers
    servers.close()


def _schema(recorded: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((s for s in recorded["schemas"] if s["function"]["name"] == name), None)


# -- protocol revisions -------------------------------------------------------------------------


def test_the_newest_revision_a_server_speaks_is_negotiated(tmp_path: Path) -> None:
    config = {"mcpServers": {"calc": CALC, "changing": CHANGING}}
    with McpServers(config, cache_dir=str(tmp_path)) as servers:
        servers.connect("calc")
        servers.connect("changing")
        assert servers.connections["calc"].protocol_version == "2026-07-28"
        # a 2025 server answers server/discover with an error: the handshake follows
        assert servers.connections["changing"].protocol_version in HANDSHAKE_REVISIONS
        assert servers.connections["calc"].listing is not None
        assert servers.connections["calc"].listing.protocol == "2026-07-28"
        assert servers.call("changing", "echo", {"text": "hi"}) == "hi"


# -- cache-stable listings ----------------------------------------------------------------------


def test_the_tools_array_is_sorted_and_the_same_on_every_run(tmp_path: Path) -> None:
    config = {"mcpServers": {"changing": CHANGING, "calc": CALC}}
    runs: list[list[str]] = []
    for run in range(3):  # the changing server shuffles its listing every time
        with McpServers(config, cache_dir=str(tmp_path / str(run))) as servers:
            runs.append([t.name for t in servers.tools])
            assert [s.name for s in servers.scopes] == ["changing", "calc"]  # config order
            assert servers.scopes[0].tools == ("echo", "lookup", "retire")
    assert runs[0] == runs[1] == runs[2] == sorted(runs[0])


def test_the_cache_keeps_ttl_and_scope_and_a_private_listing_is_private(tmp_path: Path) -> None:
    server = load_config({"mcpServers": {"calc": CALC}}).servers["calc"]
    cache = ToolListCache(tmp_path)
    tools = [{"name": "b"}, {"name": "a"}]
    private = listing_from_tools(tools, None, "calc", ttl_ms=60_000, protocol="2026-07-28")
    cache.put(server, private)
    read = cache.get(server)
    assert read is not None and read.names == ("a", "b")
    assert (read.ttl_ms, read.cache_scope, read.protocol) == (60_000, "private", "2026-07-28")
    assert stat.S_IMODE(os.stat(cache.path(server)).st_mode) == 0o600
    assert not read.expired() and read.expired(now=read.fetched_at + 61)
    cache.put(server, dataclasses.replace(private, cache_scope="public"))
    assert stat.S_IMODE(os.stat(cache.path(server)).st_mode) == 0o644
    unstated = listing_from_tools(tools, None, None)  # ttl 0: no stated lifetime
    assert not unstated.expired(now=unstated.fetched_at + 1e9)


def test_an_expired_cached_listing_is_listed_again_when_connecting_is_allowed(
    tmp_path: Path,
) -> None:
    config = load_config({"mcpServers": {"changing": CHANGING}})
    cache = ToolListCache(tmp_path)
    old = listing_from_tools([{"name": "echo"}], None, None, ttl_ms=1_000)
    cache.put(config.servers["changing"], dataclasses.replace(old, fetched_at=time.time() - 5))
    with McpServers(config, cache_dir=str(tmp_path), discover="cache") as kept:
        assert kept.scopes[0].tools == ("echo",)  # may not connect: the old listing serves
    with McpServers(config, cache_dir=str(tmp_path)) as fresh:
        assert fresh.scopes[0].tools == ("echo", "lookup", "retire")


# -- list changes reach the next turn -----------------------------------------------------------


def test_a_list_change_reaches_the_next_turn_never_the_middle(changing: McpServers) -> None:
    script = [
        calls(tool_call("load_context", {"name": "changing"})),
        calls(tool_call("retire", {})),
        calls(tool_call("echo", {"text": "same turn"})),
        say("done"),
        calls(tool_call("echo", {"text": "next turn"})),
        say("done again"),
    ]
    model = ScriptedChatModel(script=script)
    middleware: list[Any] = [
        AttentionScopingMiddleware(changing.scopes, selector=None),
        McpConnectMiddleware(changing),
    ]
    agent = create_agent(
        model, tools=changing.tools, middleware=middleware, checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("retire lookup")]}, config)
    during = model.recorded[2:4]  # the model calls after `retire` ran, in the same turn
    for recorded in during:
        assert recorded["tools"][1:] == ["echo", "lookup", "retire"]
        echo = _schema(recorded, "echo")
        assert echo is not None and "capitals" not in echo["function"]["description"]
    result = agent.invoke({"messages": [HumanMessage("echo again")]}, config)
    after = model.recorded[4]
    assert after["tools"][1:] == ["echo", "retire"]  # lookup withdrawn from this turn on
    echo = _schema(after, "echo")
    assert echo is not None and "capitals" in echo["function"]["description"]
    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    # the server itself changed at once; only what the model was shown waited for the turn
    assert answers[-2:] == ["SAME TURN", "NEXT TURN"]
    assert changing.withdrawn["changing"] == frozenset({"lookup"})
    cached = changing.cache.get(changing.config.servers["changing"])
    assert cached is not None and cached.names == ("echo", "fresh", "retire")


def _retiring_agent(
    changing: McpServers, layout: Layout
) -> tuple[ScriptedChatModel, Any, RunnableConfig]:
    """An agent over the changing server whose first turn loads it and calls `retire` (the
    server then withdraws `lookup`), and whose second turn answers at once."""
    script = [
        calls(tool_call("load_context", {"name": "changing"})),
        calls(tool_call("retire", {})),
        say("done"),
        say("still here"),
    ]
    model = ScriptedChatModel(script=script)
    middleware: list[Any] = [
        AttentionScopingMiddleware(changing.scopes, layout=layout, selector=None),
        McpConnectMiddleware(changing),
    ]
    agent = create_agent(
        model, tools=changing.tools, middleware=middleware, checkpointer=InMemorySaver()
    )
    return model, agent, {"configurable": {"thread_id": "t"}}


def test_the_index_line_follows_a_list_change_at_the_next_turn(changing: McpServers) -> None:
    """The capability index line of a server whose list changed (lookup withdrawn) is updated
    with its tools: at the next turn's first model call, never in the middle of the turn."""
    # the layered layout: the index line is in the system prompt
    model, agent, config = _retiring_agent(changing, "layered")
    old = "MCP server changing; tools: echo, lookup and 1 tool that changes data"  # retire
    new = "MCP server changing; tools: echo and 1 tool that changes data"
    agent.invoke({"messages": [HumanMessage("retire lookup")]}, config)
    for recorded in model.recorded[:3]:  # before and after `retire` ran, in the same turn
        assert f"- changing: {old}" in recorded["system"] and new not in recorded["system"]
    assert changing.index_lines["changing"] == old
    agent.invoke({"messages": [HumanMessage("and now?")]}, config)
    system = model.recorded[3]["system"]
    assert f"- changing: {new}" in system and old not in system  # the index and the module
    assert changing.index_lines["changing"] == new
    assert [s.description for s in changing.scopes] == [new]  # an agent built now gets it


def test_a_withdrawn_tool_answers_tool_withdrawn(changing: McpServers) -> None:
    tools = {t.name: t for t in changing.tools}
    assert tools["retire"].invoke({}) == "retired lookup"
    message = tools["lookup"].invoke(tool_call("lookup", {"text": "x"}, "c1"))
    assert message.status == "error" and json.loads(message.text)["error"] == "tool_withdrawn"


# -- annotations feed the rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "risk", "approval"),
    [
        (None, "write", True),  # no annotations: may write (the spec's default)
        ({"readOnlyHint": True}, "read", False),
        ({"readOnlyHint": False, "destructiveHint": False}, "write", True),
        ({"destructiveHint": True}, "write", True),
        ({"readOnlyHint": True, "destructiveHint": True}, "write", True),
        ({"idempotentHint": True}, "write", True),
    ],
)
def test_annotations_set_the_risk(
    annotations: dict[str, Any] | None, risk: str, approval: bool
) -> None:
    record: dict[str, Any] = {"name": "t", "inputSchema": {"type": "object"}}
    if annotations is not None:
        record["annotations"] = annotations
    metadata = tool_metadata("s", record)
    assert metadata["risk"] == risk and asks_approval(metadata) is approval
    tool = _fake_tool("t", annotations, [])
    assert declared_read(tool) is (risk == "read")


def _fake_tool(name: str, annotations: dict[str, Any] | None, runs: list[str]) -> McpTool:
    """An `McpTool` over an in-process stand-in for a server (records each run)."""

    def call(server: str, remote: str, arguments: dict[str, Any]) -> str:
        runs.append(remote)
        return f"{remote} #{len(runs)}"

    async def acall(server: str, remote: str, arguments: dict[str, Any]) -> str:
        return call(server, remote, arguments)

    record: dict[str, Any] = {"name": name, "description": name, "inputSchema": {"type": "object"}}
    if annotations is not None:
        record["annotations"] = annotations
    return make_tool(name=name, server="s", record=record, call=call, acall=acall)


def test_a_destructive_mcp_tool_is_behind_approval_by_default() -> None:
    runs: list[str] = []
    reset = _fake_tool("git_reset", {"readOnlyHint": False, "destructiveHint": True}, runs)
    status = _fake_tool("git_status", {"readOnlyHint": True}, runs)
    model = ScriptedChatModel(
        script=[
            calls(tool_call("git_status", {}, "s1"), tool_call("git_reset", {}, "r1")),
            say("reset"),
        ]
    )
    gate = ApprovalGate(TokenIssuer(secrets.token_urlsafe(48)))
    agent = create_agent(
        model,
        tools=[reset, status],
        middleware=[ApprovalMiddleware(gate)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "a"}}
    agent.invoke({"messages": [HumanMessage("reset the repo")]}, config)
    (interrupt,) = agent.get_state(config).interrupts
    assert interrupt.value["name"] == "git_reset"
    assert runs == ["git_status"]  # the read ran; the destructive call waits for a human


def test_only_an_idempotent_read_is_answered_from_the_earlier_result() -> None:
    runs: list[str] = []
    clock = _fake_tool("now", {"readOnlyHint": True, "idempotentHint": False}, runs)
    status = _fake_tool("status", {"readOnlyHint": True, "idempotentHint": True}, runs)
    script = [
        calls(tool_call("now", {}, "n1")),
        calls(tool_call("status", {}, "s1")),
        calls(tool_call("now", {}, "n2")),
        calls(tool_call("status", {}, "s2")),
        say("done"),
    ]
    model = ScriptedChatModel(script=script)
    agent = create_agent(model, tools=[clock, status], middleware=[RepeatedCallMiddleware()])
    result = agent.invoke({"messages": [HumanMessage("time and status, twice")]})
    assert runs == ["now", "status", "now"]  # the varying read ran again; the idempotent one not
    answered = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answered[-1].response_metadata.get(REPEAT_MARK) is True


# -- faults that cannot crash -------------------------------------------------------------------


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_an_exception_whose_str_raises_still_becomes_text() -> None:
    text = exception_text(_Unprintable())
    assert text.startswith("_Unprintable") and "could not be read" in text
    group = BaseExceptionGroup("g", [_Unprintable(), ValueError("v")])
    assert "_Unprintable" in exception_text(group) and "ValueError: v" in exception_text(group)


def test_deeply_nested_structured_content_is_bounded_not_a_recursion_error() -> None:
    nested: Any = "leaf"
    for _ in range(5_000):
        nested = {"a": [nested]}
    result = mcp_types.CallToolResult(content=[], structured_content=nested)
    content = as_content("s", "t", result)
    assert isinstance(content, str) and content.startswith("[structured content omitted")
    flat = mcp_types.CallToolResult(content=[], structured_content={"n": 1})
    assert as_content("s", "t", flat) == '{"n": 1}'


# -- server/discover ----------------------------------------------------------------------------


def test_server_discover_describes_a_current_server_and_skips_a_2025_one() -> None:
    found = discover_servers(
        {"mcpServers": {"calc": CALC, "changing": CHANGING, "gone": {"command": "no-such-mcp"}}}
    )
    calc = found["calc"]
    assert isinstance(calc, ServerDescription)
    assert calc.versions == ("2026-07-28",) and calc.tools and calc.list_changed
    assert (calc.instructions or "").startswith("Exact integer arithmetic")
    assert found["changing"] is None  # no server/discover; no initialize was sent either
    gone = found["gone"]
    assert isinstance(gone, McpFault) and gone.code == "server_unavailable"


def requests(log: Path) -> list[tuple[int, str]]:
    """(pid, method) of every request the stateless server received, in order."""
    if not log.exists():
        return []
    return [(int(p), m) for p, m in (line.split() for line in log.read_text().splitlines())]


def sessions(log: Path) -> int:
    """How many sessions the stateless server saw opened (`subscriptions/listen`, `initialize`)."""
    return sum(method in ("subscriptions/listen", "initialize") for _pid, method in requests(log))


def test_a_server_offering_discover_is_indexed_without_a_session(tmp_path: Path) -> None:
    """Its scope's index line (scope name, description, tool names) comes from `server/discover`
    and the stateless `tools/list`: zero sessions until the model loads the scope; a 2025
    server beside it is listed through its handshake, as before."""
    log = tmp_path / "requests.log"
    stateless = python_server("stateless_server.py", "--log", str(log))
    config = {"mcpServers": {"plain": stateless, "changing": CHANGING}}
    before = set(child_pids())
    servers = McpServers(config, cache_dir=str(tmp_path / "cache"))
    try:
        plain = servers.descriptions["plain"]
        assert plain.versions == ("2026-07-28",) and plain.tools and plain.list_changed
        assert "changing" not in servers.descriptions and "changing" in servers.listings
        scope = next(s for s in servers.scopes if s.name == servers.scope_names["plain"])
        assert scope.description == "MCP server plain; tools: repeat, shout"
        assert [m for _pid, m in requests(log)] == ["server/discover", "tools/list"]
        assert servers.connections["plain"].starts == 0 and servers.connected() == []
        assert wait_for(lambda: set(child_pids()) <= before)  # nothing left running
        seen: list[int] = []

        def first(messages: list[Any], tools: list[str]) -> Any:
            seen.append(sessions(log))
            return calls(tool_call("load_context", {"name": scope.name}, "l1"))

        def after_load(messages: list[Any], tools: list[str]) -> Any:
            wait_for(lambda: sessions(log) == 1)  # the load opened the session (prefetch)
            seen.append(sessions(log))
            return calls(tool_call("shout", {"text": "hi"}, "s1"))

        model = ScriptedChatModel(script=[first, after_load, say("HI")])
        middleware: list[Any] = [
            AttentionScopingMiddleware(servers.scopes, selector=None),
            McpConnectMiddleware(servers),
        ]
        result = create_agent(model, tools=servers.tools, middleware=middleware).invoke(
            {"messages": [HumanMessage("shout hi")]}
        )
        assert seen == [0, 1]
        shouted = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
        assert shouted.text == "HI" and servers.connections["plain"].starts == 1
        assert sessions(log) == 1 and servers.connected() == ["plain"]
    finally:
        servers.close()


@pytest.mark.parametrize(("ttl", "relisted"), [(200, True), (0, False)])
def test_an_expired_listing_is_read_again_at_the_next_turn(
    tmp_path: Path, ttl: int, relisted: bool
) -> None:
    server = python_server("fastmcp_server.py", "--ttl", str(ttl), "--quiet")
    with McpServers({"mcpServers": {"calc": server}}, cache_dir=str(tmp_path)) as servers:
        assert servers.call("calc", "enable_history", {}) == "history enabled"  # unannounced
        listing = servers.connections["calc"].listing
        assert listing is not None and listing.ttl_ms == ttl
        time.sleep(0.3)  # past a 200 ms ttlMs
        assert servers.begin_turn() == (["calc"] if relisted else [])
        assert ("history" in servers.listings["calc"].names) is relisted
