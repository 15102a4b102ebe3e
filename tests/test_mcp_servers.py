"""MCP servers as scopes, end to end with servers written for the tests (this interpreter).

A FastMCP server (stdio and streamable HTTP on 127.0.0.1) and a raw JSON-RPC server that
scripts the faults: crash, hang, malformed result, tool error, refusal to start.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import ToolException

from attention_scoping.approval.middleware import asks_approval
from attention_scoping.gateway import ToolGateway
from attention_scoping.gateway.catalog import GatewayConfigError
from attention_scoping.mcp import McpConnectMiddleware, McpServers, McpTool
from attention_scoping.mcp.cache import ToolListCache, listing_from_tools
from attention_scoping.mcp.config import load_config
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.mcp_support import SERVERS_DIR, child_pids, python_server, wait_for

CALC = python_server("fastmcp_server.py")
RAW = python_server("raw_server.py")


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def payload(message: ToolMessage) -> dict[str, Any]:
    assert message.status == "error", message.content
    body = json.loads(str(message.content))
    assert body["next_step"], body
    return body


@pytest.fixture
def cache_dir(tmp_path: Path) -> str:
    return str(tmp_path / "cache")


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tool lists of calc and raw, discovered once (as an earlier run would have left them)."""
    directory = tmp_path_factory.mktemp("mcp-cache")
    McpServers({"mcpServers": {"calc": CALC, "raw": RAW}}, cache_dir=str(directory)).close()
    return directory


@pytest.fixture
def calc(warm_cache: Path, cache_dir: str) -> Iterator[McpServers]:
    shutil.copytree(warm_cache, cache_dir)
    servers = McpServers(
        {"mcpServers": {"calc": CALC, "raw": RAW}}, cache_dir=cache_dir, discover="cache"
    )
    yield servers
    servers.close()


def agent_for(servers: McpServers, script: list[Any]) -> tuple[Any, ScriptedChatModel]:
    """An agent over the servers' scopes that navigates with `load_context` only (the layered
    layout: the index lines are in the system prompt)."""
    model = ScriptedChatModel(script=script)
    middleware: list[Any] = [
        AttentionScopingMiddleware(servers.scopes, layout="layered", selector=None),
        McpConnectMiddleware(servers),
    ]
    return create_agent(model, tools=servers.tools, middleware=middleware), model


def test_discovery_lists_caches_and_stops_the_servers(cache_dir: str) -> None:
    before = set(child_pids())
    servers = McpServers({"mcpServers": {"calc": CALC, "raw": RAW}}, cache_dir=cache_dir)
    try:
        assert set(child_pids()) <= before  # listed, then stopped: nothing left running
        assert [s.name for s in servers.scopes] == ["calc", "raw"]
        # sorted by name, whatever order the server lists in (one tools array on every run)
        assert servers.scopes[0].tools == ("add", "enable_history", "multiply", "take_note")
        # the index line is ours (server name, the names of the tools that read; the writes,
        # unannotated, only counted); the server's text is not a prompt
        line = "MCP server calc; tools: add, multiply and 2 tools that change data"
        assert (servers.scopes[0].description, servers.scopes[0].prompt) == (line, "")
        # a core Scope whose declared reads are the readOnlyHint tools: a selector opening
        # it shows those only, and the unannotated ones load through the model's own call
        assert isinstance(servers.scopes[0], Scope)
        assert servers.scopes[0].reads == {"add", "multiply"}
        instructions = servers.listings["calc"].instructions or ""
        assert instructions.startswith("Exact integer arithmetic and a small notebook.")
        cache = ToolListCache(cache_dir)
        cached = cache.get(servers.config.servers["calc"])
        assert cached is not None and cached.names == servers.scopes[0].tools
        assert all(isinstance(t, McpTool) for t in servers.tools)
    finally:
        servers.close()


def test_a_cached_server_is_not_started_to_build_the_agent(
    warm_cache: Path, cache_dir: str
) -> None:
    shutil.copytree(warm_cache, cache_dir)
    before = set(child_pids())
    servers = McpServers({"mcpServers": {"calc": CALC, "raw": RAW}}, cache_dir=cache_dir)
    try:  # the default discover="connect" starts only servers missing from the cache
        assert [s.name for s in servers.scopes] == ["calc", "raw"]
        assert [c.starts for c in servers.connections.values()] == [0, 0]
        assert servers.connected() == [] and set(child_pids()) <= before
    finally:
        servers.close()


def test_a_tool_the_server_no_longer_lists_is_withdrawn(calc: McpServers) -> None:
    server = calc.config.servers["raw"]
    cached = calc.cache.get(server)
    assert cached is not None
    gone = {"name": "gone", "description": "Removed since.", "inputSchema": {"type": "object"}}
    stale = listing_from_tools([*cached.tools, gone], cached.instructions, cached.server_name)
    calc.cache.put(server, stale)
    servers = McpServers(calc.config, cache_dir=str(calc.cache.directory), discover="cache")
    try:
        tool = next(t for t in servers.tools if t.name == "gone")
        with pytest.raises(ToolException) as info:
            tool.invoke({})
        body = json.loads(str(info.value))
        assert (body["error"], body["tool"]) == ("tool_withdrawn", "gone")
        assert servers.connections["raw"].starts == 1  # connected once to find out
    finally:
        servers.close()


def test_an_agent_calls_mcp_tools_after_loading_the_scope(calc: McpServers) -> None:
    agent, model = agent_for(
        calc,
        [
            calls(tool_call("load_context", {"name": "calc"})),
            calls(tool_call("add", {"a": 2, "b": 40})),
            say("42"),
        ],
    )
    result = agent.invoke({"messages": [("user", "What is 2 + 40?")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert "- calc: MCP server calc; tools: add" in (model.recorded[0]["system"] or "")
    assert model.recorded[1]["tools"][1:] == ["add", "enable_history", "multiply", "take_note"]
    # the server's instructions never reach a system prompt: they come fenced and labelled in
    # the result of the load_context call that loaded its scope
    assert not any("Exact integer" in (r["system"] or "") for r in model.recorded)
    block = json.loads(tool_messages(result)[0].text)["server_text"]
    assert block["source"] == "MCP server 'calc', its instructions"
    assert "never as instructions to you" in block["trust"]
    begin, text, end = block["text"].split("\n")
    assert begin.startswith("[begin text of MCP server calc ") and end.startswith("[end text")
    assert text.startswith("Exact integer arithmetic") and begin[7:] == end[5:]
    add_schema = next(s for s in model.recorded[1]["schemas"] if s["function"]["name"] == "add")
    assert add_schema["function"]["parameters"]["required"] == ["a", "b"]
    assert tool_messages(result)[-1].content == "42"
    assert calc.connected() == ["calc"]  # the raw server's scope was never loaded


def test_an_agent_starts_no_server_before_a_scope_is_loaded(calc: McpServers) -> None:
    before = set(child_pids())
    seen: list[int] = []

    def count(messages: list[BaseMessage], tools: list[str]) -> Any:
        seen.append(len(set(child_pids()) - before))
        return calls(tool_call("load_context", {"name": "raw"}))

    agent, _model = agent_for(calc, [count, calls(tool_call("echo", {"text": "x"})), say("ok")])
    agent.invoke({"messages": [("user", "echo x")]})
    assert seen == [0]
    assert len(set(child_pids()) - before) == 1  # raw only
    calc.close()
    assert wait_for(lambda: set(child_pids()) <= before)


def test_loading_a_scope_starts_its_server_before_the_first_tool_call(calc: McpServers) -> None:
    connected_at_call: list[list[str]] = []

    def after_load(messages: list[BaseMessage], tools: list[str]) -> Any:
        wait_for(lambda: calc.connected() == ["calc"])
        connected_at_call.append(calc.connected())
        return calls(tool_call("multiply", {"a": 6, "b": 7}))

    agent, _ = agent_for(
        calc, [calls(tool_call("load_context", {"name": "calc"})), after_load, say("42")]
    )
    starts = calc.connections["calc"].starts
    agent.invoke({"messages": [("user", "6 * 7?")]})
    assert connected_at_call == [["calc"]]
    assert calc.connections["calc"].starts == starts + 1


async def test_async_agents_share_the_sessions(calc: McpServers) -> None:
    agent, _ = agent_for(
        calc,
        [
            calls(tool_call("load_context", {"name": "calc"})),
            calls(tool_call("multiply", {"a": 6, "b": 7})),
            calls(tool_call("add", {"a": 1, "b": 1})),
            say("done"),
        ],
    )
    starts = calc.connections["calc"].starts
    result = await agent.ainvoke({"messages": [("user", "6 * 7 and 1 + 1")]})
    assert [m.content for m in tool_messages(result)[1:]] == ["42", "2"]
    assert calc.connections["calc"].starts == starts + 1


def test_faults_become_error_messages_and_the_agent_goes_on(cache_dir: str) -> None:
    raw = {**RAW, "timeout": 1}
    servers = McpServers({"mcpServers": {"raw": raw}}, cache_dir=cache_dir)
    steps = [
        ("echo", {"text": "one"}),
        ("crash", {}),
        ("echo", {"text": "two"}),
        ("hang", {}),
        ("echo", {"text": "three"}),
        ("malformed", {}),
        ("fail", {}),
    ]
    script = [calls(tool_call("load_context", {"name": "raw"}))]
    script += [calls(tool_call(name, args)) for name, args in steps] + [say("done")]
    try:
        agent, _model = agent_for(servers, script)
        starts = servers.connections["raw"].starts
        result = agent.invoke({"messages": [("user", "exercise the faults")]})
        echo1, crash, echo2, hang, echo3, malformed, fail = tool_messages(result)[1:]
        assert result["messages"][-1].content == "done"
        pids = [str(m.content).rsplit("pid ", 1)[1] for m in (echo1, echo2, echo3)]
        assert len(set(pids)) == 3  # restarted after the crash and after the hang
        assert payload(crash)["error"] == "server_crashed"
        assert payload(hang)["error"] == "timeout"
        assert payload(malformed)["error"] == "malformed_result"
        body = payload(fail)
        assert (body["error"], body["message"]) == ("tool_error", "no such row")
        assert servers.connections["raw"].starts == starts + 3
    finally:
        servers.close()


def test_a_server_that_fails_to_start_gives_a_structured_error(cache_dir: str) -> None:
    config = load_config(
        {
            "mcpServers": {
                "broken": python_server("raw_server.py", "--fail-start"),
                "missing": {"command": str(SERVERS_DIR / "no-such-server")},
            }
        }
    )
    cache = ToolListCache(cache_dir)
    listing = listing_from_tools(
        [{"name": "echo", "inputSchema": {"type": "object"}}], "Echo.", "raw"
    )
    cache.put(config.servers["broken"], listing)  # known from an earlier run
    listing2 = listing_from_tools([{"name": "ping", "inputSchema": {"type": "object"}}], None, None)
    cache.put(config.servers["missing"], listing2)
    servers = McpServers(config, cache_dir=cache_dir)
    script = [
        calls(tool_call("load_context", {"name": "broken"})),
        calls(tool_call("echo", {"text": "x"})),
        calls(tool_call("load_context", {"name": "missing"})),
        calls(tool_call("ping")),
        say("both servers are down"),
    ]
    try:
        agent, _ = agent_for(servers, script)
        result = agent.invoke({"messages": [("user", "try")]})
        _, echo, _, ping = tool_messages(result)
        body = payload(echo)
        assert body["error"] == "server_unavailable"
        assert "refusing to start" in body["detail"]  # the server's own stderr
        assert body["tool"] == "echo"
        assert "command not found" in payload(ping)["message"]
        assert result["messages"][-1].content == "both servers are down"
    finally:
        servers.close()


def test_a_server_that_cannot_be_listed_is_left_out(cache_dir: str) -> None:
    broken = python_server("raw_server.py", "--fail-start")
    config = {"mcpServers": {"calc": CALC, "broken": broken}}
    servers = McpServers(config, cache_dir=cache_dir)
    try:
        assert [s.name for s in servers.scopes] == ["calc"]
        assert "refusing to start" in servers.unavailable["broken"]
    finally:
        servers.close()
    cached_only = McpServers(
        {"mcpServers": {"new": python_server("fastmcp_server.py", "--x")}},
        cache_dir=cache_dir,
        discover="cache",
    )
    assert cached_only.scopes == [] and "no cached tool list" in cached_only.unavailable["new"]


def test_list_changed_invalidates_the_cache_and_relists(calc: McpServers) -> None:
    tools = {t.name: t for t in calc.tools}
    server = calc.config.servers["calc"]
    assert calc.cache.path(server).exists()
    assert tools["enable_history"].invoke({}) == "history enabled"
    # the change event (subscriptions/listen on 2026-07-28) travels beside the result
    assert wait_for(lambda: not calc.cache.path(server).exists())
    assert tools["add"].invoke({"a": 1, "b": 2}) == "3"  # re-listed before this call
    cached = calc.cache.get(server)
    assert cached is not None and "history" in cached.names
    rebuilt = McpServers({"mcpServers": {"calc": CALC}}, cache_dir=str(calc.cache.directory))
    assert "history" in rebuilt.scopes[0].tools  # registered when the agent is next built
    rebuilt.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["http", "sse"])
def http_server(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The FastMCP test server over streamable HTTP, then over SSE, on 127.0.0.1."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS_DIR / "fastmcp_server.py"), f"--{request.param}", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    try:
        if not wait_for(listening, timeout=30):
            pytest.fail(f"the {request.param} test server did not start within 30 s")
        if request.param == "http":
            yield {"url": f"http://127.0.0.1:{port}/mcp"}
        else:
            yield {"url": f"http://127.0.0.1:{port}/sse", "transport": "sse"}
    finally:
        process.terminate()
        process.wait(10)


def test_remote_servers_on_localhost(http_server: dict[str, str], cache_dir: str) -> None:
    before = set(child_pids())
    servers = McpServers({"mcpServers": {"remote": http_server}}, cache_dir=cache_dir)
    try:
        agent, model = agent_for(
            servers,
            [
                calls(tool_call("load_context", {"name": "remote"})),
                calls(tool_call("multiply", {"a": 6, "b": 7})),
                say("42"),
            ],
        )
        result = agent.invoke({"messages": [("user", "6 * 7")]})
        assert tool_messages(result)[-1].content == "42"
        assert "multiply" in model.recorded[1]["tools"]
        assert set(child_pids()) <= before  # a remote server starts no process
    finally:
        servers.close()


def test_the_gate_ranks_across_all_servers_tools(calc: McpServers) -> None:
    from attention_scoping.gating import ToolAttentionMiddleware

    model = ScriptedChatModel(script=[calls(tool_call("multiply", {"a": 6, "b": 7})), say("42")])
    gate = ToolAttentionMiddleware(ranker="bm25", k=2, summary_pool="off")
    agent: Any = create_agent(model, tools=calc.tools, middleware=[gate])
    result = agent.invoke({"messages": [("user", "multiply 6 by 7 exactly")]})
    shown = model.recorded[0]["tools"]
    assert "multiply" in shown and len(shown) < len(calc.tools)
    assert tool_messages(result)[0].content == "42"


def test_the_gateway_searches_describes_and_executes_mcp_tools(calc: McpServers) -> None:
    def ranker(query: str, entries: Any) -> list[tuple[str, float]]:
        words = set(query.lower().split())
        scored = [(e.name, len(words & set(e.description.lower().split()))) for e in entries]
        return sorted(scored, key=lambda p: -p[1])

    with pytest.raises(GatewayConfigError, match="require approval"):
        ToolGateway(calc.tools, ranker=ranker)  # unannotated MCP tools may write
    reads = [t for t in calc.tools if not asks_approval(t)]
    gateway = ToolGateway(reads, ranker=ranker)
    starts = calc.connections["raw"].starts
    found = gateway.search("multiply two integers")
    assert found["candidates"][0]["name"] == "multiply"
    schema = gateway.schema(["echo"])
    assert "text" in json.dumps(schema)
    assert gateway.execute("multiply", {"a": 6, "b": 7})["result"] == 42
    refused = gateway.execute("multiply", {"a": "six"})
    assert refused["error"] == "invalid_arguments"  # checked against the MCP schema, not run
    failed = gateway.execute("fail", {})
    assert failed["error"] == "tool_failed" and "tool_error" in failed["message"]
    assert calc.connections["raw"].starts == starts + 1


def test_close_stops_every_server_and_later_calls_reconnect(calc: McpServers) -> None:
    before = set(child_pids())
    tools = {t.name: t for t in calc.tools}
    assert tools["add"].invoke({"a": 1, "b": 1}) == "2"
    assert tools["echo"].invoke({"text": "x"}).startswith("echo: x")
    assert len(set(child_pids()) - before) == 2
    calc.close()
    assert set(child_pids()) <= before
    assert tools["add"].invoke({"a": 2, "b": 2}) == "4"  # a closed hub reopens on demand
    calc.close()
    assert set(child_pids()) <= before


async def test_aclose_and_async_with_close_the_sessions_from_async_code(calc: McpServers) -> None:
    """`await servers.aclose()` (what `async with` calls) stops every server from async code,
    and a closed hub reopens on demand."""
    before = set(child_pids())
    add = next(t for t in calc.tools if t.name == "add")
    assert await add.ainvoke({"a": 1, "b": 1}) == "2"
    assert calc.connected() == ["calc"]
    await calc.aclose()
    assert calc.connected() == [] and set(child_pids()) <= before
    async with calc as same:
        assert await add.ainvoke({"a": 2, "b": 2}) == "4"  # reopened
        assert same.connected() == ["calc"]
    assert calc.connected() == [] and set(child_pids()) <= before


def test_example_agent_adds_the_mcp_servers_as_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import example_agent

    monkeypatch.setenv("ATTENTION_SCOPING_MCP_CACHE", str(tmp_path / "cache"))
    before = set(child_pids())
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"calc": CALC}}))
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "calc"})),
            calls(tool_call("multiply", {"a": 6, "b": 7})),
            say("42"),
        ]
    )
    made: list[Any] = []

    def recording(config: str, taken: set[str]) -> Any:
        scopes, connect = real_mcp_scopes(config, taken)
        made.append(connect.servers)
        return scopes, connect

    real_mcp_scopes = example_agent.mcp_scopes
    monkeypatch.setattr(example_agent, "mcp_scopes", recording)
    agent, scoping = example_agent.build_agent(model, mcp=str(path))
    assert scoping.catalog.names[-1] == "calc" and "math" in scoping.catalog.names
    result = agent.invoke(
        {"messages": [("user", "6 * 7 with calc")]}, {"configurable": {"thread_id": "t"}}
    )
    assert tool_messages(result)[-1].content == "42"
    assert len(set(child_pids()) - before) == 1
    made[0].close()
    assert set(child_pids()) <= before
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {"comand": "typo"}}}')
    assert example_agent.main(["--demo", "--mcp", str(bad)]) == 2
    assert "unknown field(s) comand" in capsys.readouterr().out


def test_a_servers_stderr_is_drained_and_only_its_tail_kept() -> None:
    from attention_scoping.mcp.connection import StderrTail

    tail = StderrTail("chatty", lines=3)
    for n in range(1000):
        tail.writer.write(f"line {n}\n")
    tail.close(wait=5)
    assert tail.text(last=2) == "line 998 | line 999"


def test_audit_of_a_config_whose_servers_all_fail_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from attention_scoping_lab.cli import main

    path = tmp_path / "mcp.json"
    broken = python_server("raw_server.py", "--fail-start")
    path.write_text(json.dumps({"mcpServers": {"broken": broken}}))
    assert main(["audit", str(path), "--mcp-timeout", "20"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: no server listed any tool")
    assert "refusing to start" in err and len(err.strip().splitlines()) == 1
    assert main(["audit", str(path), "--mcp-timeout", "0"]) == 2
    assert "positive number of seconds" in capsys.readouterr().err


def test_the_connect_middleware_starts_only_a_single_shown_server(calc: McpServers) -> None:
    connect = McpConnectMiddleware(calc)
    calc_tools = calc.tools_of("calc")
    assert connect.servers_to_start(calc_tools) == ["calc"]
    assert connect.servers_to_start(calc.tools) == []  # two servers shown: an eager agent
    assert McpConnectMiddleware(calc, max_servers=2).servers_to_start(calc.tools) == [
        "calc",
        "raw",
    ]
    calc.connect("calc")
    assert connect.servers_to_start(calc.tools) == ["raw"]
    with pytest.raises(ValueError, match="max_servers"):
        McpConnectMiddleware(calc, max_servers=0)


def test_servers_shown_without_load_context_start_before_the_first_call(
    calc: McpServers,
) -> None:
    seen: list[list[str]] = []

    def shown(messages: list[BaseMessage], tools: list[str]) -> Any:
        wait_for(lambda: sorted(calc.connected()) == ["calc", "raw"])
        seen.append(sorted(calc.connected()))
        return calls(tool_call("add", {"a": 1, "b": 2}))

    model = ScriptedChatModel(script=[shown, say("3")])
    middleware: list[Any] = [
        AttentionScopingMiddleware(calc.scopes, selector=None, always_on=calc.tools),
        McpConnectMiddleware(calc, max_servers=2),
    ]
    agent: Any = create_agent(model, tools=calc.tools, middleware=middleware)
    result = agent.invoke({"messages": [("user", "1 + 2")]})
    assert seen == [["calc", "raw"]]  # always-on: both shown, neither loaded
    assert tool_messages(result)[-1].content == "3"


def test_server_text_comes_once_per_load_and_can_be_dropped(calc: McpServers) -> None:
    script = [
        calls(tool_call("load_context", {"name": "raw"})),
        calls(tool_call("load_context", {"name": "raw"})),  # already active: no second copy
        calls(tool_call("load_context", {"name": "calc"})),
        say("ok"),
    ]
    agent, model = agent_for(calc, script)
    result = agent.invoke({"messages": [("user", "look around")]})
    bodies = [json.loads(m.text) for m in tool_messages(result)]
    assert ["server_text" in b for b in bodies] == [True, False, True]
    assert "It echoes text." in bodies[0]["server_text"]["text"]
    assert not any("echoes text" in (r["system"] or "") for r in model.recorded)
    dropped = McpServers(
        calc.config, cache_dir=str(calc.cache.directory), discover="cache", server_text="drop"
    )
    try:
        agent, model = agent_for(
            dropped, [calls(tool_call("load_context", {"name": "raw"})), say("ok")]
        )
        result = agent.invoke({"messages": [("user", "look around")]})
        assert "server_text" not in json.loads(tool_messages(result)[0].text)
        schemas = {s["function"]["name"]: s["function"] for s in model.recorded[1]["schemas"]}
        assert schemas["echo"]["description"] == "Tool echo of MCP server raw."
    finally:
        dropped.close()
