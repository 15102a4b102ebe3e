"""`RepeatedCallMiddleware`: a tool call identical to one that already answered in this user turn
is not run again; the model gets the earlier result back, with the advice to answer from it.

Small models loop: they call `calculate("sqrt(144) + 2**10")`, get 1036, and call it again with
the same arguments, until the step limit ends the run (on a 1.5B model: 8 and 10 identical
calls in single tasks). The prompt's "never repeat a call whose result you already have" does
not stop them; a tool result that says so, and carries the result they already have, does. The
same rule keeps a write tool from running twice when a model repeats it.

`find_repeat` is the pure part: it reads the messages; the middleware only answers the call.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import BaseMessage, ToolMessage

from attention_scoping.adapters.refusals import RefusesToolCalls, refusal_message
from attention_scoping.core.errors import ErrorCode, Payload
from attention_scoping.core.messages import current_turn, text_of, tool_calls_of

RESULT_CHARS = 2000
"""Characters of the earlier result the refusal carries by default."""


@dataclass(frozen=True)
class Repeat:
    """An earlier call with the same tool and arguments in the current user turn."""

    kind: Literal["answered", "same_step"]
    """`answered`: it ran and returned `result`; `same_step`: it is in the same model reply."""
    result: ToolMessage | None = None


def find_repeat(messages: Sequence[BaseMessage], call: Mapping[str, Any]) -> Repeat | None:
    """The earlier identical call of `call` in the current user turn that makes it redundant:
    one that returned a result without error (the latest), or one earlier in the same model
    reply. None when the call is new, or when every earlier identical call failed (a retry)."""
    start, _ = current_turn(messages)
    results = {m.tool_call_id: m for m in messages[start + 1 :] if isinstance(m, ToolMessage)}
    found: Repeat | None = None
    for message in messages[start + 1 :]:
        earlier = tool_calls_of(message)
        ids = [c.get("id") for c in earlier]
        if call.get("id") in ids:  # the reply that made this call: look at the calls before it
            before = earlier[: ids.index(call.get("id"))]
            if any(_same(c, call) for c in before):
                return Repeat("same_step")
            return found
        for made in earlier:
            result = results.get(made.get("id") or "")
            if _same(made, call) and result is not None and result.status != "error":
                found = Repeat("answered", result)
    return found


def _same(made: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    return made.get("name") == call.get("name") and made.get("args") == call.get("args")


def repeat_payload(call: Mapping[str, Any], repeat: Repeat, limit: int = RESULT_CHARS) -> Payload:
    """The refusal's body: what was not run and why, the earlier result, and what to do."""
    name = call.get("name")
    if repeat.kind == "same_step" or repeat.result is None:
        return {
            "error": ErrorCode.REPEATED_CALL,
            "message": f"`{name}` is called twice in this reply with the same arguments; only "
            "the first call runs.",
            "next_step": "Use the first call's result.",
        }
    result = text_of(repeat.result)
    if len(result) > limit:
        result = f"{result[:limit]}[... cut: {len(result) - limit} more characters]"
    return {
        "error": ErrorCode.REPEATED_CALL,
        "message": f"`{name}` already ran with these arguments in this turn, so it was not run "
        "again. Its result is in `result`.",
        "result": result,
        "next_step": "Answer the user from this result. Call again only with other arguments, "
        "or another tool, if it does not answer the request.",
    }


class RepeatedCallMiddleware(
    RefusesToolCalls, AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]
):
    """Answer a tool call that repeats an earlier one of this user turn (same tool, same
    arguments) with the earlier result instead of running the tool again.

    The answer is an error `ToolMessage` (`"error": "repeated_call"`) whose `result` holds the
    earlier result (cut at `result_chars`) and whose `next_step` says to answer from it, so
    nothing is lost and the model can go on. Only a call that returned without error counts:
    retrying a failed call runs it. A new user turn starts afresh, and two identical calls in one
    model reply run once. Put it before `ApprovalMiddleware`, so a repeated write is refused
    before anyone is asked to approve it again.

    Example:
        ```python
        from attention_scoping.hesitation import HesitationMiddleware, RepeatedCallMiddleware

        repeats = RepeatedCallMiddleware(allow_repeat={"job_status"})  # a poll may repeat
        agent = create_agent(model, tools, middleware=[HesitationMiddleware(), repeats])
        ```
    """

    def __init__(
        self, *, allow_repeat: Collection[str] = (), result_chars: int = RESULT_CHARS
    ) -> None:
        """Set up the guard.

        Args:
            allow_repeat: Tools that may run again with the same arguments (a status poll, a
                clock, a random draw: tools whose answer changes between calls).
            result_chars: Characters of the earlier result the answer carries.

        Raises:
            ValueError: `result_chars` below 1.
        """
        super().__init__()
        if result_chars < 1:
            msg = f"result_chars must be at least 1, got {result_chars}"
            raise ValueError(msg)
        self.allow_repeat = frozenset(allow_repeat)
        self.result_chars = result_chars

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """The earlier result for a repeated call, or None to run it."""
        call = request.tool_call
        if call["name"] in self.allow_repeat:
            return None
        messages = request.state.get("messages", []) if isinstance(request.state, Mapping) else []
        repeat = find_repeat(messages, call)
        if repeat is None:
            return None
        return refusal_message(call, repeat_payload(call, repeat, self.result_chars))


__all__ = ["RESULT_CHARS", "Repeat", "RepeatedCallMiddleware", "find_repeat", "repeat_payload"]
