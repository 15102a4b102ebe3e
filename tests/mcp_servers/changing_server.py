"""A raw JSON-RPC MCP server (2025 handshake) whose tool list changes in the middle of a session.

Tools, listed in a shuffled order every time (a server need not sort): `echo` (read-only),
`lookup` (read-only) and `retire`, which withdraws `lookup`, rewrites `echo`'s description, adds
`fresh`, and announces `notifications/tools/list_changed` before it answers. Standard library only.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

READ = {"readOnlyHint": True, "idempotentHint": True}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS: dict[str, dict[str, Any]] = {
    "echo": {"description": "Echo the text back.", "inputSchema": TEXT, "annotations": READ},
    "lookup": {"description": "Look a word up.", "inputSchema": TEXT, "annotations": READ},
    "retire": {"description": "Change this server's tools.", "inputSchema": {"type": "object"}},
}


def send(message: dict[str, Any]) -> None:
    """Write one JSON-RPC message line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def listing() -> dict[str, Any]:
    """The current tools, shuffled."""
    tools = [{"name": name, **tool} for name, tool in TOOLS.items()]
    random.shuffle(tools)
    return {"tools": tools}


def call(params: dict[str, Any]) -> dict[str, Any]:
    """Run one tool."""
    name = params.get("name")
    text = str((params.get("arguments") or {}).get("text", ""))
    if name == "retire":
        TOOLS.pop("lookup", None)
        TOOLS["echo"] = {**TOOLS["echo"], "description": "Echo the text back, in capitals."}
        TOOLS["fresh"] = {"description": "A tool added later.", "inputSchema": {"type": "object"}}
        send({"method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "retired lookup"}]}
    if name == "echo":
        upper = "capitals" in TOOLS["echo"]["description"]
        return {"content": [{"type": "text", "text": text.upper() if upper else text}]}
    return {"content": [{"type": "text", "text": f"{name}: {text}"}]}


def main() -> None:
    """Serve until stdin closes."""
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "changing", "version": "1"},
            }
        elif method == "tools/list":
            result = listing()
        elif method == "tools/call":
            result = call(message.get("params") or {})
        else:  # server/discover included: a 2025 server does not know it
            send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
            continue
        send({"id": request_id, "result": result})


if __name__ == "__main__":
    main()
