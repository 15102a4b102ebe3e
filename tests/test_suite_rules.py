"""Rules for the test suite itself: test modules share helpers only through support modules
(`tests/*_support.py`, `conftest.py`, `openai_stub.py`), and no assertion reads a clock
(timings belong in `benchmarks/` scripts that print figures)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.glob("test_*.py"))
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported_test_modules(tree: ast.Module) -> list[str]:
    """Other test modules (`tests.test_*` or `test_*`) that `tree` imports."""
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [n for n in names if n.rsplit(".", 1)[-1].startswith("test_")]
    return found


def clock_asserts(tree: ast.Module) -> list[int]:
    """Lines of `assert` statements that call `time.perf_counter()` and the like."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for call in ast.walk(node):
            fn = call.func if isinstance(call, ast.Call) else None
            if (
                isinstance(fn, ast.Attribute)
                and fn.attr in CLOCKS
                and isinstance(fn.value, ast.Name)
                and fn.value.id == "time"
            ):
                lines.append(node.lineno)
                break
    return lines


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: p.name)
def test_no_test_module_imports_another(path: Path) -> None:
    assert imported_test_modules(_tree(path)) == []


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: p.name)
def test_no_assertion_reads_the_clock(path: Path) -> None:
    assert clock_asserts(_tree(path)) == []


def test_the_rules_catch_what_they_name() -> None:
    bad = ast.parse(
        "from tests.test_gateway import make_gateway\n"
        "import test_scopes\n"
        "import time\n"
        "start = time.perf_counter()\n"
        "assert time.perf_counter() - start < 1.0\n"
    )
    assert imported_test_modules(bad) == ["tests.test_gateway", "test_scopes"]
    assert clock_asserts(bad) == [5]
    good = ast.parse("from tests.safety_support import FakeClock\nassert FakeClock()() > 0\n")
    assert imported_test_modules(good) == [] and clock_asserts(good) == []
