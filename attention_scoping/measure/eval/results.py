"""Per-task results, per-strategy figures, and the results file that makes runs resumable."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from attention_scoping.measure.eval.pricing import PriceModel
from attention_scoping.measure.eval.tasks import EvalTask, judge
from attention_scoping.measure.eval.transcript import Transcript


@dataclass(frozen=True)
class TaskResult:
    """One task under one strategy (a line of the results file)."""

    strategy: str
    task: str
    model: str
    success: bool
    error: str | None = None
    first_tool_right: bool = False
    first_tool: str | None = None
    hallucinated: int = 0
    invalid_args: int = 0
    text_call_replies: int = 0
    """Model replies whose tool call came as text."""
    converted: int = 0
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    call_seconds: tuple[float, ...] = ()
    cost: float = 0.0
    retries: int = 0
    tags: tuple[str, ...] = ()
    last_text: str = ""
    """The model's last reply (to read why a task failed; the check never uses it)."""
    calls: tuple[tuple[str, dict[str, Any], bool], ...] = ()
    """The domain tool calls that ran: (tool, arguments, ran without error)."""

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TaskResult:
        """Back from `to_json` (unknown keys ignored)."""
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        for key in ("call_seconds", "tags"):
            known[key] = tuple(known.get(key) or ())
        known["calls"] = tuple(
            (str(c[0]), dict(c[1]), bool(c[2])) for c in known.get("calls") or ()
        )
        return cls(**known)


def task_result(
    strategy: str,
    model: str,
    transcript: Transcript,
    prices: PriceModel,
    error: str | None = None,
) -> TaskResult:
    """Judge a transcript and sum its calls."""
    task: EvalTask = transcript.task
    calls = transcript.calls
    first = transcript.first_choice
    return TaskResult(
        strategy=strategy,
        task=task.id,
        model=model,
        success=error is None and judge(task, transcript.tools),
        error=error,
        first_tool_right=first is not None and bool(task.expect) and first in task.expect[0].tools,
        first_tool=first,
        hallucinated=transcript.hallucinated,
        invalid_args=transcript.invalid_args,
        text_call_replies=sum(1 for c in calls if c.text_calls),
        converted=sum(c.converted for c in calls),
        steps=len(calls),
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        cached_tokens=sum(c.cached_tokens for c in calls),
        call_seconds=tuple(round(c.seconds, 3) for c in calls),
        cost=sum(prices.cost(c.input_tokens, c.output_tokens, c.cached_tokens) for c in calls),
        retries=sum(c.retries for c in calls),
        tags=task.tags,
        last_text=transcript.last_text,
        calls=tuple((c.name, dict(c.args), c.ok) for c in transcript.tools),
    )


@dataclass(frozen=True)
class StrategyFigures:
    """Aggregates of one strategy over its tasks."""

    strategy: str
    tasks: int
    success: float
    first_tool_right: float
    wrong_first_tool: float
    """Share of tasks whose first domain call named a wrong (or invented) tool."""
    no_tool: float
    """Share of tasks where the model never called a domain tool."""
    hallucinated: int
    invalid_args: int
    text_call_replies: int
    errors: int
    steps: float
    input_tokens: float
    output_tokens: float
    cached_tokens: float
    seconds_per_call: float
    cost: float
    retries: int
    seconds_per_task: float = 0.0
    """Model-call wall time per task."""
    seconds_per_shared_task: float | None = None
    """The same over the tasks every compared strategy completed (None with one strategy, or
    when no task succeeded under all): time on the same work, which the plain mean is not when
    one strategy fails fast (an answer from memory in one short call) where another works."""


def figures(
    strategy: str, results: Sequence[TaskResult], shared: Collection[str] | None = None
) -> StrategyFigures:
    """Aggregate the results of one strategy (means are per task, time also per model call);
    `shared` names the tasks to time again as the same work (see `shared_successes`)."""
    n = len(results)
    seconds = [s for r in results for s in r.call_seconds]
    same = [sum(r.call_seconds) for r in results if shared is not None and r.task in shared]

    def share(values: Iterable[bool]) -> float:
        return sum(values) / n if n else 0.0

    def mean(values: Iterable[float]) -> float:
        items = list(values)
        return fmean(items) if items else 0.0

    return StrategyFigures(
        strategy=strategy,
        tasks=n,
        success=share(r.success for r in results),
        first_tool_right=share(r.first_tool_right for r in results),
        wrong_first_tool=share(
            r.first_tool is not None and not r.first_tool_right for r in results
        ),
        no_tool=share(r.first_tool is None for r in results),
        hallucinated=sum(r.hallucinated for r in results),
        invalid_args=sum(r.invalid_args for r in results),
        text_call_replies=sum(r.text_call_replies for r in results),
        errors=sum(1 for r in results if r.error),
        steps=mean(r.steps for r in results),
        input_tokens=mean(r.input_tokens for r in results),
        output_tokens=mean(r.output_tokens for r in results),
        cached_tokens=mean(r.cached_tokens for r in results),
        seconds_per_call=mean(seconds),
        cost=sum(r.cost for r in results),
        retries=sum(r.retries for r in results),
        seconds_per_task=mean(sum(r.call_seconds) for r in results),
        seconds_per_shared_task=fmean(same) if same else None,
    )


def shared_successes(by_strategy: Mapping[str, Sequence[TaskResult]]) -> frozenset[str] | None:
    """The tasks that succeeded under every strategy (None for fewer than two strategies)."""
    if len(by_strategy) < 2:
        return None
    done = [{r.task for r in rows if r.success} for rows in by_strategy.values()]
    return frozenset(set.intersection(*done))


@dataclass
class EvalResult:
    """Everything one eval run produced."""

    suite: str
    model: str
    base_url: str
    strategies: list[str]
    results: list[TaskResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Strategy -> why it did not run."""
    stopped: str | None = None
    """Why the run stopped early (the budget), if it did."""
    notes: str = ""
    parse_text_calls: bool = False
    self_heal: bool = False

    def by_strategy(self) -> list[StrategyFigures]:
        """Figures per strategy that ran, in the requested order."""
        ran = self.ran()
        shared = shared_successes(ran)
        return [figures(name, rows, shared) for name, rows in ran.items()]

    def ran(self) -> dict[str, list[TaskResult]]:
        """The results of each strategy that ran, in the requested order."""
        rows = {name: [r for r in self.results if r.strategy == name] for name in self.strategies}
        return {name: found for name, found in rows.items() if found}

    def shared_tasks(self) -> frozenset[str] | None:
        """The tasks every strategy that ran completed (see `shared_successes`)."""
        return shared_successes(self.ran())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary plus every task result."""
        return {
            "suite": self.suite,
            "model": self.model,
            "base_url": self.base_url,
            "parse_text_tool_calls": self.parse_text_calls,
            "self_heal": self.self_heal,
            "notes": self.notes,
            "skipped": self.skipped,
            "stopped": self.stopped,
            "strategies": [asdict(f) for f in self.by_strategy()],
            "shared_tasks": sorted(self.shared_tasks() or ()),
            "tasks": [asdict(r) for r in self.results],
        }


def stored_results(path: Path) -> list[TaskResult]:
    """Every result a results file holds, of any model (lines cut short are skipped)."""
    if not path.exists():
        return []
    out: list[TaskResult] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            out.append(TaskResult.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue  # a line cut short by an interrupted run
    return out


def finished_results(stored: Iterable[TaskResult], model: str) -> list[TaskResult]:
    """The finished results of `model` among `stored` (errored tasks are not finished)."""
    return [r for r in stored if r.model == model and r.error is None]


def read_results(path: Path, model: str) -> list[TaskResult]:
    """Finished results of `model` in a results file."""
    return finished_results(stored_results(path), model)
