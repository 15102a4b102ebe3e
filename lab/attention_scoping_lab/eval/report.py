"""The eval's outputs: a rich table, a JSON file and a chart."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from attention_scoping_lab.display import pyplot
from attention_scoping_lab.eval.results import EvalResult, StrategyFigures
from attention_scoping_lab.eval.tasks import KINDS


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def _row(f: StrategyFigures, priced: bool, unrequested: Mapping[str, int] | None) -> list[str]:
    row = [
        f.strategy,
        str(f.tasks),
        _pct(f.success),
        _pct(f.first_tool_right),
        _pct(f.wrong_first_tool),
        _pct(f.no_tool),
        str(f.hallucinated),
        str(f.invalid_args),
        str(f.text_call_replies),
        f"{f.steps:.1f}",
        f"{f.input_tokens:,.0f}",
        f"{f.output_tokens:,.0f}",
        f"{f.cached_tokens:,.0f}",
        f"{f.seconds_per_task:.1f}",
        "-" if f.seconds_per_shared_task is None else f"{f.seconds_per_shared_task:.1f}",
    ]
    if unrequested is not None:
        row.append(str(unrequested.get(f.strategy, 0)))
    if priced:
        row.append(f"{f.cost:.4f}")
    row.append(str(f.errors))
    return row


def render(
    result: EvalResult, console: Console, unrequested: Mapping[str, int] | None = None
) -> None:
    """The per-strategy table, success by kind of task, then what was skipped or stopped;
    `unrequested` (strategy -> write calls no task asked for,
    `judging.unrequested_by_strategy`) adds its column to both tables."""
    rows = result.by_strategy()
    priced = any(f.cost for f in rows)
    title = f"eval: suite {result.suite}, model {result.model}"
    if result.parse_text_calls:
        title += ", text tool calls converted"
    if result.self_heal:
        title += ", self-healing (HesitationMiddleware, RepeatedCallMiddleware)"
    if result.digest_turns:
        title += ", earlier turns as a digest (TurnDigestMiddleware)"
    table = Table(title=escape(title))
    headers = [
        "strategy",
        "tasks",
        "success",
        "1st tool ok",
        "1st tool wrong",
        "no tool",
        "halluc.",
        "bad args",
        "text calls",
        "steps",
        "in tok",
        "out tok",
        "cached",
        "s/task",
        "s/task shared",
    ]
    if unrequested is not None:
        headers.append("unreq. writes")
    if priced:
        headers.append("cost USD")
    headers.append("errors")
    table.add_column(headers[0], no_wrap=True)  # a cut name would hide which row is which
    for header in headers[1:]:
        table.add_column(header, justify="right")
    for f in rows:
        table.add_row(*_row(f, priced, unrequested))
    console.print(table)
    console.print(
        "per task: success (the expected calls made, no unrequested write, a usable answer "
        "in every turn that gives what its tools returned and states no number nothing said), "
        "first domain tool right / wrong / never called (a "
        "task that needs no tool: right when none is called), steps (model calls) "
        "and tokens; halluc. = calls to tools that do not exist, bad args = arguments failing "
        "the schema, text calls = replies with a tool call written as text; s/task = wall time "
        "of the model calls per task (per call: --json)"
        + ("; unreq. writes = calls of write tools no task asked for" if unrequested else "")
    )
    _render_kinds(rows, console, unrequested)
    shared = result.shared_tasks()
    if shared is not None:
        console.print(
            f"s/task shared = per task over the {len(shared)} tasks every strategy here "
            "completed: time on the same work"
        )
    if result.notes:
        console.print(f"suite: {escape(result.notes)}")
    for name, reason in result.skipped.items():
        console.print(f"skipped {escape(name)}: {escape(reason)}")
    errors = [r for r in result.results if r.error]
    for r in errors[:5]:
        console.print(f"error in {escape(r.strategy)}/{escape(r.task)}: {escape(r.error or '')}")
    if len(errors) > 5:
        console.print(f"... and {len(errors) - 5} more errors (see the results file)")
    if result.stopped:
        console.print(f"[yellow]stopped:[/] {escape(result.stopped)}")


def _share(f: StrategyFigures, kind: str) -> str:
    n = f.tasks_by_kind.get(kind, 0)
    if not n:
        return "-"
    share = f.success_by_kind[kind]
    return f"{_pct(share)} ({round(share * n)}/{n})"


def _render_kinds(
    rows: list[StrategyFigures], console: Console, unrequested: Mapping[str, int] | None
) -> None:
    """Success split by task kind, next to success on the whole set and the unrequested
    writes: what a default is chosen on (whole set, and messages that need no tool)."""
    kinds = [k for k in KINDS if any(f.tasks_by_kind.get(k) for f in rows)]
    kinds += sorted({k for f in rows for k in f.tasks_by_kind} - set(kinds))
    if not kinds:
        return
    table = Table(title="success by kind of task")
    table.add_column("strategy", no_wrap=True)
    for header in ["all", *(KINDS.get(k, k) for k in kinds)]:
        table.add_column(header, justify="right")
    if unrequested is not None:
        table.add_column("unreq. writes", justify="right")
    for f in rows:
        cells = [f.strategy, f"{_pct(f.success)} ({round(f.success * f.tasks)}/{f.tasks})"]
        cells += [_share(f, k) for k in kinds]
        if unrequested is not None:
            cells.append(str(unrequested.get(f.strategy, 0)))
        table.add_row(*cells)
    console.print(table)


def write_json(
    result: EvalResult, path: str | Path, unrequested: Mapping[str, int] | None = None
) -> None:
    """Summary and every task result as one JSON document (with `unrequested`, the write calls
    no task asked for per strategy, as `unrequested_write_calls`; each strategy's
    `success_by_kind` and `tasks_by_kind` split its success by kind of task)."""
    data = result.to_dict()
    if unrequested is not None:
        data["unrequested_write_calls"] = dict(unrequested)
    Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def plot(result: EvalResult, path: str | Path) -> None:
    """Task success and input tokens per task, one bar per strategy."""
    plt = pyplot()
    rows = result.by_strategy()
    names = [f.strategy for f in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(names, [100 * f.success for f in rows], color="#4c72b0")
    left.set_ylabel("task success (%)")
    left.set_ylim(0, 100)
    right.bar(names, [f.input_tokens for f in rows], color="#dd8452")
    right.set_ylabel("input tokens per task")
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=30)
    fig.suptitle(f"{result.suite} suite, {result.model}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
