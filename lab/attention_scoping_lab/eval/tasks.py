"""Eval tasks and their checkable outcomes (framework-free).

A task is one to a few user turns plus what must happen: tool calls (by name, with argument
values and result snippets that must appear), in order (or in any order), and what the user must
get: every turn ends in a usable answer (text, not an unanswered call written as JSON or as code)
that gives what its tool calls returned (`answers.py`: each expectation's `gives`, or a one-line
result's value), states no number that nothing said (a contradiction, or a value made up after a
tool failed), and holds the task's `answer_contains` snippets. Numbers are compared as numbers
(`numbers.snippet_in`): "3600" is not 36, "about 38 °C" is 37.78. A task with `"expect": []`
needs no tool and fails when the model calls one; `must_not_call` names tools the task must not
call (writes nobody asked for), and every call of a write tool the task did not expect counts as
an unrequested write. Each task has a `kind` (`KINDS`), given or read from its shape.

Task files are JSON: `{"tasks": [{"id", "turns": [...], "expect": [{"tool", "args",
"mentions", "result_contains", "gives", "fails"}], "answer_contains", "must_not_call", "history",
"tags", "kind", "split", "any_order"}]}` (see `suites/example.json` and `suites/defaults.json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_scoping.common.text import string_tuple
from attention_scoping.textcalls import find_text_calls
from attention_scoping_lab.eval.answers import (
    TemplateError,
    code_call,
    compile_template,
    required_facts,
    unaccounted_numbers,
)
from attention_scoping_lab.eval.numbers import snippet_in
from attention_scoping_lab.unique import first_repeated

HISTORY_ROLES = ("user", "assistant")
EVAL_MARKER = "(eval:"
"""How the eval's own stop replies begin (a step budget spent): never a usable answer."""
JUDGE_VERSION = 2
"""Which judge a result was judged by: 1 checked calls and `answer_contains`; 2 also reads each
turn's answer against the tool results (`answers.py`). `eval --resume` re-runs older results."""
SHOWN = 5
"""Invented numbers named per failure."""
KINDS = {
    "tool": "tool needed",
    "no-tool": "no tool needed",
    "switch": "topic switch",
    "two-tools": "two tools",
}
"""What a task asks of the agent, by kind (the report splits success by it): one request that
needs a tool; a message that needs none; a conversation whose later turn needs another scope;
two tools in one request."""


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
        result_contains: Strings that must appear in what the tool returned (numbers in them
            compared as numbers).
        gives: What of the call's result the answer of its turn must state: one entry per
            fact, each a tuple of `answers` templates (any of them); None: the value of a
            one-line result, if it has one.
        fails: The call must run and return an error (the answer must then invent nothing).
    """

    tools: tuple[str, ...]
    args: Mapping[str, Any] = field(default_factory=dict, hash=False)
    mentions: tuple[str, ...] = ()
    result_contains: tuple[str, ...] = ()
    gives: tuple[tuple[str, ...], ...] | None = None
    fails: bool = False


@dataclass(frozen=True)
class EvalTask:
    """A task: user turns (one conversation) and the tool calls that solve it, in order.

    `single_call` tasks are judged on the first domain call alone, and the agent stops after it
    (tool-choice suites: no answer turn is paid for). An empty `expect` is a task that needs no
    tool (thanks, a greeting, a question the conversation answers): any tool call fails it.

    Attributes:
        answer_contains: Snippets the answers the user gets must hold (numbers as numbers).
        must_not_call: Tools the task must not call (say, a write nobody asked for).
        history: Earlier messages of the conversation, `(role, text)` with role `user` or
            `assistant`, given to the agent with the first turn as if said before it (the model
            is not asked to produce them).
        declared_kind: The task's kind as its file gives it (`kind`; empty: read from its
            shape).
        split: Which part of a suite the task belongs to (say `tuning` or `report`).
        any_order: The expectations may be met in any order (two independent requests).
    """

    id: str
    turns: tuple[str, ...]
    expect: tuple[Expect, ...]
    tags: tuple[str, ...] = ()
    single_call: bool = False
    state: Mapping[str, Any] = field(default_factory=dict, hash=False)
    answer_contains: tuple[str, ...] = ()
    must_not_call: tuple[str, ...] = ()
    history: tuple[tuple[str, str], ...] = ()
    declared_kind: str = ""
    split: str = ""
    any_order: bool = False

    @property
    def needs_tool(self) -> bool:
        """Whether the task needs a tool at all."""
        return bool(self.expect)

    @property
    def kind(self) -> str:
        """One of `KINDS`: as declared, else no tool expected -> `no-tool`, several turns ->
        `switch`, several tools in one turn -> `two-tools`, else `tool`."""
        if self.declared_kind:
            return self.declared_kind
        if not self.expect:
            return "no-tool"
        if len(self.turns) > 1:
            return "switch"
        return "two-tools" if len(self.expect) > 1 else "tool"

    def expected_tools(self) -> frozenset[str]:
        """Every tool an expectation accepts."""
        return frozenset(name for e in self.expect for name in e.tools)


@dataclass(frozen=True)
class ToolCallMade:
    """One tool call as it ran: the domain tool (gateway calls unwrapped) and its outcome."""

    name: str
    args: Mapping[str, Any]
    ok: bool
    result: str = ""
    turn: int | None = None
    """The user turn it ran in (0-based; None: not recorded)."""


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
    """Whether one call that ran fulfils one expectation (without error, or with one when
    the expectation `fails`)."""
    if call.name not in expect.tools or call.ok == expect.fails:
        return False
    for key, value in expect.args.items():
        if key not in call.args or not _matches_value(value, call.args[key]):
            return False
    flat = json.dumps(call.args, ensure_ascii=False).casefold()
    if any(m.casefold() not in flat for m in expect.mentions):
        return False
    return all(snippet_in(snippet, call.result) for snippet in expect.result_contains)


def matched_calls(task: EvalTask, calls: Sequence[ToolCallMade]) -> list[int] | None:
    """The index of the call that meets each expectation, or None when one is not met.

    In order, each by a later call than the one before (extra calls in between are allowed: a
    model may look something up twice); with `any_order`, each by a call no other took."""
    taken: set[int] = set()
    found = []
    position = 0
    for expect in task.expect:
        start = 0 if task.any_order else position
        index = next(
            (i for i in range(start, len(calls)) if i not in taken and satisfies(calls[i], expect)),
            None,
        )
        if index is None:
            return None
        taken.add(index)
        found.append(index)
        position = index + 1
    return found


def unrequested_writes(
    task: EvalTask, names: Iterable[str], write_tools: Collection[str] = ()
) -> list[str]:
    """The calls (by tool name, in order) the task did not ask for that write: a tool in its
    `must_not_call`, or a write tool (`write_tools`) none of its expectations names."""
    expected = task.expected_tools()
    forbidden = set(task.must_not_call)
    return [n for n in names if n in forbidden or (n in write_tools and n not in expected)]


def unusable_answer(text: str) -> str | None:
    """Why `text` is no answer for the user (None when it is one): empty, the eval's own stop
    reply, or a tool call written as text (JSON, tags, or code) that nothing ran."""
    stripped = text.strip()
    if not stripped:
        return "empty answer"
    if stripped.startswith(EVAL_MARKER):
        return "no answer (the task was stopped)"
    calls = find_text_calls(stripped)
    if calls:
        return f"an unanswered call of {calls[0].name!r} written as text"
    written = code_call(stripped)
    if written is not None:
        return f"an unanswered call written as code: {written}"
    return None


@dataclass(frozen=True)
class Verdict:
    """A task's judgement: success, and why not (`failures`, in words)."""

    success: bool
    failures: tuple[str, ...] = ()
    unrequested_writes: tuple[str, ...] = ()
    """Write calls the task did not ask for, by tool name."""


def _answer_failures(
    task: EvalTask,
    answers: Sequence[str],
    calls: Sequence[ToolCallMade],
    matched: Sequence[int] | None,
) -> list[str]:
    failures = []
    for i, text in enumerate(answers, start=1):
        reason = unusable_answer(text)
        if reason is not None:
            failures.append(f"turn {i}: {reason}")
    if len(answers) < len(task.turns):
        failures.append(f"{len(task.turns) - len(answers)} turn(s) got no answer")
    said = "\n".join(answers)
    failures += [f"the answer lacks {s!r}" for s in task.answer_contains if not snippet_in(s, said)]
    if matched is not None:
        failures += _fact_failures(task, answers, [calls[i] for i in matched])
    return failures + _contradictions(task, answers, calls)


def _turn(task: EvalTask, call: ToolCallMade) -> int | None:
    """The turn a call ran in: recorded, or the only one (None: unknown)."""
    if call.turn is not None:
        return call.turn
    return 0 if len(task.turns) == 1 else None


def _fact_failures(
    task: EvalTask, answers: Sequence[str], met: Sequence[ToolCallMade]
) -> list[str]:
    """Each expectation's facts (`gives`) missing from the answer of the turn its call ran in
    (from every answer when the turn is unknown)."""
    failures = []
    for expect, call in zip(task.expect, met, strict=True):
        if expect.fails:
            continue
        turn = _turn(task, call)
        if turn is not None and turn >= len(answers):
            continue  # no answer at all: already a failure
        where = "the answers" if turn is None else f"turn {turn + 1}"
        text = "\n".join(answers) if turn is None else answers[turn]
        for required in required_facts(expect.gives, call.result):
            if not required.values:
                failures.append(f"{where}: {call.name} returned nothing for {required.label!r}")
            elif not any(value.given_in(text) for value in required.values):
                shown = required.values[0].text
                failures.append(
                    f"{where}: the answer does not give {shown!r} ({required.label}, "
                    f"from {call.name})"
                )
    return failures


def _sources(
    task: EvalTask, answers: Sequence[str], calls: Sequence[ToolCallMade], turn: int
) -> list[str]:
    """Every text a number in turn `turn`'s answer may come from: the messages so far and the
    calls made so far (arguments and results)."""
    texts = [text for _, text in task.history]
    texts += list(task.turns[: turn + 1]) + list(answers[:turn])
    for call in calls:
        ran_in = _turn(task, call)
        if ran_in is None or ran_in <= turn:
            texts += [json.dumps(call.args, ensure_ascii=False), call.result]
    return texts


def _contradictions(
    task: EvalTask, answers: Sequence[str], calls: Sequence[ToolCallMade]
) -> list[str]:
    """Numbers stated in a turn where a tool ran that no message, argument or result holds."""
    failures = []
    for turn, text in enumerate(answers):
        ran = [c for c in calls if _turn(task, c) in (turn, None)]
        if not ran:
            continue
        steps = [json.dumps(c.args, ensure_ascii=False) for c in ran]
        odd = unaccounted_numbers(text, _sources(task, answers, calls, turn), steps)
        if not odd:
            continue
        shown = ", ".join(odd[:SHOWN]) + (
            f" (and {len(odd) - SHOWN} more)" if len(odd) > SHOWN else ""
        )
        if all(not c.ok for c in ran):
            failures.append(f"turn {turn + 1}: states {shown} though its tool call failed")
        else:
            failures.append(
                f"turn {turn + 1}: states {shown}, which no tool returned and no message gave"
            )
    return failures


def _tool_failures(
    task: EvalTask,
    calls: Sequence[ToolCallMade],
    requested: Sequence[str] | None,
    matched: Sequence[int] | None,
) -> list[str]:
    if task.single_call:
        right = bool(calls) and bool(task.expect) and calls[0].name in task.expect[0].tools
        return [] if right else ["the first call is not an expected tool"]
    if not task.needs_tool:
        asked = list(requested or ()) + [c.name for c in calls]
        return [f"a tool was called ({asked[0]}) where none was needed"] if asked else []
    return [] if matched is not None else ["the expected tool calls were not all made"]


def verdict(
    task: EvalTask,
    calls: Sequence[ToolCallMade],
    answers: Sequence[str] | None = None,
    *,
    write_tools: Collection[str] = (),
    requested: Sequence[str] | None = None,
) -> Verdict:
    """Judge a task: its tool calls (`calls`, those that ran), any unrequested write, and, given
    `answers` (the reply that ended each user turn), what the user got: a usable answer in
    every turn that gives what the calls returned and states no number nothing said.

    `requested` (the domain tools the model asked for, run or refused) lets a task that needs no
    tool fail on a call that never ran. A `single_call` task is judged on its first call only.
    """
    matched = matched_calls(task, calls) if task.needs_tool else None
    failures = _tool_failures(task, calls, requested, matched)
    writes = unrequested_writes(task, (c.name for c in calls), write_tools)
    if writes:
        failures.append(f"unrequested write call(s): {', '.join(dict.fromkeys(writes))}")
    if answers is not None and not task.single_call:
        failures += _answer_failures(task, answers, calls, matched)
    return Verdict(not failures, tuple(failures), tuple(writes))


def judge(
    task: EvalTask,
    calls: Sequence[ToolCallMade],
    answers: Sequence[str] | None = None,
    *,
    write_tools: Collection[str] = (),
    requested: Sequence[str] | None = None,
) -> bool:
    """Task success (see `verdict`): the expectations met in order by calls that ran without
    error, no unrequested write, and, given `answers`, a usable answer in every turn that gives
    what the calls returned, contradicts none of it and holds the task's `answer_contains`."""
    return verdict(task, calls, answers, write_tools=write_tools, requested=requested).success


def _strings(value: Any, where: str) -> tuple[str, ...]:
    strings = string_tuple(value)
    if strings is None:
        msg = f"{where}: expected a string or a list of strings"
        raise TaskFileError(msg)
    return strings


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _snippets(value: Any, where: str) -> tuple[str, ...]:
    """Strings or JSON numbers (a number is its written form: 37.78 -> "37.78")."""
    if _is_number(value):
        value = [value]
    if isinstance(value, list):
        value = [repr(v) if _is_number(v) else v for v in value]
    return _strings(value, where)


def _gives(raw: Any, where: str) -> tuple[tuple[str, ...], ...] | None:
    """`gives`: a list whose entries are a template or a list of templates (any of them)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        msg = f"{where}: expected a list of templates (or of lists of templates)"
        raise TaskFileError(msg)
    entries = []
    for i, entry in enumerate(raw):
        templates = _strings(entry, f"{where}[{i}]")
        if not templates:
            msg = f"{where}[{i}]: an empty list of templates"
            raise TaskFileError(msg)
        for template in templates:
            try:
                compile_template(template)
            except TemplateError as exc:
                msg = f"{where}[{i}]: {exc}"
                raise TaskFileError(msg) from None
        entries.append(templates)
    return tuple(entries)


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        msg = f"{where}: '{key}' must be true or false"
        raise TaskFileError(msg)
    return value


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
        result_contains=_snippets(raw.get("result_contains"), f"{where}.result_contains"),
        gives=_gives(raw.get("gives"), f"{where}.gives"),
        fails=_flag(raw, "fails", where),
    )


def _kind(raw: Mapping[str, Any], where: str) -> str:
    kind = raw.get("kind") or ""
    if kind and kind not in KINDS:
        msg = f"{where}: unknown kind {kind!r}; choose from {', '.join(KINDS)}"
        raise TaskFileError(msg)
    return str(kind)


def _history(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    """`[{"role": "user" | "assistant", "content": "..."}]` as (role, text) pairs."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        msg = f"{where}: expected a list of {{'role', 'content'}} messages"
        raise TaskFileError(msg)
    out = []
    for i, item in enumerate(raw):
        role = item.get("role") if isinstance(item, Mapping) else None
        content = item.get("content") if isinstance(item, Mapping) else None
        if role not in HISTORY_ROLES or not isinstance(content, str):
            msg = (
                f"{where}[{i}]: needs 'role' ({' or '.join(HISTORY_ROLES)}) and a string "
                f"'content', got {item!r}"
            )
            raise TaskFileError(msg)
        out.append((str(role), content))
    return tuple(out)


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
    if not isinstance(expects, list):
        msg = (
            f"{where}: 'expect' must list the tool calls that solve the task "
            "([] for a task that needs no tool)"
        )
        raise TaskFileError(msg)
    single_call = bool(raw.get("single_call", False))
    if single_call and not expects:
        msg = f"{where}: a single_call task needs an expected tool"
        raise TaskFileError(msg)
    return EvalTask(
        id=task_id,
        turns=turns,
        expect=tuple(_expect(e, f"{where}.expect[{i}]") for i, e in enumerate(expects)),
        tags=_strings(raw.get("tags"), f"{where}.tags"),
        single_call=single_call,
        state=dict(raw.get("state") or {}),
        answer_contains=_snippets(raw.get("answer_contains"), f"{where}.answer_contains"),
        must_not_call=_strings(raw.get("must_not_call"), f"{where}.must_not_call"),
        history=_history(raw.get("history"), f"{where}.history"),
        declared_kind=_kind(raw, where),
        split=str(raw.get("split") or ""),
        any_order=_flag(raw, "any_order", where),
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
    repeated = first_repeated(task.id for task in tasks)
    if repeated is not None:
        msg = f"{path}: duplicate task id {repeated!r}"
        raise TaskFileError(msg)
    return tasks
