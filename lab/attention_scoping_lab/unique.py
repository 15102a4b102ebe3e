"""The one check the lab's loaders share for names that must be unique (tool names, task ids)."""

from __future__ import annotations

from collections.abc import Iterable


def first_repeated(names: Iterable[str]) -> str | None:
    """The first name that occurs a second time in `names`, or None when all are distinct."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None
