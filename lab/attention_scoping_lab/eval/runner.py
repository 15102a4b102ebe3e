"""Run a suite's tasks under several strategies against one model, concurrently and resumably."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from attention_scoping.textcalls.middleware import message_text
from attention_scoping_lab.eval.judging import judged, write_tools
from attention_scoping_lab.eval.pricing import CallPricer, TokenPrices
from attention_scoping_lab.eval.recorder import EvalRecorder, schemas_of
from attention_scoping_lab.eval.results import (
    EvalResult,
    ResultsWriter,
    TaskResult,
    finished_results,
    stored_results,
    task_result,
)
from attention_scoping_lab.eval.retry import EndpointRejected, RetryPolicy
from attention_scoping_lab.eval.strategies import STRATEGIES, StrategyOptions
from attention_scoping_lab.eval.suite import Suite
from attention_scoping_lab.eval.tasks import EvalTask
from attention_scoping_lab.eval.transcript import Transcript

Progress = Callable[[str, int, int], None]


@dataclass
class EvalOptions:
    """How to run: everything but the suite, the strategies and the model.

    Attributes:
        model_name: The model id (recorded with every result).
        base_url: Where the model is served (recorded in the report).
        prices: Price model for the billed cost.
        parse_text_calls: Convert text tool calls naming an offered tool.
        self_heal: Put `HesitationMiddleware` (the package's stall nudge, and under scoping
            the matched tools' hint) and `RepeatedCallMiddleware` (a repeated identical call
            gets the earlier result instead of running) just outside the recorder in every
            strategy, so a nudged retry is counted as a model call and the hint's tokens as
            input.
        concurrency: Tasks in flight at once.
        max_cost: Stop starting tasks once the next one could exceed this many USD.
        max_steps: Model calls per task before it is ended.
        retry: Retries of transient endpoint errors.
        results_path: JSON-lines file every finished task is appended to.
        resume: Keep the finished tasks of `results_path` and run only the others.
        strategy_options: Ranker and k of the gate.
        before_task: Called before every task starts (e.g. `llama_slots.slot_eraser`, which
            empties a local server's cache so each task starts from the same state).
    """

    model_name: str
    base_url: str = ""
    prices: CallPricer = field(default_factory=TokenPrices)
    parse_text_calls: bool = False
    self_heal: bool = False
    digest_turns: bool = False
    concurrency: int = 1
    max_cost: float | None = None
    max_steps: int = 8
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    results_path: Path | None = None
    resume: bool = False
    strategy_options: StrategyOptions = field(default_factory=StrategyOptions)
    before_task: Callable[[], None] | None = None


class _Budget:
    """Spent USD so far and whether another task fits under `max_cost`."""

    def __init__(self, max_cost: float | None) -> None:
        self.max_cost = max_cost
        self.spent = 0.0
        self.dearest = 0.0
        self.in_flight = 0
        self.lock = threading.Lock()

    def admit(self) -> bool:
        with self.lock:
            if self.max_cost is None:
                self.in_flight += 1
                return True
            projected = self.spent + self.dearest * (self.in_flight + 1)
            if projected > self.max_cost or self.spent >= self.max_cost:
                return False
            self.in_flight += 1
            return True

    def settle(self, cost: float) -> None:
        with self.lock:
            self.in_flight -= 1
            self.spent += cost
            self.dearest = max(self.dearest, cost)


def _history(task: EvalTask) -> list[BaseMessage]:
    """The conversation a task starts from (before its first turn)."""
    return [HumanMessage(t) if role == "user" else AIMessage(t) for role, t in task.history]


def _answer(state: Any) -> str:
    """What the user got from a turn: the text of its last reply ("" when the turn ended on
    anything else, e.g. a call nothing answered)."""
    messages = state.get("messages") if isinstance(state, dict) else None
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and not last.tool_calls:
        return message_text(last)
    return ""


def _run_task(agent: Any, recorder: EvalRecorder, task: EvalTask) -> Transcript:
    thread_id = f"eval-{uuid.uuid4().hex}"
    transcript = Transcript(task)
    recorder.register(thread_id, transcript)
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    try:
        for i, turn in enumerate(task.turns):
            transcript.begin_turn(i)
            first = _history(task) if i == 0 else []
            update: dict[str, Any] = {"messages": [*first, HumanMessage(turn)]}
            if i == 0 and task.state:
                update.update(task.state)
            transcript.add_answer(_answer(agent.invoke(update, config=config)))
    finally:
        recorder.release(thread_id)
    return transcript


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


def _plan(
    suite: Suite, strategies: Sequence[str], done: set[tuple[str, str]], result: EvalResult
) -> list[tuple[str, EvalTask]]:
    jobs: list[tuple[str, EvalTask]] = []
    for name in strategies:
        strategy = STRATEGIES[name]
        if strategy.needs_scopes and not suite.scopes:
            result.skipped[name] = f"suite {suite.name!r} has no scopes"
            continue
        jobs.extend((name, t) for t in suite.tasks if (name, t.id) not in done)
    return jobs


def _agents(
    suite: Suite, strategies: Sequence[str], model: Any, options: EvalOptions, result: EvalResult
) -> dict[str, tuple[Any, EvalRecorder]]:
    schemas = schemas_of(suite.tools)
    agents: dict[str, tuple[Any, EvalRecorder]] = {}
    for name in strategies:
        if name in result.skipped:
            continue
        recorder = EvalRecorder(
            schemas,
            parse_text_calls=options.parse_text_calls,
            retry=options.retry,
            max_steps=options.max_steps,
        )
        tail: list[Any] = [recorder]
        if options.self_heal:
            from attention_scoping.hesitation.middleware import HesitationMiddleware
            from attention_scoping.hesitation.repeats import RepeatedCallMiddleware

            tail[:0] = [HesitationMiddleware(emit_events=False), RepeatedCallMiddleware()]
        if options.digest_turns:
            from attention_scoping.history import TurnDigestMiddleware

            tail.insert(len(tail) - 1, TurnDigestMiddleware())
        try:
            strategy_options = replace(
                options.strategy_options, parse_text_calls=options.parse_text_calls
            )
            agent = STRATEGIES[name].build(suite, model, tail, strategy_options)
        except (ImportError, ValueError) as exc:
            result.skipped[name] = _one_line(exc)
            continue
        agents[name] = (agent, recorder)
    return agents


def run_eval(
    suite: Suite,
    strategies: Sequence[str],
    model: Any,
    options: EvalOptions,
    progress: Progress | None = None,
) -> EvalResult:
    """Run every (strategy, task) pair; returns the results (also appended to the file).

    Raises:
        KeyError: An unknown strategy name.
        EndpointRejected: The endpoint refused the key (the run stops at once).
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        msg = f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}"
        raise KeyError(msg)
    result = EvalResult(
        suite.name,
        options.model_name,
        options.base_url,
        list(strategies),
        notes=suite.notes,
        parse_text_calls=options.parse_text_calls,
        self_heal=options.self_heal,
        digest_turns=options.digest_turns,
    )
    task_ids = {t.id for t in suite.tasks}
    path = options.results_path
    stored = stored_results(path) if path is not None else []  # read once
    kept: list[TaskResult] = []
    if options.resume:
        kept = [
            r
            for r in finished_results(stored, options.model_name)
            if r.strategy in strategies and r.task in task_ids
        ]
    result.results.extend(kept)
    jobs = _plan(suite, strategies, {(r.strategy, r.task) for r in kept}, result)
    agents = _agents(suite, strategies, model, options, result)
    jobs = [(s, t) for s, t in jobs if s in agents]
    writer = ResultsWriter(path, _rerun(options.model_name, jobs))
    with suite.environment():
        _execute(jobs, agents, options, result, writer, progress, write_tools(suite.tools))
    order = {(s, t.id): i for i, (s, t) in enumerate(_all_pairs(suite, strategies))}
    result.results.sort(key=lambda r: order.get((r.strategy, r.task), len(order)))
    return result


def _rerun(model: str, jobs: Sequence[tuple[str, EvalTask]]) -> Callable[[TaskResult], bool]:
    """The results the run replaces in the results file: `model`'s of the tasks about to run.
    Other strategies' and other models' results stay, so runs made one strategy at a time
    (each on a fresh server) build up one file."""
    rerun = {(s, t.id) for s, t in jobs}
    return lambda r: r.model == model and (r.strategy, r.task) in rerun


def _all_pairs(suite: Suite, strategies: Sequence[str]) -> Iterator[tuple[str, EvalTask]]:
    for name in strategies:
        for task in suite.tasks:
            yield name, task


def _execute(
    jobs: Sequence[tuple[str, EvalTask]],
    agents: dict[str, tuple[Any, EvalRecorder]],
    options: EvalOptions,
    result: EvalResult,
    writer: ResultsWriter,
    progress: Progress | None,
    writing: frozenset[str] = frozenset(),
) -> None:
    budget = _Budget(options.max_cost)
    totals = {name: sum(1 for s, _ in jobs if s == name) for name in agents}
    counts = dict.fromkeys(agents, 0)
    pending: dict[Future[TaskResult], str] = {}
    queue = list(jobs)

    def work(name: str, task: EvalTask) -> TaskResult:
        agent, recorder = agents[name]
        if options.before_task is not None:
            options.before_task()
        try:
            transcript = _run_task(agent, recorder, task)
            done = task_result(name, options.model_name, transcript, options.prices)
            return judged(done, transcript, writing)
        except EndpointRejected:
            raise
        except Exception as exc:
            return task_result(
                name, options.model_name, Transcript(task), options.prices, _one_line(exc)
            )

    with ThreadPoolExecutor(max_workers=max(options.concurrency, 1)) as pool:
        while queue or pending:
            while queue and len(pending) < max(options.concurrency, 1) and result.stopped is None:
                if not budget.admit():
                    result.stopped = (
                        f"--max-cost {options.max_cost:g} USD reached after "
                        f"{budget.spent:.4f} USD; {len(queue)} task runs not started"
                    )
                    break
                name, task = queue.pop(0)
                pending[pool.submit(work, name, task)] = name
            if result.stopped is not None and not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                name = pending.pop(future)
                try:
                    task_res = future.result()
                except EndpointRejected:
                    for other in pending:
                        other.cancel()
                    raise
                budget.settle(task_res.cost)
                result.results.append(task_res)
                writer.write(task_res)
                counts[name] += 1
                if progress is not None:
                    progress(name, counts[name], totals[name])
