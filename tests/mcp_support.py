"""Real MCP servers for the tests and benchmarks: a virtual environment of PyPI servers, made once.

The servers (`mcp-server-time`, `mcp-server-git`, `mcp-server-sqlite`) require `mcp>=2.3`, which
the client side (`mcp<2`, for langchain-mcp-adapters) cannot share an environment with, so they
get their own venv, as `uvx`/`pipx` would give them. It is created on first use under
`.attention_scoping_cache/mcp-servers/` in the repository (ignored by git), or where
`$ATTENTION_SCOPING_MCP_SERVERS` points, and reused while its marker names the same pins.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVERS_DIR = Path(__file__).resolve().parent / "mcp_servers"
SERVER_PACKAGES = (
    "mcp-server-time==2026.10.19",
    "mcp-server-git==2026.10.19",
    "mcp-server-sqlite==2025.4.25",
)
"""Pinned so the tool lists (and so the token counts) do not move under the tests."""
COMMANDS = ("mcp-server-time", "mcp-server-git", "mcp-server-sqlite")
INSTALL_TIMEOUT = 900


def venv_dir() -> Path:
    """Where the server venv lives."""
    env = os.environ.get("ATTENTION_SCOPING_MCP_SERVERS")
    return Path(env) if env else ROOT / ".attention_scoping_cache" / "mcp-servers"


def _bin(directory: Path) -> Path:
    return directory / ("Scripts" if os.name == "nt" else "bin")


def server_commands() -> dict[str, str] | str:
    """`{command name: absolute path}` of the installed servers, or the reason they are not.

    Creates the venv and installs the pinned servers when missing (about 15 s from PyPI).
    """
    directory = venv_dir()
    marker = directory / "installed.txt"
    wanted = "\n".join(SERVER_PACKAGES)
    bindir = _bin(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.parent / "mcp-servers.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (marker.is_file() and marker.read_text() == wanted):
            started = time.perf_counter()
            try:
                venv.EnvBuilder(clear=True, with_pip=True).create(directory)
                subprocess.run(
                    [str(bindir / "python"), "-m", "pip", "install", "-q", *SERVER_PACKAGES],
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=INSTALL_TIMEOUT,
                )
            except subprocess.CalledProcessError as exc:
                tail = " ".join((exc.stderr or "").split())[-300:]
                return f"pip could not install the MCP servers into {directory}: {tail}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"could not create the MCP server venv in {directory}: {exc}"
            marker.write_text(wanted)
            print(
                f"\n[mcp_support] server venv created in {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
    found = {name: str(bindir / name) for name in COMMANDS}
    missing = [n for n, p in found.items() if not Path(p).exists()]
    if missing:
        return f"servers missing from {directory}: {', '.join(missing)}"
    return found


def python_server(script: str, *args: str) -> dict[str, object]:
    """An `mcpServers` entry running one of the test servers with this interpreter."""
    return {"command": sys.executable, "args": [str(SERVERS_DIR / script), *args]}


def child_pids(pid: int | None = None) -> list[int]:
    """Live (non-zombie) child processes of `pid` (default: this process), from /proc."""
    parent = os.getpid() if pid is None else pid
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def wait_for(predicate: object, timeout: float = 15.0) -> bool:
    """Poll `predicate()` until true or `timeout` seconds pass; whether it became true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return bool(predicate())  # type: ignore[operator]
