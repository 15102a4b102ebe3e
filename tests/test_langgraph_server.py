"""The LangGraph platform path: `langgraph dev` (the in-memory server) serves the example agent
from langgraph.json, and a thread driven through `langgraph-sdk` keeps `active_context` from run
to run (the server's checkpointer, not the example's own, holds the state)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

pytest.importorskip("langgraph_api", reason='needs langgraph-cli[inmem] (pip install -e ".[dev]")')

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 60.0
KEYS = ("OPENROUTER_API_KEY", "OPENAI_API_KEY")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _langgraph() -> list[str]:
    script = Path(sys.executable).parent / "langgraph"
    found = str(script) if script.exists() else shutil.which("langgraph")
    if found is None:
        pytest.skip("the langgraph command is not installed")
    return [found]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`langgraph dev` on 127.0.0.1 and a free port, run from the repository as a user would
    (graph paths in langgraph.json are relative to it), without file persistence, stopped with
    its process group at the end."""
    port = _free_port()
    scratch = ROOT / ".langgraph_api"  # the server makes it even without file persistence
    made_scratch = not scratch.exists()
    workdir = tmp_path_factory.mktemp("langgraph-dev")
    env = {k: v for k, v in os.environ.items() if k not in KEYS}  # the offline tour's model
    env.update(
        LANGSMITH_TRACING="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_DISABLE_FILE_PERSISTENCE="true",
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
    )
    log = (workdir / "server.log").open("wb")
    command = [
        *_langgraph(),
        "dev",
        "--config",
        str(ROOT / "langgraph.json"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
    ]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited: {(workdir / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                tail = (workdir / "server.log").read_text()[-2000:]
                pytest.fail(f"no answer in {STARTUP_SECONDS:.0f} s: {tail}")
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()
        if made_scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _ask(client: SyncLangGraphClient, thread_id: str, text: str) -> dict[str, Any]:
    run_input: Any = {"messages": [{"role": "user", "content": text}]}
    result = client.runs.wait(thread_id, "example_agent", input=run_input)
    assert isinstance(result, dict)
    return result


def test_the_server_serves_the_example_agent_and_keeps_active_context(server: str) -> None:
    client = get_sync_client(url=server)
    assistants = client.assistants.search(graph_id="example_agent")
    assert assistants, "langgraph.json names the example agent's graph"
    thread = client.threads.create()
    first = _ask(client, thread["thread_id"], "What is 47 times 83?")
    assert first["active_context"] == "math"
    assert first["messages"][-1]["content"] == "47 × 83 = 3901"
    # The second run reads the first run's answer from the server's checkpoint.
    second = _ask(client, thread["thread_id"], "Translate that answer to French")
    assert second["active_context"] == "translation"
    assert "3\u202f901" in str(second["messages"][-1]["content"])
    # A message that names no scope leaves the active one, as the checkpoint holds it.
    third = _ask(client, thread["thread_id"], "hello")
    assert third["active_context"] == "translation"
    assert len(third["messages"]) > len(second["messages"])
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert isinstance(values, dict) and values["active_context"] == "translation"
