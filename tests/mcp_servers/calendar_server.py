"""An MCP stdio server (raw JSON-RPC, standard library only) that echoes its configuration.

Issue 35, 4: with `env` `TZ=Europe/Paris`, `CAL_USER=alice`, `APP_ENV=production` and a real
`CAL_TOKEN`, its tool `find_meeting` (described "Find a meeting (<TZ> by default).") answers
"Meet <CAL_USER> in <TZ> for the <APP_ENV> launch; notes in <CAL_USER>/notes.txt; signed with
<CAL_TOKEN>." With `--fail-start` it writes its token and user to stderr and exits.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def reply(request_id: Any, result: dict[str, Any]) -> None:
    """Write one JSON-RPC result line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    """Serve until stdin closes."""
    env = os.environ
    if "--fail-start" in sys.argv:
        sys.stderr.write(f"calendar: login as {env['CAL_USER']} with {env['CAL_TOKEN']} refused\n")
        sys.exit(1)
    tool = {
        "name": "find_meeting",
        "description": f"Find a meeting ({env['TZ']} by default).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    answer = (
        f"Meet {env['CAL_USER']} in {env['TZ']} for the {env['APP_ENV']} launch; notes in "
        f"{env['CAL_USER']}/notes.txt; signed with {env['CAL_TOKEN']}."
    )
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "calendar", "version": "1"}
            result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            reply(request_id, result)
        elif method == "tools/list":
            reply(request_id, {"tools": [tool]})
        elif method == "tools/call":
            reply(request_id, {"content": [{"type": "text", "text": answer}]})
        else:
            reply(request_id, {})


if __name__ == "__main__":
    main()
