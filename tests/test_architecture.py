"""The layout's rules, enforced: no import cycles, a framework-free core, old paths deprecated,
and the runtime never importing the measuring tools (the lab).

The import graph is read from source (`tests/import_graph.py`), so function-level imports count
and nothing is imported to check it.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.import_graph import (
    LAB,
    LAB_ROOT,
    ROOT,
    all_modules,
    cycles,
    external_imports,
    import_graph,
    modules,
)

FRAMEWORK = {"langchain", "langchain_core", "langgraph"}

PURE = (
    "attention_scoping._lazy",
    "attention_scoping.errors",
    "attention_scoping.risk",
    "attention_scoping.messages",
    "attention_scoping.gating.errors",
    "attention_scoping.hesitation.errors",
    "attention_scoping.common",
    "attention_scoping.common.*",
    "attention_scoping.scopes",
    "attention_scoping.prompt",
    "attention_scoping.select",
    "attention_scoping.gating.gate",
    "attention_scoping.gating.bm25",
    "attention_scoping.gating.exact",
    "attention_scoping.gating.order",
    "attention_scoping.gating.disclosure",
    "attention_scoping.gating.preconditions",
    "attention_scoping.gating.texts",
    "attention_scoping.gateway.catalog",
    "attention_scoping.gateway.payloads",
    "attention_scoping.gateway.search",
    "attention_scoping.hesitation.markers",
    "attention_scoping.hesitation.radar",
    "attention_scoping.hesitation.reading",
    "attention_scoping.hesitation.rules",
    "attention_scoping.hesitation.schemas",
    "attention_scoping.hesitation.texts",
    "attention_scoping.textcalls.context",
    "attention_scoping.textcalls.parse",
    "attention_scoping.textcalls.markup",
    "attention_scoping.history.digest",
    "attention_scoping.ledger",
    "attention_scoping.ledger.*",
    "attention_scoping.storage",
    "attention_scoping.storage.*",
    "attention_scoping.safety.aio",
    "attention_scoping.safety.canonical",
    "attention_scoping.safety.errors",
    "attention_scoping.safety.intents",
    "attention_scoping.safety.journal",
    "attention_scoping.safety.keys",
    "attention_scoping.safety.manifests",
    "attention_scoping.safety.payloads",
    "attention_scoping.safety.records",
    "attention_scoping.safety.token_stores",
    "attention_scoping.safety.tokens",
    "attention_scoping.safety.validation",
    "attention_scoping_lab.bench.metrics",
    "attention_scoping.mcp.bounds",
    "attention_scoping.mcp.cache",
    "attention_scoping.mcp.config",
    "attention_scoping.mcp.faults",
    "attention_scoping.mcp.naming",
)
"""Framework-free modules: the decisions, the radar, the safety and ledger cores, the core."""


def _pure(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in PURE)


def test_every_pure_pattern_names_real_modules() -> None:
    names = all_modules()
    for pattern in PURE:
        assert any(fnmatch.fnmatchcase(n, pattern) for n in names), pattern


def test_the_package_has_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_pure_modules_import_no_framework_at_any_level() -> None:
    offenders = {
        name: sorted(external_imports(path) & FRAMEWORK)
        for name, path in all_modules().items()
        if _pure(name) and external_imports(path) & FRAMEWORK
    }
    assert offenders == {}


def test_pure_modules_import_only_pure_modules() -> None:
    graph = import_graph()
    leaks = {
        name: sorted(t for t in targets if not _pure(t) and t != "attention_scoping")
        for name, targets in graph.items()
        if _pure(name)
    }
    assert {name: bad for name, bad in leaks.items() if bad} == {}


def test_importing_the_core_the_radar_and_the_ledger_loads_no_langchain() -> None:
    code = (
        "import sys, json\n"
        "import attention_scoping.common, attention_scoping_lab.catalog\n"
        "import attention_scoping.ledger\n"
        "from attention_scoping.ledger import SqliteLedger, Worker\n"
        "import attention_scoping.gating.gate\n"
        "from attention_scoping.scopes import Scope, ScopeCatalog\n"
        "from attention_scoping.prompt import PromptLayers\n"
        "from attention_scoping.select import LexicalSelector\n"
        "import attention_scoping.safety.intents, attention_scoping.safety.manifests\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT.parent,
    )
    assert json.loads(out.stdout) == []


def test_public_names_resolve_lazily() -> None:
    import attention_scoping

    for name in attention_scoping.__all__:
        assert getattr(attention_scoping, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = attention_scoping.nope


def test_every_package_says_what_it_owns() -> None:
    for path in [*ROOT.rglob("__init__.py"), *LAB_ROOT.rglob("__init__.py")]:
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and len(doc) > 20, path


def test_lazy_export_tables_name_real_attributes() -> None:
    for name, path in modules().items():
        if path.name != "__init__.py":
            continue
        package = importlib.import_module(name)
        exports = getattr(package, "_EXPORTS", {})
        for public, submodule in exports.items():
            module = importlib.import_module(f"{name}.{submodule}")
            assert hasattr(module, public), f"{name}: {public} not in {submodule}"
        if exports:
            assert sorted(getattr(package, "__all__", [])) == sorted(exports), name


def _runtime_imports_of_the_lab(path: Path) -> list[str]:
    """Import statements of the lab in a runtime module (`TYPE_CHECKING` ones too), and calls
    that name a lab module in a string (`import_module("attention_scoping_lab...")`)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == LAB]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == LAB:
            found.append(node.module or "")
        elif isinstance(node, ast.Call):
            found += [
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and arg.value.split(".")[0] == LAB
            ]
    return found


def test_the_runtime_never_imports_the_lab() -> None:
    offenders = {
        name: found
        for name, path in modules().items()
        if (found := _runtime_imports_of_the_lab(path))
    }
    assert offenders == {}
    assert "attention_scoping.observe.request_log" in modules()  # the walk reads the runtime


def test_the_example_agent_and_its_agents_need_no_lab() -> None:
    """README's first command installs the runtime alone, then runs example_agent.py."""
    files = [ROOT.parent / "example_agent.py", *sorted((ROOT.parent / "agents").rglob("*.py"))]
    offenders = {p.name: found for p in files if (found := _runtime_imports_of_the_lab(p))}
    assert offenders == {}


def test_the_boundary_check_finds_an_import_of_the_lab(tmp_path: Path) -> None:
    leak = tmp_path / "leak.py"
    leak.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from attention_scoping_lab.cost import PriceModel\n"
        "importlib.import_module('attention_scoping_lab.cli')\n"
    )
    found = _runtime_imports_of_the_lab(leak)
    assert sorted(found) == ["attention_scoping_lab.cli", "attention_scoping_lab.cost"]


def test_the_lab_holds_the_measuring_code_and_the_runtime_none() -> None:
    runtime = set(modules())
    assert not any(n.startswith("attention_scoping.measure") for n in runtime)
    assert {"attention_scoping.common.cost", "attention_scoping.common.catalog"}.isdisjoint(runtime)
    lab = set(modules(LAB_ROOT))
    assert {"attention_scoping_lab.cli", "attention_scoping_lab.cost"} <= lab
    assert {"attention_scoping_lab.catalog", "attention_scoping_lab.eval.suites"} <= lab
    data = [p for p in ROOT.rglob("*") if p.suffix == ".json" and "simulate" in p.parts]
    assert data == []


def test_old_paths_are_gone() -> None:
    """Nothing was released, so no old spelling is kept: an old module path is an ImportError."""
    old_paths = ("measure", "radar", "nodes", "scoping", "scope_gate", "navigation")
    for old in (f"attention_scoping.{name}" for name in old_paths):
        with pytest.raises(ImportError):
            importlib.import_module(old)


def test_no_absolute_machine_paths_in_the_repository() -> None:
    repo = ROOT.parent
    tracked = subprocess.run(
        ["git", "ls-files"], capture_output=True, text=True, cwd=repo, check=False
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    markers = ("/" + "work/", "/" + "root/", "/" + "home/")  # split so this file does not match
    bad = []
    for rel in tracked:
        path = Path(repo, rel)
        if path.suffix not in {".py", ".md", ".toml", ".json", ".sh", ".txt"} or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if any(marker in text for marker in markers):
            bad.append(rel)
    assert bad == []


CORE = (
    "attention_scoping",
    "attention_scoping.errors",
    "attention_scoping.risk",
    "attention_scoping.scopes",
    "attention_scoping.messages",
    "attention_scoping.gating.errors",
    "attention_scoping.hesitation.errors",
    "attention_scoping.prompt",
    "attention_scoping.load_context",
    "attention_scoping.select",
    "attention_scoping.gate",
    "attention_scoping.middleware",
    "attention_scoping.graph",
    "attention_scoping.testing",
)
"""The core: the modules `pip install attention-scoping` needs; everything else is an add-on."""

CORE_EXTERNALS = {"langchain", "langchain_core", "langgraph", "pydantic", "typing_extensions"}
"""What the core may import besides the standard library: LangChain, LangGraph and the two
packages LangChain's own tool and state APIs are written in."""


def test_the_core_imports_only_itself_langchain_langgraph_and_the_standard_library() -> None:
    """Checked at every level (function-level imports included)."""
    graph = import_graph()
    known = all_modules()
    leaks = {name: sorted(set(graph[name]) - set(CORE)) for name in CORE}
    assert {n: bad for n, bad in leaks.items() if bad} == {}
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    outside = {
        name: sorted(
            external_imports(known[name]) - stdlib - CORE_EXTERNALS - {"attention_scoping"}
        )
        for name in CORE
    }
    assert {n: bad for n, bad in outside.items() if bad} == {}


def test_the_boundary_check_sees_a_function_level_import(tmp_path: Path) -> None:
    module = tmp_path / "leak.py"
    module.write_text("def f():\n    import numpy\n    from attention_scoping.gating import x\n")
    assert external_imports(module) >= {"numpy", "attention_scoping"}
