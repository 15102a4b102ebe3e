"""Import a script of `benchmarks/` as a module, for tests that check what it computes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_script(name: str, *, register: bool = False) -> ModuleType:
    """`benchmarks/<name>.py` as a module; `register` puts it in `sys.modules` first (its
    dataclasses resolve their module through it)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
