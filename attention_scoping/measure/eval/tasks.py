"""Eval tasks and their checkable outcomes (framework-free).

A task is one to a few user turns plus what must happen: tool calls (by name, with argument
values and result snippets that must appear), in order. The check reads the tool calls made and
what the tools returned, never the model's free text, so it does not depend on wording.

Task files are JSON: `{"tasks": [{"id", "turns": [...], "expect": [{"tool", "args",
"mentions", "result_contains"}], "tags": [...]}]}` (see `suites/example.json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_scoping.core.text import string_tuple


class TaskFileError(ValueError):
    """A task file that cannot be read; the message names the file and the task."""


@dataclass(frozen=True)
class Expect:
    """One tool call a task needs.

    Attributes:
        tools: Acceptable tool names (any one of them).
        args: Argument values the call must carry: strings match case-insensitively as
            substrings, numbers within 1e-6 relative, other values exactly.
        mentions: Strings that must appear (case-insensitive) somewhere in the arguments.
        result_contains: Strings that must appear in what the tool returned.
    """

    tools: tuple[str, ...]
    args: Mapping[str, Any] = field(default_factory=dict, hash=False)
    mentions: tuple[str, ...] = ()
    result_contains: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalTask:
    """A task: user turns (one conversation) and the tool calls that solve it, in order.

    `single_call` tasks are judged on the first domain call alone, and the agent stops after it
    (tool-choice suites: no answer turn is paid for).
    """

    id: str
    turns: tuple[str, ...]
    expect: tuple[Expect, ...]
    tags: tuple[str, ...] = ()
    single_call: bool = False
    state: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ToolCallMade:
    """One tool call as it ran: the domain tool (gateway calls unwrapped) and its outcome."""

    name: str
    args: Mapping[str, Any]
    ok: bool
    result: str = ""


def _matches_value(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str):
        return expected.casefold() in str(actual).casefold()
    if isinstance(expected, bool) or expected is None:
        return bool(expected == actual)
    if isinstance(expected, int | float):
        try:
            value = float(actual)
        except (TypeError, ValueError):
            return False
        return math.isclose(value, float(expected), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _matches_value(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def satisfies(call: ToolCallMade, expect: Expect) -> bool:
    """Whether one call that ran fulfils one expectation."""
    if call.name not in expect.tools or not call.ok:
        return False
    for key, value in expect.args.items():
        if key not in call.args or not _matches_value(value, call.args[key]):
            return False
    flat = json.dumps(call.args, ensure_ascii=False).casefold()
    if any(m.casefold() not in flat for m in expect.mentions):
        return False
    result = call.result.casefold()
    return all(snippet.casefold() in result for snippet in expect.result_contains)


def judge(task: EvalTask, calls: Sequence[ToolCallMade]) -> bool:
    """Task success: the expectations are met in order by calls that ran without error.

    Extra calls in between are allowed (a model may look something up twice); a `single_call`
    task is judged on its first call only.
    """
    if task.single_call:
        return bool(calls) and bool(task.expect) and calls[0].name in task.expect[0].tools
    position = 0
    for expect in task.expect:
        while position < len(calls) and not satisfies(calls[position], expect):
            position += 1
        if position == len(calls):
            return False
        position += 1
    return True


def _strings(value: Any, where: str) -> tuple[str, ...]:
    strings = string_tuple(value)
    if strings is None:
        msg = f"{where}: expected a string or a list of strings"
        raise TaskFileError(msg)
    return strings


def _expect(raw: Any, where: str) -> Expect:
    if not isinstance(raw, Mapping) or "tool" not in raw:
        msg = f"{where}: each expectation needs a 'tool' (a name or a list of names)"
        raise TaskFileError(msg)
    args = raw.get("args") or {}
    if not isinstance(args, Mapping):
        msg = f"{where}: 'args' must be an object"
        raise TaskFileError(msg)
    return Expect(
        tools=_strings(raw["tool"], f"{where}.tool"),
        args=dict(args),
        mentions=_strings(raw.get("mentions"), f"{where}.mentions"),
        result_contains=_strings(raw.get("result_contains"), f"{where}.result_contains"),
    )


def task_from_dict(raw: Mapping[str, Any], where: str = "task") -> EvalTask:
    """One task from its JSON form; `TaskFileError` names what is wrong."""
    task_id = raw.get("id")
    if not isinstance(task_id, str) or not task_id:
        msg = f"{where}: every task needs a string 'id'"
        raise TaskFileError(msg)
    where = f"{where} {task_id!r}"
    turns = raw.get("turns", raw.get("query"))
    turns = _strings(turns, f"{where}.turns")
    if not turns:
        msg = f"{where}: needs at least one user turn"
        raise TaskFileError(msg)
    expects = raw.get("expect")
    if not isinstance(expects, list) or not expects:
        msg = f"{where}: 'expect' must list at least one tool call"
        raise TaskFileError(msg)
    return EvalTask(
        id=task_id,
        turns=turns,
        expect=tuple(_expect(e, f"{where}.expect[{i}]") for i, e in enumerate(expects)),
        tags=_strings(raw.get("tags"), f"{where}.tags"),
        single_call=bool(raw.get("single_call", False)),
        state=dict(raw.get("state") or {}),
    )


def load_tasks(path: str | Path) -> list[EvalTask]:
    """Tasks from a JSON file (`{"tasks": [...]}` or a bare list); ids must be unique."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"{path}: cannot read ({exc.strerror or exc})"
        raise TaskFileError(msg) from None
    except json.JSONDecodeError as exc:
        msg = f"{path}:{exc.lineno}: invalid JSON ({exc.msg})"
        raise TaskFileError(msg) from None
    items = data.get("tasks") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        msg = f'{path}: expected {{"tasks": [...]}} or a list of tasks'
        raise TaskFileError(msg)
    tasks = [task_from_dict(item, str(path)) for item in items]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            msg = f"{path}: duplicate task id {task.id!r}"
            raise TaskFileError(msg)
        seen.add(task.id)
    return tasks
