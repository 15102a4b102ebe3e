"""The runtime works without the measuring tools: a virtual environment that holds only the
runtime (this checkout, as `pip install -e .` puts it on the path) and its dependencies, where
the lab (`attention_scoping_lab`) cannot be imported.

Fast: the venv is made without pip and reuses the installed dependencies through a `.pth` line
naming this interpreter's site-packages. `.pth` files are not read in folders a `.pth` line adds,
so an editable install of the lab there (or of another checkout) stays out of reach; the script
checks that before anything else.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path
from subprocess import CompletedProcess

import pytest

REPO = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import importlib.util, json, sys
from pathlib import Path

assert importlib.util.find_spec("attention_scoping_lab") is None, "the lab is importable"
import attention_scoping
assert Path(attention_scoping.__file__).resolve().parent == Path(sys.argv[1]) / "attention_scoping"

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.hesitation.middleware import HesitationMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.observe import RequestLogMiddleware, tool_tokens
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

for name in attention_scoping.__all__:
    getattr(attention_scoping, name)

@tool
def multiply(a: int, b: int) -> int:
    "Multiply two integers."
    return a * b

@tool
def shout(text: str) -> str:
    "Upper-case a text."
    return text.upper()

model = ScriptedChatModel(script=[
    calls(tool_call("load_context", {"name": "math"}, "c1")),
    calls(tool_call("multiply", {"a": 47, "b": 83}, "c2")),
    say("3901"),
])
log = Path(sys.argv[2])
agent = create_agent(model, tools=[multiply, shout], middleware=[
    AttentionScopingMiddleware(
        [Scope("math", "arithmetic", tools=[multiply]), Scope("text", "text", tools=[shout])],
        selector=None,
    ),
    ToolAttentionMiddleware(ranker="bm25"),
    HesitationMiddleware(),
    RequestLogMiddleware(log),
])
result = agent.invoke({"messages": [HumanMessage("What is 47 times 83?")]})
print(json.dumps({
    "tools": [r["tools"] for r in model.recorded],
    "answer": result["messages"][-1].content,
    "logged": len(log.read_text().splitlines()),
    "tax": tool_tokens([multiply, shout]),
    "lab_loaded": sorted(m for m in sys.modules if m.startswith("attention_scoping_lab")),
}))
"""


CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
"""The environment without PYTHONPATH and friends (they could put the lab back on the path)."""


def _site_packages() -> list[str]:
    """This interpreter's site-packages folders (where the dependencies are installed)."""
    found = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    return list(dict.fromkeys(p for p in found if Path(p).is_dir()))


def _run(python: Path, *args: str, cwd: Path = REPO, check: bool = False) -> CompletedProcess[str]:
    """Run `python` with `args` in the clean environment, its output captured as text."""
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        check=check,
        cwd=cwd,
        env=CLEAN_ENV,
        timeout=120,
    )


@pytest.fixture(scope="module")
def runtime_only_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv whose path holds this checkout's root (the runtime) and the dependencies."""
    root = tmp_path_factory.mktemp("runtime-only")
    venv.EnvBuilder(with_pip=False, symlinks=sys.platform != "win32").create(root)
    python = root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = _run(python, "-c", where, check=True).stdout.strip()
    Path(purelib, "runtime_only.pth").write_text("\n".join([str(REPO), *_site_packages()]) + "\n")
    return python


def test_the_runtime_and_its_middleware_work_without_the_lab(
    runtime_only_python: Path, tmp_path: Path
) -> None:
    log = str(tmp_path / "session.jsonl")
    proc = _run(runtime_only_python, "-c", SCRIPT, str(REPO), log, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tools"][0] == ["load_context"]
    assert "multiply" in out["tools"][1] and "shout" not in out["tools"][1]
    assert out["answer"] == "3901"
    assert out["logged"] == 3  # one line per model call
    assert out["tax"] > 0
    assert out["lab_loaded"] == []


def test_the_lab_cannot_be_imported_in_the_runtime_only_venv(runtime_only_python: Path) -> None:
    proc = _run(runtime_only_python, "-c", "import attention_scoping_lab")
    assert proc.returncode == 1
    assert "No module named 'attention_scoping_lab'" in proc.stderr
