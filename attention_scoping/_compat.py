"""Old module paths of 0.1 (`attention_scoping.scopes`, `.middleware`, `.radar`, ...) kept working.

An import of an old path gets a thin module that re-exports the names of the module(s) the code
now lives in, with a `DeprecationWarning` naming the new path. One table instead of a shim file
per old module: the objects are the same (a class imported from an old path *is* the class of the
new one), and the old paths disappear in 1.0 by deleting this file.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

OLD_MODULES: dict[str, tuple[str, ...]] = {
    "scopes": ("scoping.catalog",),
    "prompts": ("scoping.prompts",),
    "navigation": ("scoping.navigation", "core.errors"),
    "scope_gate": ("scoping.gate",),
    "middleware": ("scoping.middleware",),
    "refusals": ("adapters.refusals", "core.errors"),
    "toolspec": ("adapters.tools", "core.tool"),
    "catalog": ("core.catalog", "core.tool", "adapters.tools"),
    "gating.text": ("core.text",),
    "radar": ("hesitation.radar",),
    "pending_schemas": ("hesitation.pending",),
    "nodes": ("graph",),
    "cli": ("measure.cli",),
    "tax": ("measure.tax", "core.tokens"),
    "ledger.retry": ("storage.retry",),
    "ledger.sqlite_db": ("storage.sqlite",),
    "ledger.postgres_db": ("storage.postgres",),
}
"""Old module (relative to the package) -> the modules its names now live in, first is main."""

OLD_PACKAGES: dict[str, str] = {
    "bench.simulated": "measure.simulate",
    "audit": "measure.audit",
    "bench": "measure.bench",
}
"""Old package -> new package; submodules follow (`bench.runner` -> `measure.bench.runner`)."""

_ROOT = "attention_scoping"


def targets(fullname: str) -> tuple[str, ...] | None:
    """The new modules behind an old dotted path, or None when `fullname` is not an old path."""
    if not fullname.startswith(_ROOT + "."):
        return None
    rest = fullname[len(_ROOT) + 1 :]
    if rest in OLD_MODULES:
        return tuple(f"{_ROOT}.{m}" for m in OLD_MODULES[rest])
    for old, new in OLD_PACKAGES.items():
        if rest == old or rest.startswith(old + "."):
            return (f"{_ROOT}.{new}{rest[len(old) :]}",)
    return None


class _ReexportModule(ModuleType):
    """A deprecated path: attribute access resolves in the new modules, in order."""

    _sources: tuple[ModuleType, ...] = ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            msg = f"module {self.__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        for source in self._sources:
            try:
                return getattr(source, name)
            except AttributeError:
                continue
        msg = f"module {self.__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for source in self._sources:
            names.update(dir(source))
        return sorted(names)


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds old paths and loads them as `_ReexportModule`s with a `DeprecationWarning`."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old path (a package spec, so old submodule paths resolve too)."""
        if targets(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """An empty re-export module; `exec_module` fills in its sources."""
        return _ReexportModule(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Import the new modules and warn once per old path."""
        new = targets(module.__name__) or ()
        warnings.warn(
            f"{module.__name__} is deprecated and will be removed in 1.0; import from {new[0]}",
            DeprecationWarning,
            stacklevel=2,
        )
        sources = tuple(importlib.import_module(name) for name in new)
        object.__setattr__(module, "_sources", sources)
        object.__setattr__(module, "__path__", [])


def install() -> None:
    """Put the alias finder first on `sys.meta_path` (idempotent)."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
