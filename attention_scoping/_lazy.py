"""Lazy re-exports for package `__init__` modules (PEP 562).

A package lists which submodule defines each public name; the submodule is imported on first
access only, so `import attention_scoping.ledger` or the radar never loads LangChain.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, resolving `name -> package.submodule.name`.

    Args:
        package: the importing package's `__name__`.
        exports: public name -> submodule path relative to `package` (e.g. `"scoping.middleware"`).
    """

    def __getattr__(name: str) -> object:
        try:
            submodule = exports[name]
        except KeyError:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg) from None
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
