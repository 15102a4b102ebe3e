"""Real MCP servers from PyPI (time, git, sqlite) as scopes, and the audit of a real set-up.

`mcp-server-time` and `mcp-server-git` run from the package's own environment (protocol
2026-07-28); `mcp-server-sqlite` from a venv of its own with `mcp<2` (the 2025 handshake),
made on first use by `tests/mcp_support.py`. Without them the tests are skipped with the reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from packaging.requirements import Requirement

from attention_scoping.approval.middleware import asks_approval
from attention_scoping.mcp import McpConnectMiddleware, McpServers
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.observe.tax import get_counter
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from attention_scoping_lab.audit import audit, load_target
from attention_scoping_lab.cli import main
from tests.mcp_support import (
    ROOT,
    beside_commands,
    child_pids,
    python_server,
    server_commands,
    wait_for,
)


@pytest.fixture(scope="module")
def commands() -> dict[str, str]:
    found = server_commands()
    if isinstance(found, str):
        pytest.skip(f"real MCP servers unavailable: {found}")
    return found


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway git repository (one commit, one untracked file) and a path for a database."""
    root = tmp_path_factory.mktemp("mcp-real")
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README.md").write_text("hello\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (repo / "untracked_note.txt").write_text("new\n")
    return root


def real_servers(commands: dict[str, str], workspace: Path) -> dict[str, Any]:
    return {
        "time": {"command": commands["mcp-server-time"], "args": ["--local-timezone", "UTC"]},
        "git": {
            "command": commands["mcp-server-git"],
            "args": ["--repository", str(workspace / "repo")],
        },
        "sqlite": {
            "command": commands["mcp-server-sqlite"],
            "args": ["--db-path", str(workspace / "test.db")],
        },
    }


@pytest.fixture(scope="module")
def five(commands: dict[str, str], workspace: Path) -> dict[str, Any]:
    """Five servers: three from PyPI, the FastMCP test server and the raw test server."""
    servers = real_servers(commands, workspace)
    servers["calc"] = python_server("fastmcp_server.py")
    servers["raw"] = python_server("raw_server.py")
    return {"mcpServers": servers}


@pytest.fixture(scope="module")
def warm_cache(five: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tool lists an earlier run left: every server started once, listed, stopped."""
    directory = tmp_path_factory.mktemp("mcp-real-cache")
    servers = McpServers(five, cache_dir=str(directory))
    servers.close()
    assert servers.unavailable == {}
    return directory


@pytest.fixture
def hub(five: dict[str, Any], warm_cache: Path, tmp_path: Path) -> Iterator[McpServers]:
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    servers = McpServers(five, cache_dir=str(cache), discover="cache")
    yield servers
    servers.close()


def agent_over(hub: McpServers, model: ScriptedChatModel) -> Any:
    """An agent over the hub's scopes that navigates with `load_context` only."""
    middleware: list[Any] = [
        AttentionScopingMiddleware(hub.scopes, selector=None),
        McpConnectMiddleware(hub),
    ]
    return create_agent(model, tools=hub.tools, middleware=middleware)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_five_servers_start_no_process_until_a_scope_is_loaded(hub: McpServers) -> None:
    before = set(child_pids())
    seen: list[int] = []

    def first(messages: list[BaseMessage], tools: list[str]) -> Any:
        seen.append(len(set(child_pids()) - before))
        return calls(tool_call("load_context", {"name": "time"}))

    model = ScriptedChatModel(
        script=[first, calls(tool_call("get_current_time", {"timezone": "UTC"})), say("noon")]
    )
    agent = agent_over(hub, model)
    assert [s.name for s in hub.scopes] == ["time", "git", "sqlite", "calc", "raw"]
    assert len(hub.tools) == 2 + 12 + 6 + 4 + 5
    result = agent.invoke({"messages": [("user", "What time is it in UTC?")]})
    assert seen == [0]  # five servers configured, none started before the scope was loaded
    assert json.loads(str(tool_messages(result)[-1].content))["timezone"] == "UTC"
    assert len(set(child_pids()) - before) == 1 and hub.connected() == ["time"]
    hub.close()
    assert wait_for(lambda: set(child_pids()) <= before)


def test_git_and_sqlite_servers_through_the_agent(hub: McpServers, workspace: Path) -> None:
    repo = str(workspace / "repo")
    script = [
        calls(tool_call("load_context", {"name": "git"})),
        calls(tool_call("git_status", {"repo_path": repo})),
        calls(tool_call("load_context", {"name": "sqlite"})),
        calls(tool_call("create_table", {"query": "CREATE TABLE t (n INTEGER)"})),
        calls(tool_call("write_query", {"query": "INSERT INTO t (n) VALUES (42)"})),
        calls(tool_call("read_query", {"query": "SELECT n FROM t"})),
        say("done"),
    ]
    model = ScriptedChatModel(script=script)
    agent = agent_over(hub, model)
    result = agent.invoke({"messages": [("user", "status, then a table")]})
    _, status, _, created, written, read = tool_messages(result)
    assert "untracked_note.txt" in str(status.content)
    assert all(m.status != "error" for m in (created, written, read)), [
        m.content for m in (created, written, read)
    ]
    assert "42" in str(read.content)
    assert sorted(hub.connected()) == ["git", "sqlite"]


async def _independent_tools(server: dict[str, Any]) -> list[dict[str, Any]]:
    """`tools/list` straight from the MCP SDK, as an OpenAI tools array (not our code path)."""
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description or "",
                "parameters": t.input_schema,
            },
        }
        for t in sorted(listed.tools, key=lambda t: t.name)
    ]


def test_audit_of_three_real_servers_matches_an_independent_count(
    commands: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    import bpe_openai

    servers = real_servers(commands, workspace)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    arrays = [asyncio.run(_independent_tools(s)) for s in servers.values()]
    independent = len(
        bpe_openai.get_encoding("o200k_base").encode(
            json.dumps([t for a in arrays for t in a], ensure_ascii=False)
        )
    )
    target = load_target(str(path), mcp_timeout=60)
    assert target.scopes is not None and sorted(target.scopes) == ["git", "sqlite", "time"]
    figures = audit(target, counter=get_counter("o200k_base"), suggest=0)
    assert abs(figures.eager_tokens_per_call - independent) <= 0.01 * independent
    assert figures.n_tools == sum(len(a) for a in arrays)

    out = tmp_path / "figures.json"
    assert main(["audit", str(path), "--json", str(out), "--suggest", "0"]) == 0
    assert json.loads(out.read_text())["eager_tokens_per_call"] == figures.eager_tokens_per_call


def test_audit_names_a_server_that_does_not_start(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    config = {
        "mcpServers": {
            "calc": python_server("fastmcp_server.py"),
            "broken": python_server("raw_server.py", "--fail-start"),
        }
    }
    path.write_text(json.dumps(config))
    target = load_target(str(path))
    assert [s.server for s in target.specs] == ["calc"] * 4
    assert any("'broken' left out" in note and "refusing to start" in note for note in target.notes)


def test_current_servers_speak_2026_07_28_and_sqlite_the_2025_handshake(hub: McpServers) -> None:
    for server in ("time", "git", "sqlite"):
        hub.connect(server)
    assert hub.connections["time"].protocol_version == "2026-07-28"
    assert hub.connections["git"].protocol_version == "2026-07-28"
    # mcp-server-sqlite runs on mcp<2: it does not know server/discover, the handshake follows
    assert hub.connections["sqlite"].protocol_version in ("2025-06-18", "2025-11-25")


def test_a_real_server_offering_discover_is_indexed_without_a_session(
    commands: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """mcp-server-time offers `server/discover`: its scope is built from it and the stateless
    `tools/list`, no session; mcp-server-sqlite (mcp<2) does not: listed through its
    `initialize` handshake, as before. No session stays open and no process runs after."""
    servers = real_servers(commands, workspace)
    config = {"mcpServers": {k: servers[k] for k in ("time", "sqlite")}}
    before = set(child_pids())
    with McpServers(config, cache_dir=str(tmp_path)) as built:
        assert set(built.descriptions) == {"time"} and built.descriptions["time"].tools
        assert built.listings["time"].protocol == "2026-07-28"
        assert built.listings["sqlite"].protocol in ("2025-06-18", "2025-11-25")
        assert "read_query" in built.listings["sqlite"].names
        lines = {s.name: s.description for s in built.scopes}
        assert lines["time"] == "MCP server time; tools: convert_time, get_current_time"
        assert built.connected() == [] and [c.starts for c in built.connections.values()] == [0, 0]
        assert wait_for(lambda: set(child_pids()) <= before)


def test_the_real_servers_annotations_decide_reads_and_approvals(hub: McpServers) -> None:
    risk = {t.name: t.metadata["risk"] for t in hub.tools if t.metadata}
    approval = {t.name for t in hub.tools if asks_approval(t)}
    assert risk["get_current_time"] == risk["git_status"] == risk["git_log"] == "read"
    assert "git_reset" in approval and "git_commit" in approval  # readOnlyHint: false
    assert not {"get_current_time", "convert_time", "git_status", "git_diff"} & approval
    # mcp-server-sqlite declares no annotations: every tool may write, so asks for approval
    assert {"read_query", "write_query", "create_table"} <= approval
    reset = next(t for t in hub.tools if t.name == "git_reset")
    assert reset.metadata is not None and reset.metadata["annotations"]["destructiveHint"] is True


def documented_install() -> list[str]:
    """The arguments of docs/mcp.md's one-environment install line (after `pip install`)."""
    doc = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    line = next(
        text
        for text in doc.splitlines()
        if text.startswith('pip install -e ".[mcp]"') and "mcp-server-time" in text
    )
    return shlex.split(line)[2:]


def unmet(requirements: list[str]) -> list[str]:
    """The requirements (PEP 508 strings, markers for the `mcp` extra) this venv does not meet."""
    out: list[str] = []
    for text in requirements:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": "mcp"}):
            continue
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            out.append(f"{text} (not installed)")
            continue
        if not req.specifier.contains(installed, prereleases=True):
            out.append(f"{text} (installed {installed})")
    return out


@pytest.fixture(scope="module")
def beside() -> dict[str, str]:
    found = beside_commands()
    if isinstance(found, str):
        pytest.skip(found)
    return found


def test_the_documented_install_runs_the_audit_and_the_example_agent(
    beside: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """The goal of issue 28: docs/mcp.md's one line (`pip install -e ".[mcp]" -e ./lab` and
    today's servers) describes this environment, and in it the `attention-scoping audit
    mcp.json` command and `example_agent.py --mcp mcp.json` work. No venv is made: the test
    venv was installed with the `dev` extra (the servers) and the lab."""
    args = documented_install()
    editable = [args[i + 1] for i, a in enumerate(args) if a == "-e"]
    assert editable == [".[mcp]", "./lab"], args  # the command comes with the lab
    pins = [a for a in args if a != "-e" and a not in editable]
    assert [Requirement(p).name for p in pins] == ["mcp-server-time", "mcp-server-git"]
    own = [r for r in metadata.requires("attention-scoping") or [] if "extra ==" in r]
    assert unmet([*pins, *own]) == []  # the servers and the mcp extra's pins hold together
    metadata.version("attention-scoping-lab")  # ./lab is installed
    command = Path(sys.executable).parent / "attention-scoping"
    assert command.exists(), f"{command}: the lab's console script"
    repo = workspace / "repo"
    servers = {
        "time": {"command": beside["mcp-server-time"], "args": ["--local-timezone", "UTC"]},
        "git": {"command": beside["mcp-server-git"], "args": ["--repository", str(repo)]},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "ATTENTION_SCOPING_MCP_CACHE": str(tmp_path / "cache")}
    audited = subprocess.run(
        [str(command), "audit", str(path), "--suggest", "0"],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )  # fmt: skip
    assert audited.returncode == 0, audited.stderr[-2000:]
    assert "tools listed live from 2 MCP server(s): time 2, git 12" in audited.stdout
    agent = [sys.executable, "example_agent.py", "--demo", "--mcp", str(path)]
    ran = subprocess.run(agent, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-2000:])
