"""Bill a recorded session: the requests an agent really sent, on the simulated prompt cache.

`simulate --sessions` bills sessions it generates; this bills yours. A session file holds one
model call per line (JSON lines; a JSON array of the same objects is accepted too):

    {"t": 1733030000.2, "tools": [...], "system": "...", "messages": [...]}

- `tools`: the provider tool definitions of the call, in the order sent (optional, default none);
- `system`: the system prompt, a string or a list of system blocks (optional);
- `messages`: the conversation as `{"role": ..., "content": ...}` objects (assistant messages
  may carry `tool_calls`, tool results a `tool_call_id`), in the order sent;
- `t`: when the call was made, in seconds (optional; when every call has it, the gaps decide
  cache lifetimes; otherwise calls are 4 s apart within a user turn and 60 s apart across turns,
  as in `simulate --sessions`).

`attention_scoping.observe.request_log.RequestLogMiddleware` writes such a file from a running
agent (the example agent: `--record-requests FILE`). Pure: no LangChain import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from attention_scoping.common.text import string_tuple
from attention_scoping.observe.jsonl import JsonLinesError, parse_json, parse_lines
from attention_scoping_lab.cost import PriceModel, PromptCache, SessionCost, render_request
from attention_scoping_lab.simulate.sessions import CALL_SECONDS, TURN_GAP_SECONDS

__all__ = ["RecordedCall", "SessionFileError", "bill_session", "call_times", "read_session"]

ROLES = ("user", "assistant", "tool", "system")
"""Message roles a session file may hold."""


class SessionFileError(ValueError):
    """A session file that is not what it claims: the message names the line and the value."""


@dataclass(frozen=True)
class RecordedCall:
    """One model call of a session file."""

    tools: tuple[Mapping[str, Any], ...]
    system: tuple[str, ...]
    messages: tuple[Mapping[str, Any], ...]
    at: float | None = None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _system(value: Any, where: str) -> tuple[str, ...]:
    system = string_tuple(value)
    if system is None:
        msg = f"{where}: 'system' must be a string or a list of strings, got {_kind(value)}"
        raise SessionFileError(msg)
    return system


def _objects(value: Any, key: str, where: str) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        msg = f"{where}: {key!r} must be a list of JSON objects, got {_kind(value)}"
        raise SessionFileError(msg)
    return tuple(value)


def _messages(value: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    messages = _objects(value, "messages", where)
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ROLES:
            valid = ", ".join(ROLES)
            msg = f"{where}: message {i + 1} has role {role!r}; valid: {valid}"
            raise SessionFileError(msg)
    return messages


def _time(value: Any, where: str) -> float | None:
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok:
        msg = f"{where}: 't' must be a finite number of seconds, got {value!r}"
        raise SessionFileError(msg)
    return float(value)


def parse_call(item: Any, where: str) -> RecordedCall:
    """One recorded call from its JSON object.

    Raises:
        SessionFileError: not an object, or a field of the wrong shape (named with `where`).
    """
    if not isinstance(item, dict):
        msg = f"{where}: expected a JSON object (one model call), got {_kind(item)}"
        raise SessionFileError(msg)
    if "messages" not in item:
        msg = f"{where}: a model call needs 'messages' (keys found: {', '.join(item) or 'none'})"
        raise SessionFileError(msg)
    return RecordedCall(
        tools=_objects(item.get("tools", []), "tools", where),
        system=_system(item.get("system"), where),
        messages=_messages(item["messages"], where),
        at=_time(item.get("t"), where),
    )


def _items(data: bytes, name: str) -> list[tuple[str, Any]]:
    if data.lstrip().startswith(b"["):
        try:
            whole = parse_json(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            msg = f"{name}: not UTF-8 (byte {exc.start + 1}: {exc.reason})"
            raise SessionFileError(msg) from None
        except ValueError as exc:
            msg = f"{name}: not a JSON array ({exc})"
            raise SessionFileError(msg) from None
        if not isinstance(whole, list):
            msg = f"{name}: not a JSON array (got {_kind(whole)})"
            raise SessionFileError(msg)
        return [(f"{name}: call {i + 1}", item) for i, item in enumerate(whole)]
    try:
        lines = parse_lines(data, name)
    except JsonLinesError as exc:
        raise SessionFileError(str(exc)) from None
    return [(f"{name}: line {line.number}", line.value) for line in lines]


def read_session(path: str | Path) -> list[RecordedCall]:
    """The model calls of a session file, in order.

    Every line is read within `observe.jsonl.FILE_LIMITS` (64 levels, integers of at most
    1,000 digits) and must be UTF-8 JSON without lone surrogates.

    Raises:
        SessionFileError: a missing or unreadable file, bad JSON, a call of the wrong shape,
            times that go backwards, or no call at all.
    """
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        msg = f"cannot read session file {str(source)!r}: {exc}"
        raise SessionFileError(msg) from None
    calls = [parse_call(item, where) for where, item in _items(data, source.name)]
    if not calls:
        msg = f"{source.name}: no model calls (expected one JSON object per line)"
        raise SessionFileError(msg)
    times = [c.at for c in calls if c.at is not None]
    if any(b < a for a, b in pairwise(times)):
        msg = f"{source.name}: the calls' 't' values go backwards; keep the calls in order"
        raise SessionFileError(msg)
    return calls


def call_times(calls: Sequence[RecordedCall]) -> list[float]:
    """Seconds since the first call: the recorded `t` when every call has one, else 4 s
    between the calls of a user turn and 60 s between turns (a turn is a new user message)."""
    stamps = [c.at for c in calls]
    if stamps and all(s is not None for s in stamps):
        first = stamps[0] or 0.0
        return [(s or 0.0) - first for s in stamps]
    out, clock, last_turn = [], 0.0, None
    for call in calls:
        turn = sum(1 for m in call.messages if m.get("role") == "user")
        if last_turn is not None:
            clock += TURN_GAP_SECONDS if turn != last_turn else CALL_SECONDS
        last_turn = turn
        out.append(clock)
    return out


def bill_session(
    calls: Sequence[RecordedCall], prices: Sequence[PriceModel], count: Callable[[str], int]
) -> dict[str, SessionCost]:
    """The session's bill under each price model (each on a fresh cache)."""
    caches = {p.name: PromptCache(p) for p in prices}
    totals = {p.name: SessionCost() for p in prices}
    for call, at in zip(calls, call_times(calls), strict=True):
        request = render_request(call.tools, call.system, call.messages, count)
        for name, cache in caches.items():
            totals[name].calls.append(cache.call(request, at))
    return totals
