"""Per-task results, per-strategy figures, and the results file that makes runs resumable."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from attention_scoping.observe.jsonl import (
    JsonLine,
    JsonLinesError,
    append_line,
    read_json_lines,
    rewrite_lines,
)
from attention_scoping_lab.args import UsageError
from attention_scoping_lab.eval.pricing import CallPricer
from attention_scoping_lab.eval.tasks import JUDGE_VERSION, KINDS, EvalTask, judge
from attention_scoping_lab.eval.transcript import Transcript


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
    kind: str = ""
    """The task's kind (`tasks.KINDS`; empty in results written before kinds)."""
    failures: tuple[str, ...] = ()
    """Why the judge failed the task, in words (empty on success)."""
    answers: tuple[str, ...] = ()
    """The reply that ended each user turn, whole (to read what the judge read)."""
    judge: int = JUDGE_VERSION
    """The judge that judged it (`tasks.JUDGE_VERSION`; 1 for results written before)."""

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TaskResult:
        """Back from `to_json` (unknown keys ignored).

        Raises:
            TypeError: `raw` is not an object.
            ValueError: a field is missing or of the wrong type (named).
        """
        if not isinstance(raw, dict):
            msg = f"expected a JSON object (one task result), got {_kind(raw)}"
            raise TypeError(msg)
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        missing = [k for k in ("strategy", "task", "model", "success") if k not in known]
        if missing:
            msg = f"a task result needs {', '.join(map(repr, missing))}"
            raise ValueError(msg)
        for key, value in known.items():
            _check_field(key, value)
        known.setdefault("judge", 1)
        for key in ("call_seconds", "tags", "failures", "answers"):
            known[key] = tuple(known.get(key) or ())
        known["calls"] = tuple((c[0], dict(c[1]), c[2]) for c in known.get("calls") or ())
        return cls(**known)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _call(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 3
        and isinstance(value[0], str)
        and isinstance(value[1], dict)
        and isinstance(value[2], bool)
    )


def _strings(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(x, str) for x in value)


_FIELD_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "strategy": ("a string", lambda v: isinstance(v, str)),
    "task": ("a string", lambda v: isinstance(v, str)),
    "model": ("a string", lambda v: isinstance(v, str)),
    "last_text": ("a string", lambda v: isinstance(v, str)),
    "error": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "first_tool": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "kind": ("a string", lambda v: isinstance(v, str)),
    "success": ("true or false", lambda v: isinstance(v, bool)),
    "first_tool_right": ("true or false", lambda v: isinstance(v, bool)),
    "cost": ("a finite number", _number),
    "call_seconds": (
        "a list of finite numbers",
        lambda v: isinstance(v, list | tuple) and all(_number(x) for x in v),
    ),
    "tags": ("a list of strings", _strings),
    "failures": ("a list of strings", _strings),
    "answers": ("a list of strings", _strings),
    "calls": (
        "a list of [tool, arguments object, ran] triples",
        lambda v: isinstance(v, list | tuple) and all(_call(c) for c in v),
    ),
}
_COUNTS = (
    "hallucinated",
    "invalid_args",
    "text_call_replies",
    "converted",
    "steps",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "retries",
    "judge",
)


def _check_field(key: str, value: Any) -> None:
    """Refuse a field of the wrong type (a field without a rule here is taken as it is)."""
    if key in _COUNTS:
        what, ok = "a whole number >= 0", isinstance(value, int) and not isinstance(value, bool)
        ok = ok and value >= 0
    elif key in _FIELD_CHECKS:
        what, check = _FIELD_CHECKS[key]
        ok = check(value)
    else:
        return
    if not ok:
        shown = repr(value) if isinstance(value, int | float | bool | type(None)) else _kind(value)
        msg = f"{key!r} must be {what}, got {shown}"
        raise ValueError(msg)


def task_result(
    strategy: str,
    model: str,
    transcript: Transcript,
    prices: CallPricer,
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
        kind=task.kind,
        answers=tuple(transcript.answers),
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
    tasks_by_kind: dict[str, int] = field(default_factory=dict)
    """Tasks per kind (`tasks.KINDS` order; kinds with no task left out)."""
    success_by_kind: dict[str, float] = field(default_factory=dict)
    """Share of each kind's tasks that succeeded: choose a default on the whole set *and* on
    the messages that need no tool."""


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
        **_by_kind(results),
    )


def _by_kind(results: Sequence[TaskResult]) -> dict[str, Any]:
    """`tasks_by_kind` and `success_by_kind` of `results` (known kinds first, then others)."""
    kinds = [k for k in KINDS if any(r.kind == k for r in results)]
    kinds += sorted({r.kind for r in results if r.kind and r.kind not in KINDS})
    rows = {k: [r for r in results if r.kind == k] for k in kinds}
    return {
        "tasks_by_kind": {k: len(v) for k, v in rows.items()},
        "success_by_kind": {k: sum(r.success for r in v) / len(v) for k, v in rows.items()},
    }


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
    digest_turns: bool = False

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
            "digest_turns": self.digest_turns,
            "notes": self.notes,
            "skipped": self.skipped,
            "stopped": self.stopped,
            "strategies": [asdict(f) for f in self.by_strategy()],
            "shared_tasks": sorted(self.shared_tasks() or ()),
            "tasks": [asdict(r) for r in self.results],
        }


class ResultsFileError(UsageError, ValueError):
    """A results file with a line that is not a task result: one line naming the file and the
    line (the CLI prints it as `error: ...` and exits 2)."""


def _parsed(lines: Sequence[JsonLine], name: str) -> list[tuple[JsonLine, TaskResult]]:
    out = []
    for line in lines:
        try:
            out.append((line, TaskResult.from_dict(line.value)))
        except (TypeError, ValueError) as exc:
            msg = f"{name}: line {line.number} is not a task result: {exc}"
            raise ResultsFileError(msg) from None
    return out


def stored_results(path: Path) -> list[TaskResult]:
    """Every result a results file holds, of any model (a last line cut short by an
    interrupted run is skipped).

    Raises:
        ResultsFileError: a line that is not a task result (too deep, too big, not UTF-8,
            not JSON before the last line, a field of the wrong type), named with its number.
    """
    try:
        lines = read_json_lines(path, cut_tail=True)
    except JsonLinesError as exc:
        raise ResultsFileError(str(exc)) from None
    except OSError as exc:
        msg = f"cannot read the results file {str(path)!r}: {exc.strerror or exc}"
        raise ResultsFileError(msg) from None
    return [result for _, result in _parsed(lines, str(path))]


def finished_results(stored: Iterable[TaskResult], model: str) -> list[TaskResult]:
    """The finished results of `model` among `stored`: errored tasks, and tasks an older judge
    judged (`tasks.JUDGE_VERSION`), are not finished."""
    return [r for r in stored if r.model == model and r.error is None and r.judge == JUDGE_VERSION]


class ResultsWriter:
    """The results file of a run, shared safely with other runs (other processes).

    On start, drops the results `replaced` selects (the runs about to be redone) in one locked,
    atomic rewrite of what the file holds at that moment, so results other runs appended
    since this run read the file are kept. Then appends each result as one whole line under the
    same lock (thread- and process-safe; see `attention_scoping.observe.jsonl`).
    """

    def __init__(
        self, path: Path | None, replaced: Callable[[TaskResult], bool] = lambda _r: False
    ) -> None:
        """Rewrite `path` without the results `replaced` selects (None: no file).

        Raises:
            ResultsFileError: the file holds a bad line (nothing is rewritten).
        """
        self.path = path
        if path is None:
            return

        def keep(lines: Sequence[JsonLine]) -> list[JsonLine]:
            return [line for line, r in _parsed(lines, str(path)) if not replaced(r)]

        try:
            rewrite_lines(path, keep)
        except JsonLinesError as exc:
            raise ResultsFileError(str(exc)) from None

    def write(self, result: TaskResult) -> None:
        """Append one result."""
        if self.path is not None:
            append_line(self.path, result.to_json().encode("utf-8", "replace") + b"\n")
