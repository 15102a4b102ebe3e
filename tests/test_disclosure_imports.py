"""The disclosure add-on imports only the core's public modules, LangChain and the standard
library (module level and inside functions alike)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import attention_scoping.disclosure as package

ADD_ON = ("__init__", "allowed", "auto", "choice", "native")
CORE = {
    "attention_scoping.errors",
    "attention_scoping.gate",
    "attention_scoping.middleware",
    "attention_scoping.scopes",
}
THIRD_PARTY = ("langchain", "langchain_core", "langgraph")


def imported(path: Path) -> set[str]:
    """Every module `path` imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_add_on_imports_only_the_core_langchain_and_itself() -> None:
    folder = Path(package.__file__).parent
    for module in ADD_ON:
        for name in imported(folder / f"{module}.py"):
            root = name.split(".")[0]
            ours = name.startswith("attention_scoping.disclosure.") or name in CORE
            stdlib = root in sys.stdlib_module_names
            assert ours or stdlib or root in THIRD_PARTY, f"{module}.py imports {name}"
