"""The layout's rules, enforced: no import cycles, a framework-free core, old paths deprecated.

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
import warnings
from pathlib import Path

import pytest

from attention_scoping import _compat
from tests.import_graph import ROOT, cycles, external_imports, import_graph, modules

FRAMEWORK = {"langchain", "langchain_core", "langgraph"}

PURE = (
    "attention_scoping._lazy",
    "attention_scoping._compat",
    "attention_scoping.core",
    "attention_scoping.core.*",
    "attention_scoping.scoping.catalog",
    "attention_scoping.scoping.breadcrumbs",
    "attention_scoping.scoping.prompts",
    "attention_scoping.scoping.gate",
    "attention_scoping.gating.gate",
    "attention_scoping.gating.bm25",
    "attention_scoping.gating.exact",
    "attention_scoping.gating.order",
    "attention_scoping.gating.disclosure",
    "attention_scoping.gating.preconditions",
    "attention_scoping.gateway.catalog",
    "attention_scoping.gateway.payloads",
    "attention_scoping.gateway.search",
    "attention_scoping.hesitation.markers",
    "attention_scoping.hesitation.radar",
    "attention_scoping.hesitation.reading",
    "attention_scoping.hesitation.rules",
    "attention_scoping.hesitation.schemas",
    "attention_scoping.ledger",
    "attention_scoping.ledger.*",
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
    "attention_scoping.measure.bench.metrics",
    "attention_scoping.mcp.cache",
    "attention_scoping.mcp.config",
    "attention_scoping.mcp.faults",
    "attention_scoping.mcp.naming",
)
"""Framework-free modules: the decisions, the radar, the safety and ledger cores, the core."""


def _pure(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in PURE)


def test_every_pure_pattern_names_real_modules() -> None:
    names = modules()
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
        for name, path in modules().items()
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
        "import attention_scoping.core, attention_scoping.core.catalog\n"
        "import attention_scoping.ledger\n"
        "from attention_scoping.ledger import SqliteLedger, Worker\n"
        "import attention_scoping.gating.gate, attention_scoping.scoping.gate\n"
        "from attention_scoping.scoping import Scope, ScopeCatalog, PromptLayers\n"
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
    for path in ROOT.rglob("__init__.py"):
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


OLD_NAMES = {
    "scopes": "Scope",
    "prompts": "PromptLayers",
    "navigation": "render_payload",
    "scope_gate": "review_call",
    "middleware": "AttentionScopingMiddleware",
    "refusals": "NOT_RUN_ERRORS",
    "toolspec": "summarize",
    "catalog": "specs_from_tools",
    "gating.text": "split_identifier",
    "radar": "detect_hesitation",
    "pending_schemas": "nudge_text",
    "nodes": "make_model_node",
    "cli": "main",
    "tax": "get_counter",
    "audit": "audit",
    "bench": "run_bench",
    "bench.runner": "run_bench",
    "bench.simulated": "run_simulation",
    "bench.simulated.run": "run_simulation",
}


def test_the_table_covers_every_old_path() -> None:
    old = set(_compat.OLD_MODULES) | set(_compat.OLD_PACKAGES)
    assert old <= set(OLD_NAMES)


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_old_paths_still_import_with_a_deprecation_warning(old: str) -> None:
    full = f"attention_scoping.{old}"
    sys.modules.pop(full, None)
    with pytest.warns(DeprecationWarning, match=r"import from attention_scoping\."):
        module = importlib.import_module(full)
    name = OLD_NAMES[old]
    value = getattr(module, name)
    new = _compat.targets(full)
    assert new is not None
    found = [getattr(importlib.import_module(m), name, None) for m in new]
    assert value is next(v for v in found if v is not None)


def test_new_paths_are_not_deprecated() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        importlib.import_module("attention_scoping.scoping.catalog")
        importlib.import_module("attention_scoping.measure.bench.runner")
    assert _compat.targets("attention_scoping.scoping.catalog") is None


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
