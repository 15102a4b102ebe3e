"""Write an `mcp.json` for three real PyPI servers (time, git, sqlite), made in their own venvs.

    python benchmarks/mcp_real_config.py mcp-real.json
    attention-scoping audit mcp-real.json

The servers are installed by `tests/mcp_support.py` (once; about a minute from PyPI). The git
server is pointed at this repository, the sqlite server at a database in the temp directory.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mcp_support import server_commands  # noqa: E402


def main() -> int:
    """Write the configuration named on the command line."""
    if len(sys.argv) != 2:
        print("usage: python benchmarks/mcp_real_config.py OUT.json", file=sys.stderr)
        return 2
    found = server_commands()
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 2
    database = Path(tempfile.gettempdir()) / "attention-scoping-mcp-demo.db"
    config = {
        "mcpServers": {
            "time": {"command": found["mcp-server-time"], "args": ["--local-timezone", "UTC"]},
            "git": {"command": found["mcp-server-git"], "args": ["--repository", str(ROOT)]},
            "sqlite": {"command": found["mcp-server-sqlite"], "args": ["--db-path", str(database)]},
        }
    }
    Path(sys.argv[1]).write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote {sys.argv[1]}: {', '.join(config['mcpServers'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
