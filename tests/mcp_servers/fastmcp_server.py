"""A FastMCP server written for the tests: arithmetic and notes, over stdio or streamable HTTP.

    python fastmcp_server.py                 # stdio
    python fastmcp_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp
    python fastmcp_server.py --sse PORT      # SSE on 127.0.0.1:PORT/sse

`enable_history` adds a tool at run time and announces `notifications/tools/list_changed`.
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP(
    "calc",
    instructions="Exact integer arithmetic and a small notebook. Use it for sums and products.",
    host="127.0.0.1",
)
_NOTES: list[str] = []


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers exactly."""
    return a + b


@server.tool()
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
    await ctx.session.send_tool_list_changed()
    return "history enabled"


if __name__ == "__main__":
    if "--http" in sys.argv or "--sse" in sys.argv:
        flag = "--http" if "--http" in sys.argv else "--sse"
        server.settings.port = int(sys.argv[sys.argv.index(flag) + 1])
        server.settings.log_level = "WARNING"
        server.run(transport="streamable-http" if flag == "--http" else "sse")
    else:
        server.run()
