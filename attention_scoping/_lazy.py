"""Lazy re-exports for package `__init__` modules (PEP 562).

A package lists which submodule defines each public name; the submodule is imported on first
access only, so `import attention_scoping.ledger` or the radar never loads LangChain.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    needs: Mapping[str, str] | None = None,
    fallback: Callable[[str], object] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, resolving `name -> package.submodule.name`.

    Args:
        package: the importing package's `__name__`.
        exports: public name -> submodule path relative to `package` (e.g. `"scoping.middleware"`).
        needs: submodule path prefix -> what to install when its import fails (e.g. an extra):
            the `ImportError` then says `"<name> needs <what> (<cause>)"`.
        fallback: called with a name not in `exports` (e.g. a deprecated one that moved; it
            raises `AttributeError` for names it does not know); None: `AttributeError`.
    """

    def __getattr__(name: str) -> object:
        if name not in exports and fallback is not None:
            return fallback(name)
        try:
            submodule = exports[name]
        except KeyError:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg) from None
        try:
            module = importlib.import_module(f"{package}.{submodule}")
        except ImportError as exc:
            what = next((w for p, w in (needs or {}).items() if submodule.startswith(p)), None)
            if what is None:
                raise
            msg = f"{name} needs {what} ({exc})"
            raise ImportError(msg) from exc
        value = getattr(module, name)
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
