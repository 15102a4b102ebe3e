"""Real MCP servers for the tests and benchmarks: PyPI servers beside the package, and one venv.

`mcp-server-time` and `mcp-server-git` (protocol 2026-07-28, `mcp>=2.3`) run from the package's
own environment: the `dev` extra installs them beside `attention-scoping[mcp]`, as a user would.
`mcp-server-sqlite` 2025.4.25 does not start with `mcp` 2.x (it uses the removed low-level
`Server.list_resources`), so it runs from a venv of its own with `mcp<2`: the server on an older
protocol revision (the `initialize` handshake). That venv is created on first use under
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
SERVER_VENVS: dict[str, tuple[str, ...]] = {
    "sqlite": ("mcp-server-sqlite==2025.4.25", "mcp<2"),
}
"""Venv name -> pinned requirements (pins keep the tool lists, so the token counts, still)."""
COMMANDS = {"mcp-server-sqlite": "sqlite"}
"""Servers run from a venv of their own."""
BESIDE = ("mcp-server-time", "mcp-server-git")
"""Servers installed in the package's own environment (the `dev` extra)."""
INSTALL_TIMEOUT = 900


def venv_root() -> Path:
    """Where the server venvs live."""
    env = os.environ.get("ATTENTION_SCOPING_MCP_SERVERS")
    return Path(env) if env else ROOT / ".attention_scoping_cache" / "mcp-servers"


def _bin(directory: Path) -> Path:
    return directory / ("Scripts" if os.name == "nt" else "bin")


def _install(directory: Path, requirements: tuple[str, ...]) -> str | None:
    """Create `directory` as a venv with `requirements`; None, or why it failed."""
    marker = directory / "installed.txt"
    wanted = "\n".join(requirements)
    if marker.is_file() and marker.read_text() == wanted:
        return None
    started = time.perf_counter()
    try:
        venv.EnvBuilder(clear=True, with_pip=True).create(directory)
        subprocess.run(
            [str(_bin(directory) / "python"), "-m", "pip", "install", "-q", *requirements],
            check=True,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.CalledProcessError as exc:
        tail = " ".join((exc.stderr or "").split())[-300:]
        return f"pip could not install {' '.join(requirements)} into {directory}: {tail}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not create the MCP server venv {directory}: {exc}"
    marker.write_text(wanted)
    elapsed = time.perf_counter() - started
    print(f"\n[mcp_support] {directory.name} server venv made in {elapsed:.1f} s", file=sys.stderr)
    return None


def server_commands() -> dict[str, str] | str:
    """`{command name: absolute path}` of the installed servers, or the reason they are not.

    Creates the venvs and installs the pinned servers when missing (about a minute from PyPI).
    """
    root = venv_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, requirements in SERVER_VENVS.items():
            problem = _install(root / name, requirements)
            if problem is not None:
                return problem
    found = {cmd: str(_bin(root / env) / cmd) for cmd, env in COMMANDS.items()}
    missing = [n for n, p in found.items() if not Path(p).exists()]
    if missing:
        return f"servers missing from {root}: {', '.join(missing)}"
    beside = beside_commands()
    return beside if isinstance(beside, str) else {**beside, **found}


def beside_commands() -> dict[str, str] | str:
    """`{command name: absolute path}` of the servers installed beside the package (the `dev`
    extra), or why they are not; nothing is installed."""
    beside = {cmd: str(Path(sys.executable).parent / cmd) for cmd in BESIDE}
    absent = [n for n, p in beside.items() if not Path(p).exists()]
    if absent:
        return f"{', '.join(absent)} not installed beside the package (the 'dev' extra)"
    return beside


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
