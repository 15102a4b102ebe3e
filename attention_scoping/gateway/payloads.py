"""What the gateway's three tools answer: JSON payloads, each ending with a `next_step`.

Pure builders over `ToolSpec`s. The breadcrumb is the point: after a rich schema the last thing
the model reads is the exact next call ("call execute_tool now, with these defaults, the gateway
asks for approval"), not the schema.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from attention_scoping.common.errors import ErrorCode, ErrorPayload, Payload, refusal, unknown_tool
from attention_scoping.common.failures import exception_text
from attention_scoping.common.limits import ECHO_MAX_CHARS, LimitExceeded, shorten
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gateway.catalog import EXECUTE_TOOL, GET_TOOL_SCHEMA, SEARCH_TOOL_CATALOG

__all__ = [
    "ECHO_MAX_CHARS",
    "call_text",
    "clip",
    "disclosure",
    "exception_text",
    "failure_payload",
    "invalid_arguments_payload",
    "problem",
    "result_too_large_payload",
    "schema_payload",
    "search_payload",
    "success_payload",
    "unknown_tool_payload",
]


def clip(value: object, limit: int = ECHO_MAX_CHARS) -> str:
    """`value` as text for a payload (a non-string: its type's name), `common.limits.shorten`ed."""
    return shorten(value if isinstance(value, str) else type(value).__name__, limit)


def call_text(name: str, **kwargs: Any) -> str:
    """`name(key=<json>, ...)`: a call written out for a `next_step`."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in kwargs.items())
    return f"{name}({args})"


def _execute_call(spec: ToolSpec) -> str:
    return f"{EXECUTE_TOOL}(tool_name={json.dumps(spec.name)}, arguments={{...}})"


def disclosure(spec: ToolSpec) -> dict[str, Any]:
    """What `get_tool_schema` shows of a tool."""
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.parameters),
        "risk": spec.risk,
        "requires_approval": spec.requires_approval,
        "defaults": spec.suggested_defaults(),
    }


def search_payload(
    query: str, ranked: Sequence[tuple[ToolSpec, float]], reads: Collection[str] = ()
) -> Payload:
    """Ranked candidates for `query`, with a `next_step` naming the schema call of the best
    candidate when it is a declared read (in `reads`); the model picks any other tool itself,
    as one that is not a declared read may write (the breadcrumb never points at it,
    `attention_scoping.risk`)."""
    candidates = [
        {"name": spec.name, "summary": spec.summary, "risk": spec.risk, "score": round(score, 4)}
        for spec, score in ranked
    ]
    if ranked and ranked[0][0].name in reads:
        best = ranked[0][0].name
        step = (
            f"Call {call_text(GET_TOOL_SCHEMA, tool_names=[best])} now to get its full schema "
            f"(or name another candidate that fits better), then call {EXECUTE_TOOL}."
        )
    elif ranked:
        step = (
            f"Call {GET_TOOL_SCHEMA} with the candidate that fits the request to get its full "
            f"schema, then call {EXECUTE_TOOL}."
        )
    else:
        step = (
            f"No tool matched. Call {SEARCH_TOOL_CATALOG} again with other words: the "
            "action and the object, e.g. 'create invoice' or 'schedule reminder'."
        )
    return {"query": clip(query), "candidates": candidates, "next_step": step}


def _schema_step(disclosed: Sequence[ToolSpec]) -> str:
    if not disclosed:
        return (
            f"None of these tools is available. Call {SEARCH_TOOL_CATALOG}(query=...) to "
            "find the right tool name; names must match exactly."
        )
    parts: list[str] = []
    for spec in disclosed:
        critical = spec.critical()
        defaults = spec.suggested_defaults()
        text = f"Call {_execute_call(spec)} now."
        if critical:
            text += f" Fill {', '.join(critical)} from the user's request."
        if defaults:
            named = ", ".join(
                f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in defaults.items()
            )
            text += f" For anything the user did not specify, use the defaults: {named}."
        text += " Synthesize the remaining arguments from the request and the conversation."
        if spec.requires_approval:
            text += (
                f" {spec.name} needs approval: do NOT ask the user to confirm or to list "
                "parameters in text; the gateway asks the user for approval itself when you "
                "call it."
            )
        else:
            text += " It runs immediately; do not ask the user for confirmation."
        parts.append(text)
    if len(parts) > 1:
        parts.insert(0, "Pick the tool that fits the request.")
    return " ".join(parts)


def schema_payload(
    disclosed: Sequence[ToolSpec],
    unauthorized: Sequence[str],
    not_found: Sequence[str],
    hints: Mapping[str, str],
) -> Payload:
    """Full schemas plus `unauthorized` / `not_found` lists, `did_you_mean` hints, and a
    `next_step` that names the execute call, the defaults, and who asks for approval."""
    payload: Payload = {
        "disclosed": [disclosure(s) for s in disclosed],
        "unauthorized": [clip(n) for n in unauthorized],
        "not_found": [clip(n) for n in not_found],
    }
    if hints:
        payload["did_you_mean"] = dict(hints)
    payload["next_step"] = _schema_step(disclosed)
    return payload


def unknown_tool_payload(name: object, *, known: bool, hint: str | None) -> ErrorPayload:
    """A call to a tool that does not exist (`unknown_tool`) or that this caller may not run
    (`unauthorized`); nothing ran. The catalog is not listed (it may be large): the next step
    names the search."""
    shown = clip(name)
    step = (
        f"Call {call_text(GET_TOOL_SCHEMA, tool_names=[hint])} and then {EXECUTE_TOOL} "
        "with that exact name."
        if hint
        else f"Call {SEARCH_TOOL_CATALOG}(query=...) to find the right tool name."
    )
    if known:
        message = f"{shown!r} is not available to you; it was not run."
        return refusal(ErrorCode.UNAUTHORIZED, message, tool=shown, next_step=step)
    did = f" (did you mean {hint!r}?)" if hint else ""
    return unknown_tool(shown, step, hint=did)


def problem(message: str, rule: str, field: str | None = None) -> dict[str, Any]:
    """One argument problem, shaped like `safety.validation.ArgumentProblem.as_dict()`."""
    return {"field": field, "path": field or "", "message": message, "rule": rule}


def invalid_arguments_payload(spec: ToolSpec, problems: Sequence[Mapping[str, Any]]) -> Payload:
    """Arguments that fail the schema (or the size limits): what to fix; nothing ran."""
    first = problems[0]
    fields = [p["field"] for p in problems if p.get("field")]
    payload: Payload = {
        "error": ErrorCode.INVALID_ARGUMENTS,
        "tool": spec.name,
        "message": f"The arguments for {spec.name} do not match its schema; nothing was run.",
        "problems": [{**p, "message": clip(str(p.get("message", "")), 500)} for p in problems],
    }
    if first.get("field") in spec.properties:
        payload["expected"] = {first["field"]: spec.properties[first["field"]]}
    # A model that called straight from a signature line has not seen the schema: give it
    # here, so one more call fixes the arguments (no get_tool_schema round trip).
    payload["parameters"] = dict(spec.parameters)
    fix = ", ".join(dict.fromkeys(fields)) if fields else "the arguments object"
    payload["next_step"] = (
        f"Call {EXECUTE_TOOL}(tool_name={json.dumps(spec.name)}, arguments={{...}}) again "
        f"with {fix} fixed as described; keep the other arguments. Do not ask the user "
        "unless the value cannot be inferred."
    )
    return payload


def success_payload(spec: ToolSpec, result: Any, approval: Mapping[str, Any] | None) -> Payload:
    """A call that ran (`result` is already JSON-safe, see `limits.json_result`)."""
    payload: Payload = {"status": "ok", "tool": spec.name, "result": result}
    if approval:
        payload["approval"] = dict(approval)
    # Short on purpose: every result stays in the conversation and is billed on every later
    # call (cache reads), so this line is paid for many times.
    payload["next_step"] = "Answer the user from this result, or call the next tool now."
    return payload


def result_too_large_payload(
    spec: ToolSpec,
    exceeded: LimitExceeded,
    approval: Mapping[str, Any] | None,
    preview: str | None,
) -> Payload:
    """A call that ran but whose result breaks the limits: said so, with a bounded preview."""
    payload: Payload = {
        "error": ErrorCode.RESULT_TOO_LARGE,
        "tool": spec.name,
        "ran": True,
        "message": f"{spec.name} ran, but its result is not shown: {exceeded.message}.",
        "rule": exceeded.rule,
    }
    if preview:
        payload["preview"] = preview
    if approval:
        payload["approval"] = dict(approval)
    payload["next_step"] = (
        f"Do not call {spec.name} again for this request: it already ran. Tell the user it "
        "ran and that its result was too large to show"
        + (", using the preview for what it says." if preview else ".")
    )
    return payload


def failure_payload(spec: ToolSpec, exc: BaseException) -> Payload:
    """A tool that raised."""
    return {
        "error": ErrorCode.TOOL_FAILED,
        "tool": spec.name,
        "message": clip(f"{spec.name} raised {type(exc).__name__}: {exception_text(exc)}", 2_000),
        "next_step": (
            "If the error names a bad argument value, call "
            f"{EXECUTE_TOOL}(tool_name={json.dumps(spec.name)}, arguments={{...}}) once more "
            "with it fixed; otherwise tell the user it failed and why. Do not repeat the "
            "same call."
        ),
    }
