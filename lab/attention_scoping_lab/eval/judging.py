"""The eval's verdict on a finished task run: the tools it called and what the user got.

`results.task_result` sums a run and judges its tool calls; `judged` completes that judgement
with the answers of each turn (each must be usable, give what its turn's calls returned and
state no number nothing said: `tasks.verdict`, `answers.py`), the suite's write tools
(unrequested writes fail a task) and, for a task that needs no tool, a first choice that is right
only when no tool was called. Deterministic and offline: no model judges.
`unrequested_by_strategy` counts, per strategy, the write calls no task asked for (from the
calls every result keeps, so resumed results count too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from attention_scoping.common.blast_radius import writes
from attention_scoping_lab.eval.results import EvalResult, TaskResult
from attention_scoping_lab.eval.tasks import EvalTask, Verdict, unrequested_writes, verdict
from attention_scoping_lab.eval.transcript import Transcript


def write_tools(tools: Iterable[Any]) -> frozenset[str]:
    """Names of the tools that write (`core.blast_radius.writes`: risk, approval, MCP hints)."""
    return frozenset(t.name for t in tools if writes(t))


def judge_transcript(transcript: Transcript, writing: frozenset[str] = frozenset()) -> Verdict:
    """The verdict on one run: its calls, the tools the model asked for, each turn's answer."""
    return verdict(
        transcript.task,
        transcript.tools,
        transcript.answers,
        write_tools=writing,
        requested=transcript.requested,
    )


def judged(
    result: TaskResult, transcript: Transcript, writing: frozenset[str] = frozenset()
) -> TaskResult:
    """`result` with the full verdict as its success and its reasons as `failures`; for a task
    that needs no tool, the first choice is right when the model chose no tool."""
    task = transcript.task
    found = judge_transcript(transcript, writing)
    success = result.error is None and found.success
    first_right = result.first_tool_right
    if not task.needs_tool:
        first_right = transcript.first_choice is None
    return replace(
        result,
        success=success,
        first_tool_right=first_right,
        failures=found.failures,
        answers=tuple(transcript.answers),
        kind=task.kind,
    )


def unrequested_by_strategy(
    result: EvalResult, tasks: Iterable[EvalTask], writing: frozenset[str]
) -> dict[str, int]:
    """Per strategy that ran, the write calls its tasks did not ask for."""
    by_id: Mapping[str, EvalTask] = {t.id: t for t in tasks}
    counts: dict[str, int] = {}
    for name, rows in result.ran().items():
        counts[name] = sum(
            len(unrequested_writes(by_id[r.task], (c[0] for c in r.calls), writing))
            for r in rows
            if r.task in by_id
        )
    return counts
