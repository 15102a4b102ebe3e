"""What the gate reads from the tool objects of a request, read once per list of tools.

A tool's name, its `pinned` mark, whether it is a declared read (`attention_scoping.risk`) and
the precondition in its metadata depend only on the tool object; reading them on every model
call was most of a decision over thousands of tools. They are kept per list of tool objects and
of their metadata objects, so a new or replaced tool, or a tool given a new metadata dict
(`mark_pinned` does that), is read afresh.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attention_scoping.adapters.tools import is_pinned, tool_name
from attention_scoping.gating.preconditions import Precondition
from attention_scoping.risk import declared_read


@dataclass(frozen=True)
class ToolFacts:
    """The facts of one list of tools (provider dicts left out when `objects_only`)."""

    objects: list[Any]
    """The tools the facts are about, in request order (held, so their ids stay valid)."""
    ids: tuple[int, ...]
    """The ids of `objects` (the tool index's signature of the list)."""
    names: tuple[str, ...]
    """Their names, in the same order (a tuple: decisions remember its positions by identity)."""
    present: frozenset[str]
    """The set of `names`."""
    marked: list[str]
    """Names of the tools whose metadata marks them pinned, in request order."""
    writes: frozenset[str]
    """Names of the tools code may not put in view: every tool that is not a declared read
    (`attention_scoping.risk.declared_read`; an unclassified tool may write)."""
    metadata_checks: tuple[tuple[str, Precondition | None], ...]
    """(name, the precondition its metadata holds or None when unusable) for every tool whose
    metadata has a `preconditions` key, in request order."""
    rows: Mapping[str, tuple[int, ...]]
    """Positions in the request list of the tools with each name (provider dicts excluded)."""
    dict_rows: tuple[int, ...]
    """Positions in the request list of provider dicts."""


def _metadata_check(meta: Any) -> Precondition | None:
    """The precondition a metadata mapping holds, when it is a callable or a mapping."""
    found = meta.get("preconditions") if isinstance(meta, Mapping) else None
    return found if callable(found) or isinstance(found, Mapping) else None


def read_facts(tools: Sequence[Any], *, objects_only: bool) -> ToolFacts:
    """Read the facts of `tools` (every one, or only those that are not provider dicts)."""
    objects = [t for t in tools if not isinstance(t, dict)] if objects_only else list(tools)
    names = tuple(tool_name(t) for t in objects)
    checks: list[tuple[str, Precondition | None]] = []
    for tool, name in zip(objects, names, strict=True):
        meta = getattr(tool, "metadata", None)
        if meta and "preconditions" in meta:
            checks.append((name, _metadata_check(meta)))
    rows: dict[str, list[int]] = {}
    dict_rows: list[int] = []
    for row, tool in enumerate(tools):
        if isinstance(tool, dict):
            dict_rows.append(row)
        else:
            rows.setdefault(tool_name(tool), []).append(row)
    return ToolFacts(
        objects=objects,
        ids=tuple(map(id, objects)),
        names=names,
        present=frozenset(names),
        marked=[n for t, n in zip(objects, names, strict=True) if is_pinned(t)],
        writes=frozenset(n for t, n in zip(objects, names, strict=True) if not declared_read(t, n)),
        metadata_checks=tuple(checks),
        rows={name: tuple(found) for name, found in rows.items()},
        dict_rows=tuple(dict_rows),
    )


def _metadata_of(tool: Any) -> Any:
    return getattr(tool, "metadata", None)


_METADATA = operator.attrgetter("metadata")


def _metadata(tools: Sequence[Any]) -> tuple[Any, ...]:
    """Every tool's `metadata` (None where it has none), by a C-level loop when all have one."""
    try:
        return tuple(map(_METADATA, tools))
    except AttributeError:  # provider dicts, plain functions
        return tuple(map(_metadata_of, tools))


class FactsMemo:
    """The facts of the last few tool lists, keyed by the identity of the tools and of their
    metadata (a list with the same objects reads nothing again)."""

    def __init__(self, size: int = 8) -> None:
        """Keep at most `size` lists."""
        self.size = size
        self._items: list[tuple[tuple[Any, ...], ToolFacts, tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        self.reads = 0
        """How many times facts were read from the tools (for tests)."""

    def facts(
        self,
        tools: Sequence[Any],
        *,
        objects_only: bool,
        read: Callable[..., ToolFacts] = read_facts,
    ) -> ToolFacts:
        """The facts of `tools`, read once per list of tool and metadata objects.

        The key is the ids of the tools and of their metadata (C-level loops: a fraction of a
        millisecond over thousands of tools); both are held with the facts, so no id in a key
        can be reused by a new object while the key is kept."""
        held = (*tools, *_metadata(tools))
        key = (objects_only, *map(id, held))
        with self._lock:
            items = list(self._items)
        for known, facts, _ in items:  # compared, not hashed: equality of ids is cheaper
            if known == key:
                return facts
        facts = read(tools, objects_only=objects_only)
        with self._lock:
            self.reads += 1
            self._items = [(key, facts, held), *self._items[: self.size - 1]]
        return facts
