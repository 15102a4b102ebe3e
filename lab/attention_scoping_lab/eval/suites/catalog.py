"""The `catalog` suite: single-call tool choice over any labelled catalog in the bench format.

Each query becomes a one-turn task judged on the model's first tool call: it must name a gold
tool. A whole catalog rarely fits a prompt (BFCL's 1,032 tools are ~100k tokens), so the suite
offers a sample: the gold tools of the chosen queries plus seeded distractors, up to
`max_tools`. When every row carries a `server` and servers average two or more sampled tools,
each server becomes a scope (Seal-Tools' domains do; BFCL's servers are its source queries).

The bench format carries no risk, so no tool of a catalog is declared a read: a scope the
selector opens shows `load_context` alone and the model loads the scope itself (fail closed;
the `catalog` suite measures tool choice after that load).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.catalog import Query, load_catalog, load_queries
from attention_scoping_lab.eval.suite import ANSWER_RULE, Suite
from attention_scoping_lab.eval.suites.spec_tools import spec_tools
from attention_scoping_lab.eval.tasks import EvalTask, Expect

DEFAULT_MAX_TOOLS = 40
DEFAULT_QUERIES = 30
MIN_TOOLS_PER_SCOPE = 2
"""Servers averaging fewer sampled tools than this are not used as scopes."""


def _sample(
    specs: Sequence[ToolSpec], queries: Sequence[Query], max_tools: int, seed: int
) -> list[ToolSpec]:
    by_id = {s.id: s for s in specs}
    chosen: dict[str, ToolSpec] = {}
    for query in queries:
        for gold in query.gold_ids:
            chosen.setdefault(gold, by_id[gold])
    rest = [s for s in specs if s.id not in chosen]
    random.Random(f"catalog:{seed}").shuffle(rest)
    for spec in rest[: max(max_tools - len(chosen), 0)]:
        chosen[spec.id] = spec
    ordered = list(chosen.values())
    random.Random(f"order:{seed}").shuffle(ordered)
    return ordered


def _scopes(specs: Sequence[ToolSpec], names: dict[str, str]) -> list[object] | None:
    if not specs or any(not s.server for s in specs):
        return None
    from attention_scoping.scopes import Scope

    groups: dict[str, list[str]] = {}
    for spec in specs:
        if spec.id in names:
            groups.setdefault(str(spec.server), []).append(names[spec.id])
    if len(names) < MIN_TOOLS_PER_SCOPE * len(groups):
        return None  # mostly one-tool servers (BFCL's are its source queries): not scopes
    return [
        Scope(_scope_name(server), f"tools of {server}", tools=tools)
        for server, tools in groups.items()
    ]


def _scope_name(server: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-." else "_" for c in server).strip("_.-")
    return (cleaned or "server")[:64]


def catalog_suite(
    catalog: str | Path,
    queries: str | Path,
    *,
    max_tools: int = DEFAULT_MAX_TOOLS,
    limit: int | None = DEFAULT_QUERIES,
    seed: int = 0,
) -> Suite:
    """Single-call tasks for the first `limit` queries over a sampled `max_tools` catalog."""
    specs = load_catalog(catalog)
    labelled = load_queries(queries, specs)
    if limit is not None:
        labelled = labelled[:limit]
    sample = _sample(specs, labelled, max_tools, seed)
    tools, names = spec_tools(sample)
    tasks = [
        EvalTask(
            id=q.id,
            turns=(q.query,),
            expect=(Expect(tools=tuple(names[g] for g in q.gold_ids if g in names)),),
            single_call=True,
            state=dict(q.state),
        )
        for q in labelled
    ]
    scopes = _scopes(sample, names)
    return Suite(
        "catalog",
        tools=tools,
        tasks=tasks,
        scopes=scopes,  # type: ignore[arg-type]
        system_prompt=ANSWER_RULE,
        notes=f"{len(tools)} tools sampled from {Path(catalog).name} (gold + seeded distractors)",
    )
