"""A newcomer's first hour: defects found trying the project from a fresh clone, each pinned.

The gate keeps the scoping middleware's always-on tools, many unscoped tools give one warning,
install hints name the clone install, `simulate` without the gate extra names the extra.
"""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, tool
from rich.console import Console

from attention_scoping.adapters.tools import PINNED
from attention_scoping.common.extras import GATE_EXTRA_HINT
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, say
from attention_scoping_lab.bench.progress import ProgressBars

ROOT = Path(__file__).resolve().parent.parent


@tool
def get_knowledge(topic: str) -> str:
    """Look up the company knowledge base on a topic."""
    return "kb"


@tool
def refund_payment(order_id: str) -> str:
    """Refund the payment of an order."""
    return "refunded"


@tool
def get_invoice(order_id: str) -> str:
    """Fetch the invoice of an order."""
    return "invoice"


get_invoice.metadata = {"risk": "read"}


@tool
def update_card(card: str) -> str:
    """Replace the customer's payment card."""
    return "updated"


def _make_tool(i: int) -> BaseTool:
    @tool(f"stray_{i}")
    def stray(x: str) -> str:
        """A registered tool that no scope names."""
        return x

    return stray


@pytest.mark.parametrize("by_name", [False, True])
def test_the_gate_keeps_scoping_always_on_tools(by_name: bool) -> None:
    # Before: with k=1 the gate sent only the best billing tool and dropped get_knowledge,
    # unless it was repeated in pinned=.
    scoping = AttentionScopingMiddleware(
        [Scope("billing", "refunds", tools=[refund_payment, get_invoice, update_card])],
        always_on=["get_knowledge"] if by_name else [get_knowledge],
        default_scope="billing",
    )
    # the gate is told the scoping middleware's always-on tools (public names compose)
    gate = ToolAttentionMiddleware(
        ranker="bm25", k=1, summary_pool="off", pinned=scoping.catalog.always_on
    )
    model = ScriptedChatModel(script=[say("ok")])
    stack: list[AgentMiddleware[Any, Any]] = [scoping, gate]
    agent = create_agent(model, tools=[get_knowledge] if by_name else [], middleware=stack)
    agent.invoke({"messages": [HumanMessage("fetch the invoice of order 12")]})
    # the application's always-on tool stays whatever the gate ranks; the gate (code) adds
    # its best declared read
    assert sorted(model.recorded[0]["tools"]) == ["get_invoice", "get_knowledge", "load_context"]


def test_a_tool_marked_pinned_is_always_sent_by_a_gate_alone() -> None:
    @tool
    def logout() -> str:
        """End the user's session."""
        return "bye"

    logout.metadata = {PINNED: True}

    gate = ToolAttentionMiddleware(ranker="bm25", k=1, summary_pool="off")
    model = ScriptedChatModel(script=[say("ok")])
    agent = create_agent(model, tools=[refund_payment, get_invoice, logout], middleware=[gate])
    agent.invoke({"messages": [HumanMessage("fetch the invoice of order 12")]})
    # the gate (code) promotes only a declared read; the pinned tool is sent whatever it is
    assert sorted(model.recorded[0]["tools"]) == ["get_invoice", "logout"]


def test_many_unscoped_tools_give_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    strays = [_make_tool(i) for i in range(201)]
    scoping = AttentionScopingMiddleware([Scope("billing", "refunds", tools=[refund_payment])])
    model = ScriptedChatModel(script=[say("ok"), say("ok")])
    agent = create_agent(model, tools=strays, middleware=[scoping])
    with caplog.at_level(logging.WARNING, logger="attention_scoping"):
        agent.invoke({"messages": [HumanMessage("hello")]})
        agent.invoke({"messages": [HumanMessage("hello again")]})
    never = "tools no scope or always_on lists are never shown"
    warnings = [r.getMessage() for r in caplog.records if never in r.getMessage()]
    assert len(warnings) == 1  # once, not per call
    assert "stray_0" in warnings[0] and "stray_200" in warnings[0]
    assert "stray_0" not in model.recorded[0]["tools"]


def test_install_hints_name_the_clone_install() -> None:
    assert GATE_EXTRA_HINT.startswith('pip install -e ".[gate]"')
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("attention_scoping", "docs", "agents")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".py", ".md"} and "attention-scoping[" in path.read_text()
    ]
    from_an_index = re.compile(r"""pip install ["']attention-scoping\[[^\]]*\](?!\s*@\s*git\+)""")
    offenders += [  # a name alone points at a package index; `name @ git+URL` does not
        name
        for name in ("README.md", "REPLICATE.md", "example_agent.py")
        if from_an_index.search((ROOT / name).read_text())
    ]
    assert offenders == []


def test_simulate_without_the_gate_extra_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from attention_scoping_lab.cli import main\n"
        "sys.exit(main(['simulate', '--tasks', '1']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "'gate' extra (numpy is missing)" in lines[0]
    assert 'pip install -e ".[gate]"' in lines[0]


def test_license_file_is_mit() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "attention-scoping contributors" in text


def test_progress_without_a_terminal_is_one_whole_line_per_task() -> None:
    out = io.StringIO()
    with ProgressBars(Console(file=out, width=40)) as bars:
        for done in range(4):
            bars("embedding 1,032 catalog tools with MiniLM", done, 3)
        bars("running queries", 5, 5)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("embedding 1,032 catalog tools with MiniLM: 3/3 in ")
    assert lines[1].startswith("running queries: 5/5 in ")


def test_ci_installs_what_the_readme_test_command_installs() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    command = next(line for line in readme if "pip install" in line and "-m pytest" in line)
    install = command.split("pip install ", 1)[1].split(" && ", 1)[0]
    assert install == '-e ".[dev]" -e ./lab'  # the runtime with its dev extra, and the lab
    script = (ROOT / ".ci" / "run").read_text()
    assert f'"$VENV/bin/pip" install {install}\n' in script


def test_ci_keeps_the_checkouts_venv_and_stops_its_postgres() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "rm -rf .venv" not in script and '"$VENV/bin/pip" install -e ".[dev]"' in script
    assert "trap cleanup EXIT" in script and 'pg_ctl" -D "$PG_STARTED" -m fast -w stop' in script
