"""Old module paths of 0.1 (`attention_scoping.scopes`, `.middleware`, `.radar`, ...) kept working.

An import of an old path gets a thin module that re-exports the names of the module(s) the code
now lives in, with a `DeprecationWarning` naming the new path. One table instead of a shim file
per old module: the objects are the same (a class imported from an old path *is* the class of the
new one), and the old paths disappear in 1.0 by deleting this file.

The measuring tools moved out of this distribution into `attention-scoping-lab` (package
`attention_scoping_lab`): their old paths (`attention_scoping.measure.*`, `core.cost`,
`core.catalog`) resolve there when it is installed, and raise an `ImportError` naming its install
command when it is not. This module only names the lab in strings: the runtime never imports it.
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
    "cli": ("attention_scoping_lab.cli",),
    "tax": ("observe.tax", "core.tokens"),
    "measure.tax": ("observe.tax",),
    "measure.request_log": ("observe.request_log",),
    "measure.jsonl": ("observe.jsonl",),
    "core.cost": ("attention_scoping_lab.cost",),
    "core.catalog": ("attention_scoping_lab.catalog",),
    "ledger.retry": ("storage.retry",),
    "ledger.sqlite_db": ("storage.sqlite",),
    "ledger.postgres_db": ("storage.postgres",),
}
"""Old module (relative to the package) -> the modules its names now live in, first is main
(relative to the package, or a module of the lab)."""

OLD_PACKAGES: dict[str, str] = {
    "bench.simulated": "attention_scoping_lab.simulate",
    "audit": "attention_scoping_lab.audit",
    "bench": "attention_scoping_lab.bench",
    "measure": "attention_scoping_lab",
}
"""Old package -> new package; submodules follow (`bench.runner` -> the lab's `bench.runner`)."""

MOVED_NAMES: dict[str, tuple[str, frozenset[str]]] = {
    "attention_scoping.core": (
        "attention_scoping_lab.catalog",
        frozenset(
            {
                "REQUIRED_QUERY_FIELDS",
                "REQUIRED_TOOL_FIELDS",
                "CatalogError",
                "Query",
                "load_catalog",
                "load_openai_tools",
                "load_queries",
            }
        ),
    ),
}
"""Package -> (the lab module, the names it exported that moved there), for `moved_name`."""

_ROOT = "attention_scoping"
LAB = "attention_scoping_lab"
LAB_INSTALL = "pip install -e ./lab (from a clone of the repository)"
"""How to install the measuring tools, named by every error about a missing lab."""


def _absolute(module: str) -> str:
    return module if module.split(".")[0] == LAB else f"{_ROOT}.{module}"


def lab_missing(old: str, new: str) -> ImportError:
    """The error for an old path whose code moved to the lab when the lab is not installed."""
    msg = (
        f"{old} moved to {new} in the measuring tools (distribution attention-scoping-lab), "
        f"which is not installed: {LAB_INSTALL}"
    )
    return ImportError(msg, name=old)


def import_new(old: str, new: str) -> ModuleType:
    """Import `new` (the module behind old path `old`), naming the lab's install when missing."""
    try:
        return importlib.import_module(new)
    except ModuleNotFoundError as exc:
        if new.split(".")[0] == LAB and (exc.name or "").split(".")[0] == LAB:
            raise lab_missing(old, new) from None
        raise


def moved_name(package: str, name: str) -> object:
    """A name `package` exported before it moved to the lab, with a `DeprecationWarning`.

    Raises:
        AttributeError: `name` did not move from `package`.
        ImportError: the lab is not installed (the message names its install command).
    """
    module, names = MOVED_NAMES.get(package, ("", frozenset()))
    if name not in names:
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)
    warnings.warn(
        f"{package}.{name} is deprecated and will be removed in 1.0; import it from {module}",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(import_new(f"{package}.{name}", module), name)


def targets(fullname: str) -> tuple[str, ...] | None:
    """The new modules behind an old dotted path, or None when `fullname` is not an old path."""
    if not fullname.startswith(_ROOT + "."):
        return None
    rest = fullname[len(_ROOT) + 1 :]
    if rest in OLD_MODULES:
        return tuple(_absolute(m) for m in OLD_MODULES[rest])
    for old, new in OLD_PACKAGES.items():
        if rest == old or rest.startswith(old + "."):
            return (f"{_absolute(new)}{rest[len(old) :]}",)
    return None


class _ReexportModule(ModuleType):
    """A deprecated path: attribute access resolves in the new modules, in order."""

    _sources: tuple[ModuleType, ...] = ()
    _missing: str = ""
    """Why the sources are empty: the lab is not installed (an old package kept importable
    because some of its old submodules still live in the runtime)."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            msg = f"module {self.__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        for source in self._sources:
            try:
                return getattr(source, name)
            except AttributeError:
                continue
        msg = f"module {self.__name__!r} has no attribute {name!r}{self._missing}"
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
        try:
            sources = tuple(import_new(module.__name__, name) for name in new)
        except ImportError as exc:
            if not _has_runtime_children(module.__name__):
                raise
            sources = ()  # `attention_scoping.measure`: its `.tax` still resolves
            object.__setattr__(module, "_missing", f" ({exc})")
        object.__setattr__(module, "_sources", sources)
        object.__setattr__(module, "__path__", [])


def _has_runtime_children(fullname: str) -> bool:
    """Whether an old package has old submodules whose code stayed in the runtime."""
    rest = fullname[len(_ROOT) + 1 :]
    return any(
        key.startswith(rest + ".") and all(m.split(".")[0] != LAB for m in new)
        for key, new in OLD_MODULES.items()
    )


def install() -> None:
    """Put the alias finder first on `sys.meta_path` (idempotent)."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
