"""A raw JSON-RPC MCP server on protocol 2026-07-28 that offers `server/discover` and counts
sessions. Standard library only.

Every request it receives is appended to the `--log PATH` file as `<pid> <method>`, so a test
can tell what was asked of it and by how many processes. A session is what a client holds open:
a `subscriptions/listen` stream (the 2026-07-28 way to hear of list changes) or an `initialize`
handshake (2025); `server/discover` and `tools/list` are stateless requests and open none.

Tools: `repeat` (read-only) and `shout` (read-only). `listChanged` is announced, so a client that
opens a session subscribes.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

VERSION = "2026-07-28"
READ = {"readOnlyHint": True, "idempotentHint": True}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS: list[dict[str, Any]] = [
    {"name": name, "description": text, "inputSchema": TEXT, "annotations": READ}
    for name, text in (("shout", "Say it in capitals."), ("repeat", "Repeat the text back."))
]
CACHE = {"ttlMs": 0, "cacheScope": "public", "resultType": "complete"}
SESSION_METHODS = ("subscriptions/listen", "initialize")
"""The requests that open a session."""


def send(message: dict[str, Any]) -> None:
    """Write one JSON-RPC message line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def log(path: str | None, method: str) -> None:
    """Append `<pid> <method>` to the log file."""
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {method}\n")


def answer(method: str, request_id: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of one request (None: no result now, or an error already sent)."""
    if method == "server/discover":
        return {
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {"listChanged": True}},
            "instructions": "A scripted stateless server. It repeats text.",
            **CACHE,
        }
    if method == "tools/list":
        return {"tools": TOOLS, **CACHE}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        shown = text.upper() if params.get("name") == "shout" else text
        return {"content": [{"type": "text", "text": shown}], "resultType": "complete"}
    if method == "subscriptions/listen":  # acknowledge; the stream stays open
        meta = {"io.modelcontextprotocol/subscriptionId": request_id}
        ack = {"notifications": {"toolsListChanged": True}, "_meta": meta}
        send({"method": "notifications/subscriptions/acknowledged", "params": ack})
        return None
    send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
    return None


def main() -> None:
    """Serve until stdin closes."""
    path = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        log(path, str(method))
        result = answer(str(method), request_id, message.get("params") or {})
        if result is not None:
            send({"id": request_id, "result": result})


if __name__ == "__main__":
    main()
