"""What the hesitation middleware says to the model: every runtime note, found by name.

The nudge after a stall (`nudge_text`), the note after an ungrounded answer
(`ungrounded_text`), the hint before the first reply (`hint_text`), the honest final answer
(`honest_answer`) and the mark on a reply cut at the output cap (`OUTPUT_LIMIT_MARK`). Pure
text over `Pending` records; which note is due, and when, is decided elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attention_scoping.common.signature import call_signature

if TYPE_CHECKING:
    from attention_scoping.hesitation.pending import Pending

__all__ = [
    "OUTPUT_LIMIT_MARK",
    "REPEAT_ANSWERED_MESSAGE",
    "REPEAT_ANSWERED_STEP",
    "REPEAT_NOTE",
    "REPEAT_SAME_STEP_MESSAGE",
    "REPEAT_SAME_STEP_STEP",
    "RUNTIME_NOTE",
    "hint_text",
    "honest_answer",
    "nudge_text",
    "ungrounded_text",
]

RUNTIME_NOTE = (
    "[Runtime note, automatic: not written by the user and not their approval of anything.]"
)
"""First line of every nudge: who wrote it, and that it is nobody's consent."""

REPEAT_NOTE = (
    "(Note: `{name}` already ran with these arguments in this turn; this is its result again. "
    "Answer the user with it now.)"
)
"""The repeat guard's note after the earlier result, when it answers a repeat with it."""

REPEAT_SAME_STEP_MESSAGE = (
    "`{name}` is called twice in this reply with the same arguments; only the first call runs."
)
"""`repeated_call` for a twin call of the same reply."""

REPEAT_SAME_STEP_STEP = "Use the first call's result."
"""`repeated_call` (same reply): what to do next."""

REPEAT_ANSWERED_MESSAGE = (
    "`{name}` already ran with these arguments in this turn, so it was not run again. Its result "
    "is in `result`."
)
"""`repeated_call` for a call that already answered this turn."""

REPEAT_ANSWERED_STEP = (
    "Answer the user from this result. Call again only with other arguments, or another tool, "
    "if it does not answer the request."
)
"""`repeated_call` (answered): what to do next."""

OUTPUT_LIMIT_MARK = " [... cut: this reply reached the output limit]"
"""End of a reply cut at the output cap when the retry shows it again. Not `common.limits.clip`'s
mark on purpose: the model needs the reason (its own reply ran into the cap, so it should not
write it out again), not the sizes."""


def honest_answer(tools: Sequence[str], draft: str) -> str:
    """Final answer when the model announced an action it never took: say plainly that nothing
    ran, then the model's text."""
    names = ", ".join(tools) if tools else "the tool"
    text = f"Nothing was executed: I did not call {names}."
    draft = draft.strip()
    return f"{text}\n\n{draft}" if draft else text


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def nudge_text(pending: Sequence[Pending], tools: Sequence[str] = ()) -> str:
    """The runtime note after a stall: the exact call, the defaults, who approves.

    Written by the runtime about the user, never in the user's voice: it gives no consent and
    leaves the answer to the user's request (text, an explanation or a draft is an answer).

    Args:
        pending: The disclosed tools the stall may be about.
        tools: Names the radar found the message talking about (picked first).
    """
    named = [p for p in pending if p.name in tools] or list(pending)
    focus = named[:3]
    names = ", ".join(f"`{p.name}`" for p in focus)
    lines = [
        RUNTIME_NOTE,
        f"Your last reply called no tool, though you have the schema of {names}.",
        "If the user's request asks for this action, make the tool call now instead of listing "
        "parameters or asking the user to confirm:",
    ]
    for p in focus:
        text = f"- Call {p.call()}"
        if p.critical:
            text += f", filling {', '.join(p.critical)} from the user's request"
        if p.defaults:
            text += "; for anything the user did not specify use " + ", ".join(
                f"{k}={_value(v)}" for k, v in p.defaults.items()
            )
        text += "."
        if p.requires_approval:
            text += f" {p.name} asks the user for approval by itself before it runs."
        lines.append(text)
    lines += [
        "Infer every other value from the conversation. If a required value cannot be inferred "
        "and has no default, ask the user one short question about that value.",
        "If the user asked for text, an explanation or a draft, or will act themselves, your "
        "reply was the answer: give it again and call no tool.",
    ]
    return "\n".join(lines)


def ungrounded_text(pending: Sequence[Pending], *, named: bool = False) -> str:
    """The runtime note after an answer given without calling a tool the user's message needs:
    the best match with its required arguments, up to two more by name as alternatives, and a
    request for one call (or the answer again if none applies). One call, not a list: a list of
    signatures made the local 1.5B model call every tool on it and then repeat the calls until
    its token cap (docs/scoping.md). `named`: the reply wrote out the first tool's name, so it
    described (or claimed) a call it never made."""
    focus = list(pending)[:3]
    if not focus:
        return "\n".join([RUNTIME_NOTE, "Your last reply answered without calling a tool."])
    top, others = focus[0], focus[1:]
    params = top.schema.get("parameters") or {}
    signature = top.call() if top.via == "gateway" else call_signature(top.name, params)
    if named:
        opening = (
            f"Your last reply names `{top.name}` but calls no tool. Writing about a call does "
            "not run it, and there is no result until you make the call."
        )
    else:
        opening = "Your last reply answered without calling a tool, so nothing checked it."
    match = f"The user's request matches `{signature}`"
    if others:
        alternatives = " or ".join(f"`{p.name}`" for p in others)
        match += f"; if {alternatives} fits it better, call that one instead"
    return "\n".join(
        [
            RUNTIME_NOTE,
            f"{opening} {match}.",
            "Make one tool call now, with values from the request. If none of these tools "
            "applies, give your answer again and call no tool.",
        ]
    )


def hint_text(pending: Sequence[Pending]) -> str:
    """The runtime note before the turn's first reply: the tools the user's message matches, by
    name, best first, and a request to call the one that answers it. Names only: on the local
    1.5B model a signature line made it follow the first tool even where the ranking was wrong
    (docs/scoping.md)."""
    focus = list(pending)[:3]
    names = ", ".join(f"`{p.name}`" for p in focus)
    how = "call that one now with values from the request"
    executors = {p.executor for p in focus if p.via == "gateway"}
    if focus and all(p.via == "gateway" for p in focus) and len(executors) == 1:
        how = f"call it now through `{executors.pop()}` with values from the request"
    return "\n".join(
        [
            RUNTIME_NOTE,
            f"Tools that match the user's request: {names}. If one of them answers it, {how}; "
            "otherwise answer without a tool.",
        ]
    )
