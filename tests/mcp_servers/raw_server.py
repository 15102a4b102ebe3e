"""A minimal MCP stdio server speaking raw JSON-RPC, to script faults a real SDK would not make.

Tools: `echo` (answers; annotated read-only), `crash` (the process exits mid-call), `hang`
(never answers), `malformed` (a result that breaks the MCP schema), `fail` (an `isError`
result; read-only). With `--fail-start` the process exits before the handshake. Uses only
the standard library.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to echo."}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {"name": "malformed", "description": "Answer garbage.", "inputSchema": {"type": "object"}},
    {
        "name": "fail",
        "description": "Report a tool error.",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    },
]


def reply(request_id: Any, result: dict[str, Any]) -> None:
    """Write one JSON-RPC result line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def call(request_id: Any, params: dict[str, Any]) -> None:
    """Answer a tools/call according to the tool's fault."""
    name = params.get("name")
    if name == "crash":
        os._exit(3)
    if name == "hang":
        time.sleep(3600)
    if name == "malformed":
        reply(request_id, {"content": "not a list of content blocks"})
        return
    if name == "fail":
        reply(request_id, {"content": [{"type": "text", "text": "no such row"}], "isError": True})
        return
    text = (params.get("arguments") or {}).get("text", "")
    reply(request_id, {"content": [{"type": "text", "text": f"echo: {text} (pid {os.getpid()})"}]})


def main() -> None:
    """Serve until stdin closes."""
    if "--fail-start" in sys.argv:
        sys.stderr.write("raw_server: refusing to start (--fail-start)\n")
        sys.exit(1)
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            reply(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "raw", "version": "1"},
                    "instructions": "A scripted server for fault tests. It echoes text.",
                },
            )
        elif method == "tools/list":
            reply(request_id, {"tools": TOOLS})
        elif method == "tools/call":
            call(request_id, message.get("params") or {})
        else:
            reply(request_id, {})


if __name__ == "__main__":
    main()
