"""An MCPServer (mcp 2.x, formerly FastMCP) server for the tests: arithmetic and notes, over
stdio or streamable HTTP.

    python fastmcp_server.py                 # stdio
    python fastmcp_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp
    python fastmcp_server.py --sse PORT      # SSE on 127.0.0.1:PORT/sse

`enable_history` adds a tool at run time and announces the change: to `subscriptions/listen`
subscribers (protocol 2026-07-28) and as `notifications/tools/list_changed` (2025 sessions);
with `--quiet` it announces nothing. With `--ttl MS` its tool listings carry `ttlMs`.
"""

from __future__ import annotations

import contextlib
import sys

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

TTL = int(sys.argv[sys.argv.index("--ttl") + 1]) if "--ttl" in sys.argv else 0
server = MCPServer(
    "calc",
    instructions="Exact integer arithmetic and a small notebook. Use it for sums and products.",
    cache_hints={"tools/list": CacheHint(ttl_ms=TTL)},
)
_NOTES: list[str] = []
READS = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
"""Arithmetic reads; `take_note` and `enable_history` carry no annotations (so: may write)."""


@server.tool(annotations=READS)
def add(a: int, b: int) -> int:
    """Add two integers exactly."""
    return a + b


@server.tool(annotations=READS)
def multiply(a: int, b: int) -> int:
    """Multiply two integers exactly."""
    return a * b


@server.tool()
def take_note(text: str) -> str:
    """Keep a short note for later in this session."""
    _NOTES.append(text)
    return f"{len(_NOTES)} note(s) kept"


@server.tool()
async def enable_history(ctx: Context) -> str:
    """Add the `history` tool and tell the client that the tool list changed."""

    def history() -> str:
        """Every note kept so far, one per line."""
        return "\n".join(_NOTES)

    server.add_tool(history, name="history")
    if "--quiet" in sys.argv:
        return "history enabled"
    await ctx.notify_tools_changed()
    with contextlib.suppress(Exception):  # a 2025 session: the spontaneous notification
        await ctx.request_context.session.send_tool_list_changed()
    return "history enabled"


if __name__ == "__main__":
    if "--http" in sys.argv or "--sse" in sys.argv:
        flag = "--http" if "--http" in sys.argv else "--sse"
        port = int(sys.argv[sys.argv.index(flag) + 1])
        transport = "streamable-http" if flag == "--http" else "sse"
        server.run(transport, host="127.0.0.1", port=port)  # type: ignore[call-overload]
    else:
        server.run()
