"""The gate's tool registry: ToolSpecs of the tools seen so far, fitted into one ranker."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.tools import BaseTool

from attention_scoping.adapters.tools import specs_from_tools, tool_name
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating.ranking import Ranker


class ToolIndex:
    """Keeps `ranker` fitted over every tool seen, refitting only when a tool is new or changed.

    Refitting is cheap after the first time: tool vectors come from the on-disk cache, so only
    new or edited tools are embedded.
    """

    def __init__(self, ranker: Ranker) -> None:
        """`ranker`: the ranker to keep fitted."""
        self.ranker = ranker
        self._specs: dict[str, ToolSpec] = {}
        self._objects: dict[str, int] = {}
        self._rows: dict[str, int] = {}
        self._lock = threading.Lock()
        self._last: tuple[int, ...] = ()
        self._order: list[str] = []
        self._row_memo: dict[tuple[str, ...], np.ndarray] = {}
        self.fits = 0
        """How many times the ranker was (re)fitted."""

    def update(
        self,
        tools: Sequence[BaseTool | dict[str, Any]],
        *,
        signature: tuple[int, ...] | None = None,
    ) -> None:
        """Make sure every tool in `tools` is indexed with its current definition
        (`signature`: the ids of `tools`, when the caller has them already)."""
        if signature is None:
            signature = tuple(map(id, tools))
        if signature == self._last:
            return
        with self._lock:
            changed = False
            for tool in tools:
                key = id(tool)
                name = tool_name(tool)
                if self._objects.get(name) == key:
                    continue  # the same object as last time: its definition is known
                self._objects[name] = key
                (spec,) = specs_from_tools([tool])
                old = self._specs.get(name)
                if old is None or (old.description, old.parameters) != (
                    spec.description,
                    spec.parameters,
                ):
                    self._specs[name] = spec
                    changed = True
            if changed:
                self.ranker.fit(list(self._specs.values()))
                self._rows = {n: i for i, n in enumerate(self._specs)}
                self._order = list(self._specs)
                self._row_memo.clear()
                self.fits += 1
            self._last = signature

    def fit_catalog(self, specs: Sequence[ToolSpec]) -> None:
        """Index a catalog given as ToolSpecs (benchmarks, audits, eager warm-up).

        Tools are keyed by their catalog `id` (unique, where names need not be): decisions
        then name tools by id. For LangChain tools the id is the name.
        """
        with self._lock:
            for spec in specs:
                self._specs[spec.id] = spec
            self.ranker.fit(list(self._specs.values()))
            self._rows = {key: i for i, key in enumerate(self._specs)}
            self._order = list(self._specs)
            self._row_memo.clear()
            self.fits += 1

    def rows(self, names: Sequence[str]) -> np.ndarray | None:
        """Ranker rows of `names` (all must be indexed); None when `names` is the whole index in
        order, so rankers score the catalog without gathering rows."""
        if len(names) == len(self._order) and list(names) == self._order:
            return None
        key = tuple(names)
        found = self._row_memo.get(key)
        if found is None:
            found = np.fromiter((self._rows[n] for n in key), dtype=np.int64, count=len(key))
            if len(self._row_memo) >= 16:
                self._row_memo.clear()
            self._row_memo[key] = found
        return found

    def spec(self, name: str) -> ToolSpec | None:
        """The indexed definition of `name` (an id for catalogs indexed by `fit_catalog`)."""
        return self._specs.get(name)

    @property
    def names(self) -> list[str]:
        """Indexed tool keys (names; ids for `fit_catalog` catalogs) in registration order."""
        return list(self._order)

    def scores(self, query: str, names: Sequence[str]) -> np.ndarray:
        """Ranker scores of `names` for `query`."""
        return self.ranker.scores(query, self.rows(names))
