"""The package's import graph, read from the source with `ast` (no module is imported).

Every `import` counts, at module level or inside a function, except imports under
`if TYPE_CHECKING:` (they never run). `from package import name` resolves through the package's
lazy `_EXPORTS` table to the submodule that defines `name`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "attention_scoping"
LAB_ROOT = ROOT.parent / "lab" / "attention_scoping_lab"
"""The measuring tools' package (distribution `attention-scoping-lab`, beside the runtime)."""
PACKAGE = "attention_scoping"
LAB = "attention_scoping_lab"


def module_name(path: Path) -> str:
    """Dotted module name of a file under the runtime's or the lab's package."""
    root = LAB_ROOT if path.is_relative_to(LAB_ROOT) else ROOT
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package at `root` (the runtime unless told) by dotted name."""
    return {module_name(p): p for p in sorted(root.rglob("*.py"))}


def all_modules() -> dict[str, Path]:
    """Every module of the runtime and of the lab by dotted name."""
    return {**modules(ROOT), **modules(LAB_ROOT)}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that can run (all but those under `if TYPE_CHECKING:`)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def lazy_exports(path: Path) -> dict[str, str]:
    """A package `__init__`'s `_EXPORTS` table (name -> submodule), or {}."""
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "_EXPORTS"
        ):
            value = ast.literal_eval(node.value)
            return dict(value) if isinstance(value, dict) else {}
    return {}


def _targets(node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> Iterator[str]:
    """The package modules an import statement loads."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith(PACKAGE):
                yield alias.name
        return
    base = node.module or ""
    if not base.startswith(PACKAGE) or node.level:
        return
    exports = lazy_exports(known[base]) if base in known else {}
    for alias in node.names:
        if f"{base}.{alias.name}" in known:
            yield f"{base}.{alias.name}"
        elif alias.name in exports:
            yield f"{base}.{exports[alias.name]}"
        else:
            yield base


def import_graph() -> dict[str, set[str]]:
    """Module -> the runtime's and the lab's modules it imports (at run time)."""
    known = all_modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text())
        edges = {t for node in runtime_imports(tree) for t in _targets(node, known)}
        graph[name] = {t for t in edges if t in known and t != name}
    return graph


def external_imports(path: Path) -> set[str]:
    """Top-level names of third-party packages a module imports at run time."""
    out: set[str] = set()
    for node in runtime_imports(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        out.update(n.split(".")[0] for n in names if n and not node.__dict__.get("level"))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
