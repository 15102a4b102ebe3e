"""The enforced gate: a tool call runs only when the reply that made it records the tool shown.

The model hook stamps each reply with what the model could call for it (`stamp`): the callable
tools, the scope, who opened it. The tool hook finds the reply that issued the call and decides
from that record alone (`review`): no reply, no record, or a tool the record does not name is
refused with a structured tool message and never runs. Nothing per request lives on the
middleware, so one instance serves any number of threads and models at once.

Replies are also made answerable before they enter state (`repaired`): unique call ids, invalid
JSON arguments turned into a call that is refused, arguments too deep or too large refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, ToolMessage

from attention_scoping.errors import ErrorCode, Payload, did_you_mean, refusal, render_payload
from attention_scoping.load_context import target, unknown_context_payload
from attention_scoping.messages import reply_with_call, tool_calls_of
from attention_scoping.risk import Opener
from attention_scoping.scopes import LOAD_CONTEXT, ScopeCatalog

RECORD_KEY = "attention_scoping"
"""`AIMessage.response_metadata` key of the records, one per middleware name."""

INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""Argument key of a call whose arguments were not a valid JSON object (refused, never run)."""

MAX_ARGUMENT_DEPTH = 64
MAX_ARGUMENT_ITEMS = 20_000
MAX_RESULT_CHARS = 100_000
"""Longest tool result passed back to the model; longer ones are cut with a visible mark."""


class Record(TypedDict):
    """What the model could call for one reply: `tools` (names, in the order sent), the
    `scope` in force, who opened it (`opened_by`), and how they were disclosed."""

    tools: list[str]
    scope: str | None
    opened_by: Opener
    disclosure: str


def stamp(message: AIMessage, owner: str, record: Record) -> AIMessage:
    """A copy of `message` carrying `record` under `response_metadata[RECORD_KEY][owner]`."""
    meta = dict(message.response_metadata or {})
    records = dict(meta.get(RECORD_KEY) or {})
    records[owner] = dict(record)
    meta[RECORD_KEY] = records
    return message.model_copy(update={"response_metadata": meta})


def record_of(message: Any, owner: str) -> Mapping[str, Any] | None:
    """The record `owner` stamped on `message`, or None."""
    meta = getattr(message, "response_metadata", None) or {}
    records = meta.get(RECORD_KEY) if isinstance(meta, Mapping) else None
    record = records.get(owner) if isinstance(records, Mapping) else None
    if not isinstance(record, Mapping) or not isinstance(record.get("tools"), list):
        return None
    return record


def oversized(args: Any) -> str | None:
    """Why `args` is too deep or too large to pass on to a tool (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(args, 1)]
    items = 0
    while stack:
        value, depth = stack.pop()
        items += 1
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"
        if items > MAX_ARGUMENT_ITEMS:
            return f"arguments hold more than {MAX_ARGUMENT_ITEMS} values"
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((v, depth + 1) for v in value)
    return None


ECHO_CHARS = 200
"""Longest piece of the model's invalid arguments echoed back in a refusal."""


def _invalid(raw: object, error: object) -> dict[str, Any]:
    text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
    why = str(error or "arguments are not a JSON object")
    return {INVALID_ARGUMENTS_KEY: {"raw": text[:ECHO_CHARS], "error": why[:ECHO_CHARS]}}


def thread_call_ids(messages: Iterable[Any]) -> set[str]:
    """The tool-call ids already used in a thread."""
    return {
        str(c["id"]) for m in messages for c in tool_calls_of(m) if isinstance(c.get("id"), str)
    }


def repaired(message: AIMessage, taken: Iterable[str] = ()) -> AIMessage:
    """`message` with every call answerable: ids unique in the thread (`taken`), invalid or
    oversized arguments replaced by a marker the gate refuses. The same object when sound."""
    calls = [dict(c) for c in message.tool_calls] + [
        {
            "name": c.get("name") or "",
            "args": _invalid(c.get("args"), c.get("error")),
            "id": c.get("id"),
            "type": "tool_call",
        }
        for c in message.invalid_tool_calls
    ]
    changed = bool(message.invalid_tool_calls)
    seen = set(taken)
    for position, call in enumerate(calls):
        problem = oversized(call.get("args"))
        if problem is not None:
            call["args"] = _invalid("", problem)
            changed = True
        cid = call.get("id")
        if not isinstance(cid, str) or not cid or cid in seen:
            base, suffix = (cid if isinstance(cid, str) and cid else "call"), position
            while f"{base}_{suffix}" in seen:
                suffix += 1
            call["id"], changed = f"{base}_{suffix}", True
        seen.add(call["id"])
    if not changed:
        return message
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})


def invalid_arguments_payload(call: Mapping[str, Any]) -> Payload | None:
    """The refusal of a call `repaired` marked (invalid or oversized arguments), else None: it
    echoes the model's text when there was one, else why the arguments were refused."""
    args = call.get("args")
    if not isinstance(args, Mapping) or INVALID_ARGUMENTS_KEY not in args:
        return None
    detail = args[INVALID_ARGUMENTS_KEY]
    detail = detail if isinstance(detail, Mapping) else {"error": str(detail)[:ECHO_CHARS]}
    raw, error = str(detail.get("raw") or ""), str(detail.get("error") or "")
    name = call.get("name") or "the tool"
    shown = f"({raw!r})" if raw else f"({error})"
    return refusal(
        ErrorCode.INVALID_ARGUMENTS,
        f"{name} was not run: its arguments are not a valid JSON object {shown}.",
        tool=str(call.get("name") or ""),
        next_step=f"Call {name} again with arguments written as one JSON object.",
    )


def _load_context_payload(
    call: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], catalog: ScopeCatalog
) -> Payload | None:
    first = next(c for c in calls if c.get("name") == LOAD_CONTEXT)
    if first.get("id") != call.get("id"):
        return refusal(
            ErrorCode.ONE_CONTEXT_PER_STEP,
            f"Only one {LOAD_CONTEXT} call per step: the first one of this step counts, this "
            "one was not run.",
            tool=LOAD_CONTEXT,
            requested=target(call) if isinstance(target(call), str) else None,
            next_step=f"Continue in the context loaded first; call {LOAD_CONTEXT} again later "
            "only if the request needs another context.",
        )
    wanted = target(call)
    if not isinstance(wanted, str) or wanted not in catalog.scopes:
        return {**unknown_context_payload(catalog, wanted), "tool": LOAD_CONTEXT}
    return None


def _hidden_payload(
    name: str, record: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], catalog: ScopeCatalog
) -> Payload:
    shown = list(record["tools"])
    offering = catalog.scopes_offering(name)
    switching = [target(c) for c in calls if c.get("name") == LOAD_CONTEXT]
    if offering and any(s in offering for s in switching):
        return refusal(
            ErrorCode.CONTEXT_SWITCHED_IN_SAME_STEP,
            f"{name} was not run: it belongs to the context you loaded in this same step.",
            tool=name,
            available=shown,
            next_step=f"Now that the context is loaded, call {name} again.",
        )
    if offering:
        active = record.get("scope")
        if active in offering and record.get("opened_by") == "code":
            why = (
                f"Context {active!r} was opened for you, which shows only its tools that read; "
                f"{name} may change something, so it loads only through your own call."
            )
        else:
            why = f"{name} is not in the active context ({active!r})."
        choice = active if active in offering else offering[0]
        return refusal(
            ErrorCode.TOOL_NOT_IN_CONTEXT,
            f"{why} It is in: {', '.join(offering)}.",
            tool=name,
            contexts=list(offering),
            available=shown,
            next_step=(
                f"If the user asked for it, call {LOAD_CONTEXT}({choice!r}) first, then {name}."
            ),
        )
    return refusal(
        ErrorCode.UNKNOWN_TOOL,
        f"There is no tool named {name!r}{did_you_mean(name, shown)}; nothing was run.",
        tool=name,
        available=shown,
        next_step="Call one of the available tools, or answer without a tool.",
    )


def review(
    call: Mapping[str, Any], messages: Sequence[Any], owner: str, catalog: ScopeCatalog
) -> Payload | None:
    """Why `call` may not run (a refusal payload), or None: decided from the record of the
    reply that issued it. No reply or no record: `not_shown`."""
    name = call.get("name")
    reply = reply_with_call(messages, call.get("id"))
    record = record_of(reply, owner) if reply is not None else None
    if record is None:
        return refusal(
            ErrorCode.NOT_SHOWN,
            f"{name!r} was not run: no record shows it was offered with the reply that called it.",
            tool=str(name),
            next_step="Call only tools you were given in this step.",
        )
    invalid = invalid_arguments_payload(call)
    if invalid is not None:
        return invalid
    calls = tool_calls_of(reply)
    if name == LOAD_CONTEXT:
        return _load_context_payload(call, calls, catalog)
    if isinstance(name, str) and name in record["tools"]:
        return None
    return _hidden_payload(str(name), record, calls, catalog)


def refused(call: Mapping[str, Any], payload: Payload) -> ToolMessage:
    """The tool message answering a refused call (`status="error"`; nothing ran)."""
    return ToolMessage(
        render_payload(payload),
        tool_call_id=str(call.get("id") or ""),
        name=str(call.get("name") or ""),
        status="error",
    )


def clipped(message: ToolMessage, limit: int = MAX_RESULT_CHARS) -> ToolMessage:
    """`message` with string content longer than `limit` cut, the cut marked; else itself."""
    content = message.content
    if not isinstance(content, str) or len(content) <= limit:
        return message
    mark = f"\n[result cut: {len(content) - limit:,} of {len(content):,} characters not shown]"
    return message.model_copy(update={"content": content[:limit] + mark})
