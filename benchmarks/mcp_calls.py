"""What an MCP tool call costs through `attention_scoping.mcp`: the first call on a newly loaded
stdio server (start + handshake + listing + call), and the overhead of later calls over a bare
MCP SDK session to the same kind of server.

    python benchmarks/mcp_calls.py                 # mcp-server-time (made in its venv) + FastMCP
    python benchmarks/mcp_calls.py --calls 500 --cold 10

Prints figures; asserts nothing. Needs the `mcp` extra; the PyPI server is installed by
`tests/mcp_support.py` on first use (skipped with a message when PyPI cannot be reached).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from attention_scoping.mcp import McpServers
from tests.mcp_support import python_server, server_commands


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def servers_under_test() -> dict[str, dict[str, Any]]:
    """The stdio servers to time: the raw JSON-RPC test server (answers in microseconds, so the
    overhead is not lost in the server's own time), the FastMCP test server, and mcp-server-time
    when it can be installed."""
    out: dict[str, dict[str, Any]] = {
        "raw (tests)": python_server("raw_server.py"),
        "fastmcp (tests)": python_server("fastmcp_server.py"),
    }
    found = server_commands()
    if isinstance(found, str):
        print(f"mcp-server-time skipped: {found}")
    else:
        out["mcp-server-time"] = {
            "command": found["mcp-server-time"],
            "args": ["--local-timezone", "UTC"],
        }
    return out


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "raw (tests)": ("echo", {"text": "x"}),
    "fastmcp (tests)": ("add", {"a": 2, "b": 3}),
    "mcp-server-time": ("get_current_time", {"timezone": "UTC"}),
}


def cold_first_call(name: str, server: dict[str, Any], cache: str, rounds: int) -> list[float]:
    """Seconds from the first tool call on an unconnected server to its result."""
    config = {"mcpServers": {"s": server}}
    McpServers(config, cache_dir=cache).close()  # the listing an earlier run would have cached
    tool_name, args = CALLS[name]
    out = []
    for _ in range(rounds):
        hub = McpServers(config, cache_dir=cache, discover="cache")
        tool = next(t for t in hub.tools if t.name == tool_name)
        started = time.perf_counter()
        tool.invoke(args)
        out.append(time.perf_counter() - started)
        hub.close()
    return out


def prefetch_then_call(name: str, server: dict[str, Any], cache: str) -> tuple[float, float]:
    """(seconds from load to an open session, seconds of the first call after it)."""
    hub = McpServers({"mcpServers": {"s": server}}, cache_dir=cache, discover="cache")
    tool_name, args = CALLS[name]
    tool = next(t for t in hub.tools if t.name == tool_name)
    started = time.perf_counter()
    hub.prefetch("s")
    while not hub.connected():
        time.sleep(0.001)
    opened = time.perf_counter() - started
    started = time.perf_counter()
    tool.invoke(args)
    first = time.perf_counter() - started
    hub.close()
    return opened, first


def warm_interleaved(
    name: str, server: dict[str, Any], cache: str, n: int
) -> dict[str, list[float]]:
    """Per-call seconds on open sessions, interleaved call by call so machine load hits all
    three alike: a bare `ClientSession.call_tool` (the MCP SDK alone, its own server process),
    `McpTool.invoke` (sync, as ToolNode runs it) and `McpTool.ainvoke` (async)."""
    tool_name, args = CALLS[name]
    call = {"type": "tool_call", "name": tool_name, "args": args, "id": "bench"}
    hub = McpServers({"mcpServers": {"s": server}}, cache_dir=cache, discover="cache")
    tool = next(t for t in hub.tools if t.name == tool_name)
    times: dict[str, list[float]] = {
        "bare MCP SDK": [],
        "McpTool.invoke": [],
        "McpTool.ainvoke": [],
    }

    async def run() -> None:
        params = StdioServerParameters(command=server["command"], args=server.get("args", []))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool(tool_name, args)
            tool.invoke(call)
            for _ in range(n):
                started = time.perf_counter()
                await session.call_tool(tool_name, args)
                times["bare MCP SDK"].append(time.perf_counter() - started)
                started = time.perf_counter()
                tool.invoke(call)  # blocks this loop; the hub's own loop thread does the work
                times["McpTool.invoke"].append(time.perf_counter() - started)
                started = time.perf_counter()
                await tool.ainvoke(call)
                times["McpTool.ainvoke"].append(time.perf_counter() - started)

    try:
        asyncio.run(run())
    finally:
        hub.close()
    return times


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="warm calls per measurement")
    parser.add_argument("--cold", type=int, default=5, help="cold first calls per server")
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (1 min)")
    for name, server in servers_under_test().items():
        with tempfile.TemporaryDirectory() as cache:
            cold = cold_first_call(name, server, cache, args.cold)
            opened, first = prefetch_then_call(name, server, cache)
            warm = warm_interleaved(name, server, cache, args.calls)
        print(f"\n{name}")
        print(
            f"  first call, server not started   median {ms(statistics.median(cold))}  "
            f"max {ms(max(cold))}  ({len(cold)} runs)"
        )
        print(f"  load_context prefetch -> session  {ms(opened)}; first call after it {ms(first)}")
        bare = statistics.median(warm["bare MCP SDK"])
        for label, values in warm.items():
            median = statistics.median(values)
            extra = "" if label == "bare MCP SDK" else f"  overhead {ms(median - bare)}"
            print(f"  later calls, {label:<20} median {ms(median)}{extra}  ({len(values)} calls)")


if __name__ == "__main__":
    main()
