"""Run the simulated benchmark: build the catalog and tasks from a seed, play every strategy,
and reduce the traces to the tools tax per call, per turn and per session."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_scoping.common.tokens import TokenCounter, get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.display import write_figures_json
from attention_scoping_lab.simulate.catalog import PAPER_PROFILE, build_catalog, to_jsonl
from attention_scoping_lab.simulate.strategies import (
    Eager,
    Gated,
    Gateway,
    Scoped,
    Strategy,
    Trace,
    play_all,
)
from attention_scoping_lab.simulate.tasks import Task, build_tasks

PAPER_EAGER_PER_TURN = 47_312
"""The paper's tool tokens per turn with every schema sent (120 tools, six servers)."""

PAPER_GATED_PER_TURN = 2_368
"""The paper's tool tokens per turn with Tool Attention."""


@dataclass
class StrategyFigures:
    """The tools tax of one strategy over all tasks."""

    name: str
    description: str
    tool_tokens_per_call: float
    tool_tokens_per_turn: float
    tool_tokens_per_session: float
    """Mean over the 15-40-turn sessions of the sum over all their calls."""
    tool_tokens_per_task: dict[str, float]
    """Mean per task, by kind (single, multi, session)."""
    calls_per_turn: float
    prompt_tokens_per_call: float
    """Other fixed prompt text the strategy adds (scope layers, gateway instructions)."""
    total_tool_tokens: int
    counters: dict[str, int] = field(default_factory=dict)


@dataclass
class SimulationResult:
    """Everything `simulate` reports."""

    seed: int
    tokenizer: str
    n_tools: int
    n_tasks: int
    tasks_by_kind: dict[str, int]
    turns: int
    profile: list[dict[str, Any]]
    eager_tokens_per_call: int
    strategies: list[StrategyFigures]
    specs: list[ToolSpec] = field(repr=False, default_factory=list)
    tasks: list[Task] = field(repr=False, default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able figures (without the catalog and the tasks)."""
        return {
            "seed": self.seed,
            "tokenizer": self.tokenizer,
            "n_tools": self.n_tools,
            "n_tasks": self.n_tasks,
            "tasks_by_kind": self.tasks_by_kind,
            "turns": self.turns,
            "profile": self.profile,
            "eager_tokens_per_call": self.eager_tokens_per_call,
            "paper": {
                "eager_per_turn": PAPER_EAGER_PER_TURN,
                "gated_per_turn": PAPER_GATED_PER_TURN,
            },
            "strategies": {
                s.name: {k: v for k, v in s.__dict__.items() if k != "name"}
                for s in self.strategies
            },
        }


def _figures(strategy: Strategy, tasks: Sequence[Task], traces: Sequence[Trace]) -> StrategyFigures:
    calls = [c for t in traces for turn in t.turns for c in turn]
    turns = [sum(c[0] for c in turn) for t in traces for turn in t.turns]
    per_task: dict[str, list[int]] = {}
    for task, trace in zip(tasks, traces, strict=True):
        per_task.setdefault(task.kind, []).append(sum(c[0] for turn in trace.turns for c in turn))
    return StrategyFigures(
        name=strategy.name,
        description=strategy.description,
        tool_tokens_per_call=statistics.fmean(c[0] for c in calls),
        tool_tokens_per_turn=statistics.fmean(turns),
        tool_tokens_per_session=statistics.fmean(per_task.get("session", [0])),
        tool_tokens_per_task={k: statistics.fmean(v) for k, v in per_task.items()},
        calls_per_turn=len(calls) / len(turns),
        prompt_tokens_per_call=statistics.fmean(c[1] for c in calls),
        total_tool_tokens=sum(c[0] for c in calls),
        counters=dict(strategy.counters),
    )


def _rankers(ranker: Any, cache: Any) -> tuple[Any, Any]:
    """The gates' ranker and the gateway search's, over one encoder whose query vectors are
    memoized for the run (every strategy replays the same user turns; one model in memory)."""
    if ranker not in ("default", "hybrid", "dense"):
        return ranker, ranker
    from attention_scoping.gating.encoders import EncoderUnavailableError, shared_minilm
    from attention_scoping.gating.ranking import build_ranker
    from attention_scoping_lab.bench.vectors import MemoEncoder

    try:
        encoder = MemoEncoder(shared_minilm())
    except EncoderUnavailableError:
        return ranker, ranker
    return (
        build_ranker(ranker, cache, encoder=encoder),
        build_ranker(ranker, cache, encoder=encoder),
    )


def run_simulation(
    *,
    seed: int = 0,
    n_tasks: int = 500,
    counter: TokenCounter | None = None,
    ranker: Any = "default",
    cache: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SimulationResult:
    """Build the seeded catalog and tasks, play eager, scoped, gated (shipped defaults, whose
    `auto` summary pool fits this catalog, and with the pool off: schemas only) and gateway,
    and summarize.

    `ranker` is the gate's and the gateway search's ranker (default: the shipped one).
    """
    c = counter or get_counter()
    specs = build_catalog(seed, c)
    tasks = build_tasks(seed, n_tasks)
    from attention_scoping_lab.bench.vectors import warm_vectors

    strategies: list[Strategy] = [Eager(specs, c), Scoped(specs, c)]
    gate_ranker, search_ranker = _rankers(ranker, cache)
    gated = Gated(specs, c, ranker=gate_ranker, cache=cache)
    warm_vectors(gated.gate.index.ranker, specs, progress)
    strategies.append(gated)
    strategies.append(
        Gated(
            specs,
            c,
            summary_pool="off",
            ranker=gate_ranker,  # the same catalog in the same order: one fit, one ranking
            cache=cache,
            name="gated, no pool",
            description="the gate with its summary pool off: top-k schemas only",
        )
    )
    strategies.append(Gateway(specs, c, search_ranker))
    figures = [_figures(s, tasks, play_all(s, tasks, progress)) for s in strategies]
    by_server: dict[str, list[int]] = {}
    for spec in specs:
        tokens = c.count(json.dumps(spec.provider_schema(), ensure_ascii=False))
        by_server.setdefault(spec.server or "other", []).append(tokens)
    profile = [
        {
            "server": server,
            "tools": len(sizes),
            "paper_tokens_per_tool": PAPER_PROFILE[server][1],
            "tokens_per_tool": round(statistics.fmean(sizes), 1),
            "tokens": sum(sizes),
        }
        for server, sizes in by_server.items()
    ]
    kinds: dict[str, int] = {}
    for task in tasks:
        kinds[task.kind] = kinds.get(task.kind, 0) + 1
    return SimulationResult(
        seed=seed,
        tokenizer=c.label,
        n_tools=len(specs),
        n_tasks=len(tasks),
        tasks_by_kind=kinds,
        turns=sum(len(t.turns) for t in tasks),
        profile=profile,
        eager_tokens_per_call=strategies[0].tokens,  # type: ignore[attr-defined]
        strategies=figures,
        specs=specs,
        tasks=tasks,
    )


def write_json(result: SimulationResult, path: str | Path) -> None:
    """Write the figures as JSON."""
    write_figures_json(result, path)


def export(result: SimulationResult, directory: str | Path) -> list[Path]:
    """Write the catalog and the single- and multi-step requests as labelled queries, in the
    shared formats, so `bench` and `audit` can run on the simulated catalog."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    catalog = root / f"catalog_sim120_seed{result.seed}.jsonl"
    queries = root / f"queries_sim120_seed{result.seed}.jsonl"
    catalog.write_text(to_jsonl(result.specs), encoding="utf-8")
    lines = []
    for task in result.tasks:
        if task.kind == "session":
            continue
        turn = task.turns[0]
        record = {
            "id": task.id,
            "query": turn.text,
            "gold": list(dict.fromkeys(turn.tools)),
            "gold_ids": list(dict.fromkeys(turn.tools)),
            "catalog": catalog.name,
            "source_category": task.kind,
            "state": task.state,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [catalog, queries]
