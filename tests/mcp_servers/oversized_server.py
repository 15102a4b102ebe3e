"""An MCP stdio server (raw JSON-RPC, standard library only) whose listing is far too big.

Tools: `huge_description` (a 2,000,000-character description), `huge_schema` (20,000
arguments, about 2.5 MB of schema), `deep_schema` (an argument nested 60 objects deep: 120 JSON
levels, below the 200 the MCP SDK's parser takes), and `lookup`, an ordinary tool. Every call
answers `ok <tool>`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

DESCRIPTION_CHARS = 2_000_000


def _deep(levels: int) -> dict[str, Any]:
    """An object schema `levels` objects deep (built from the inside out, no recursion)."""
    schema: dict[str, Any] = {"type": "string", "description": "the innermost value"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def tools() -> list[dict[str, Any]]:
    """The listing."""
    many = {
        f"field_{n}": {"type": "string", "description": f"Field number {n} " + "x" * 100}
        for n in range(20_000)
    }
    return [
        {
            "name": "huge_description",
            "description": "Look things up. "
            + "All work and no play. " * (DESCRIPTION_CHARS // 22),
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "What to look up."}},
                "required": ["query"],
            },
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "huge_schema",
            "description": "Store a record with many fields.",
            "inputSchema": {"type": "object", "properties": many, "required": ["field_0"]},
        },
        {
            "name": "deep_schema",
            "description": "Store a nested record.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "tree": _deep(60)},
                "required": ["name"],
            },
        },
        {
            "name": "lookup",
            "description": "Look a word up.",
            "inputSchema": {
                "type": "object",
                "properties": {"word": {"type": "string", "description": "The word."}},
                "required": ["word"],
            },
            "annotations": {"readOnlyHint": True},
        },
    ]


def reply(request_id: Any, result: dict[str, Any]) -> None:
    """Write one JSON-RPC result line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    """Serve until stdin closes."""
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            info = {"name": "oversized", "version": "1"}
            version = message["params"]["protocolVersion"]
            reply(
                request_id,
                {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            )
        elif method == "tools/list":
            reply(request_id, {"tools": tools()})
        elif method == "tools/call":
            name = (message.get("params") or {}).get("name")
            reply(request_id, {"content": [{"type": "text", "text": f"ok {name}"}]})
        else:
            reply(request_id, {})


if __name__ == "__main__":
    main()
