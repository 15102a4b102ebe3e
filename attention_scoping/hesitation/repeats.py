"""`RepeatedCallMiddleware`: a tool call identical to one that already answered in this user turn
is not run again; the model gets the earlier result back, with a note to answer from it.

Small models loop: they call `calculate("sqrt(144) + 2**10")`, get 1036, and call it again with
the same arguments, until the step limit ends the run (on a 1.5B model: 8 and 10 identical
calls in single tasks). The prompt's "never repeat a call whose result you already have" does
not stop them; a tool result that carries the result they already have does. The same rule keeps
a write tool from running twice when a model repeats it.

What counts as "already answered": a call of the turn with the same tool and arguments that
returned without error. Fail closed (`attention_scoping.risk`): a tool is a read only when
declared one (`metadata={"risk": "read"}`, an MCP `readOnlyHint: true`, or `reads=`); a call of
any other tool counts as a write. A read is forgotten once a write ran after it ("read the
file, fix the typo, read it again" reads again, whether or not the fixing tool was marked); a
write is never forgotten. The core's `load_context` is never answered as a repeat: the model
loading a scope itself is what opens its tools that may write. Calls are located by their
position in the thread (which reply made them, and which tool messages follow that reply),
never by ids alone: servers that number calls per reply give every first call `call_0`.

`find_repeat` is the pure part: it reads the messages; the middleware only answers the call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ModelRequest,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import BaseMessage, ToolMessage
from typing_extensions import override

from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.adapters.refusals import RefusesToolCalls, refusal_message
from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.limits import clip_head
from attention_scoping.common.messages import tool_error_code
from attention_scoping.errors import NOT_RUN_ERRORS, ErrorCode, Payload, refusal
from attention_scoping.hesitation.errors import KitConfigError, KitTypeError
from attention_scoping.hesitation.texts import (
    REPEAT_ANSWERED_MESSAGE,
    REPEAT_ANSWERED_STEP,
    REPEAT_NOTE,
    REPEAT_SAME_STEP_MESSAGE,
    REPEAT_SAME_STEP_STEP,
)
from attention_scoping.messages import current_turn, text_of, tool_calls_of
from attention_scoping.risk import declared_read
from attention_scoping.scopes import LOAD_CONTEXT, ScopeCatalog

RESULT_CHARS = 2000
"""Characters of the earlier result the answer carries by default."""

REPEAT_MARK = "repeated_call"
"""`response_metadata` key set on a tool message that answers a repeat with an earlier result."""

Writes = Callable[[Mapping[str, Any]], bool]
"""Whether a tool call (name and args) may change something."""


@dataclass(frozen=True)
class Repeat:
    """An earlier call with the same tool and arguments in the current user turn."""

    kind: Literal["answered", "same_step"]
    """`answered`: it ran and returned `result`; `same_step`: it is in the same model reply."""
    result: ToolMessage | None = None


@dataclass
class _Reply:
    """One model reply of the turn: its calls, and the tool messages that answered them."""

    calls: list[dict[str, Any]]
    results: dict[str, ToolMessage] = field(default_factory=dict)

    def result(self, call: Mapping[str, Any]) -> ToolMessage | None:
        return self.results.get(str(call.get("id") or ""))


def _replies(messages: Sequence[BaseMessage]) -> list[_Reply]:
    """The model replies of `messages` in order; a tool message belongs to the reply before it
    (so an id a server reuses in every reply still finds its own result)."""
    replies: list[_Reply] = []
    for message in messages:
        if message.type == "ai":
            replies.append(_Reply(tool_calls_of(message)))
        elif isinstance(message, ToolMessage) and replies:
            replies[-1].results.setdefault(str(message.tool_call_id), message)
    return replies


def _locate(replies: Sequence[_Reply], call: Mapping[str, Any]) -> tuple[int, int]:
    """(reply, position) of `call`: the latest reply holding a call with its id, name and
    arguments; after every reply when none does."""
    for index in range(len(replies) - 1, -1, -1):
        for position, made in enumerate(replies[index].calls):
            if made.get("id") == call.get("id") and _same(made, call):
                return index, position
    return len(replies), 0


def _ran(result: ToolMessage | None) -> bool:
    """The tool ran (a refusal, or a repeat answered from before, ran nothing)."""
    return (
        result is not None
        and tool_error_code(result) not in NOT_RUN_ERRORS
        and not result.response_metadata.get(REPEAT_MARK)
    )


def _answer(reply: _Reply, call: Mapping[str, Any]) -> ToolMessage | None:
    """The latest good result of a call in `reply` identical to `call` (an answer that was
    itself a repeat is skipped: it holds an earlier result)."""
    found = None
    for made in reply.calls:
        result = reply.result(made)
        if (
            _same(made, call)
            and result is not None
            and result.status != "error"
            and not result.response_metadata.get(REPEAT_MARK)
        ):
            found = result
    return found


def find_repeat(
    messages: Sequence[BaseMessage],
    call: Mapping[str, Any],
    writes_call: Writes | None = None,
) -> Repeat | None:
    """The earlier identical call of `call` in the current user turn that makes it redundant.

    One earlier in the same model reply (`same_step`), or the latest that returned a result
    without error (`answered`). `writes_call` says which calls may change something: a read is
    forgotten when a write ran after it (or in the same reply); a write is never forgotten.
    None when the call is new, or when every earlier identical call failed (a retry).
    """
    start, _ = current_turn(messages)
    replies = _replies(messages[start + 1 :])
    index, position = _locate(replies, call)
    if index < len(replies) and any(_same(c, call) for c in replies[index].calls[:position]):
        return Repeat("same_step")
    is_write = writes_call or (lambda _: False)
    call_writes = is_write(call)
    found: ToolMessage | None = None
    for reply in replies[:index]:
        answer = _answer(reply, call)
        wrote = any(is_write(c) and _ran(reply.result(c)) for c in reply.calls)
        if not call_writes and wrote:
            found = None
        elif answer is not None:
            found = answer
    return None if found is None else Repeat("answered", found)


def _same(made: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    return made.get("name") == call.get("name") and made.get("args") == call.get("args")


def repeat_payload(call: Mapping[str, Any], repeat: Repeat, limit: int = RESULT_CHARS) -> Payload:
    """A structured body for a repeat: what was not run and why, the earlier result, and what
    to do (the middleware answers `same_step` repeats with it)."""
    name = call.get("name")
    if repeat.kind == "same_step" or repeat.result is None:
        return dict(
            refusal(
                ErrorCode.REPEATED_CALL,
                REPEAT_SAME_STEP_MESSAGE.format(name=name),
                next_step=REPEAT_SAME_STEP_STEP,
            )
        )
    return dict(
        refusal(
            ErrorCode.REPEATED_CALL,
            REPEAT_ANSWERED_MESSAGE.format(name=name),
            result=clip_head(text_of(repeat.result), limit),
            next_step=REPEAT_ANSWERED_STEP,
        )
    )


def repeat_text(call: Mapping[str, Any], result: ToolMessage, limit: int = RESULT_CHARS) -> str:
    """The answer to a repeat of an answered call: the earlier result, then a one-line note."""
    note = REPEAT_NOTE.format(name=call.get("name"))
    return f"{clip_head(text_of(result), limit)}\n\n{note}"


def repeat_answer(
    call: Mapping[str, Any], repeat: Repeat, limit: int = RESULT_CHARS
) -> ToolMessage:
    """The tool message answering a repeat.

    A repeat of an answered call gets the earlier result as its content with a short note,
    status `success` (marked `response_metadata["repeated_call"]`): on a 1.5B model, an error
    body with "answer from `result`" was followed by an empty reply 5 times out of 5, while a
    plain result is something it answers from. A second identical call in the same reply gets
    the structured `repeated_call` error (its twin's result comes in the same step).
    """
    if repeat.kind == "answered" and repeat.result is not None:
        return ToolMessage(
            repeat_text(call, repeat.result, limit),
            tool_call_id=call["id"],
            name=call["name"],
            status="success",
            response_metadata={REPEAT_MARK: True},
        )
    return refusal_message(call, repeat_payload(call, repeat, limit))


def _not_idempotent(metadata: object) -> bool:
    """Whether a tool's MCP annotations say `idempotentHint: false` (its answer may change
    between identical calls, so only an idempotent read is answered from an earlier result)."""
    hints = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return isinstance(hints, Mapping) and hints.get("idempotentHint") is False


class RepeatedCallMiddleware(
    ModelCallHooks, RefusesToolCalls, AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]
):
    """Answer a tool call that repeats an earlier one of this user turn (same tool, same
    arguments) with the earlier result instead of running the tool again.

    The answer is the earlier result (cut at `result_chars`) followed by a one-line note to
    answer from it, with status `success` and `response_metadata["repeated_call"] = True`, so
    nothing is lost and the model has a result to answer from. Only a call that returned without
    error counts: retrying a failed call runs it. Fail closed: a tool is a read only when it is
    declared one (`attention_scoping.risk.declared_read` on the tools the model was offered and
    those given as `tools`, plus `reads=`); any other call, a tool it does not know or a call
    through `execute_tool=` of one included, counts as a write. A read is forgotten once a write
    ran after it; a write is never run twice. A read whose MCP annotations say
    `idempotentHint: false` runs again (only an idempotent read is answered from the earlier
    result). `load_context` always runs. A new user turn starts afresh, and two identical calls
    in one model reply run once (the second gets a `repeated_call` error). Calls are matched by
    position in the thread, so servers that reuse ids (`call_0` in every reply) are handled.
    Put it after the scoping middleware and before `ApprovalMiddleware`, so a repeated write is
    refused before anyone is asked to approve it again.

    Example:
        ```python
        from attention_scoping.hesitation.repeats import RepeatedCallMiddleware

        repeats = RepeatedCallMiddleware(allow_repeat={"job_status"}, reads=scoping.catalog)
        agent = create_agent(model, tools, middleware=[scoping, repeats])
        ```
    """

    def __init__(
        self,
        *,
        allow_repeat: Collection[str] = (),
        result_chars: int = RESULT_CHARS,
        tools: Iterable[Any] = (),
        reads: ScopeCatalog | Collection[str] = (),
        execute_tool: str | None = None,
    ) -> None:
        """Set up the guard.

        Args:
            allow_repeat: Tools that may run again with the same arguments (a status poll, a
                clock, a random draw: tools whose answer changes between calls).
            result_chars: Characters of the earlier result the answer carries (default 2000).
            tools: Tools (objects with `name` and `metadata`) to tell reads from writes beyond
                those offered to the model: a gateway's catalog tools, say, which run inside
                its executor, so a declared read through the gateway is not taken for a write.
            reads: Tools declared reads beyond their metadata: the scoping middleware's catalog
                (`scoping.catalog`, so `Scope(..., reads=[...])` counts) or names.
            execute_tool: A gateway's executor tool, whose calls are judged by the tool their
                `tool_name` argument names (default None: a call is judged by its own name).

        Raises:
            KitConfigError: `result_chars` below 1.
            KitTypeError: `reads` that is neither a catalog nor names.
        """
        super().__init__()
        if result_chars < 1:
            msg = f"result_chars must be at least 1, got {result_chars}"
            raise KitConfigError(msg)
        if isinstance(reads, str) or not isinstance(reads, ScopeCatalog | Collection):
            msg = f"reads must be a ScopeCatalog or a collection of tool names, not {reads!r}"
            raise KitTypeError(msg)
        self.allow_repeat = frozenset(allow_repeat)
        self.result_chars = result_chars
        self.execute_tool = execute_tool
        self.declared: frozenset[str] = (
            reads.reads if isinstance(reads, ScopeCatalog) else frozenset(reads)
        )
        """Names declared reads by `reads=` (whatever their metadata lacks)."""
        self._reads: dict[str, bool] = {}
        """Which tools are declared reads, by name (given, and learned from the model calls'
        tool lists); a tool not in it may write."""
        self._varying: set[str] = set()
        """Reads whose MCP annotations say `idempotentHint: false`: they run again."""
        self._learn(list(tools))

    def learn(self, tools: Iterable[Any], *, execute_tool: str | None = None) -> None:
        """Tell reads from writes for `tools` too, as `tools=` does: for a catalog built after
        the guard (an eval strategy's gateway, say), whose executor `execute_tool` names."""
        if execute_tool is not None:
            self.execute_tool = execute_tool
        self._learn(list(tools))

    def _learn(self, tools: Sequence[Any]) -> None:
        for tool in tools:
            if isinstance(tool, Mapping):  # provider dicts carry no metadata
                continue
            name = tool_name(tool)
            # one guard may serve several agents: a name any of them may write with stays a write
            read = declared_read(tool, name, self.declared) and self._reads.get(name, True)
            self._reads[name] = read
            if read and _not_idempotent(getattr(tool, "metadata", None)):
                self._varying.add(name)

    def writes_call(self, call: Mapping[str, Any]) -> bool:
        """Whether `call` may change something: any call but one of a declared read (a tool
        the guard never saw, `load_context` included, counts as a write)."""
        name = call.get("name")
        if self.execute_tool is not None and name == self.execute_tool:
            args = call.get("args")
            name = args.get("tool_name") if isinstance(args, Mapping) else None
        if not isinstance(name, str):
            return True
        known = self._reads.get(name)
        return not known if known is not None else name not in self.declared

    @override
    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """Note which offered tools write; the request is passed on unchanged."""
        self._learn(list(request.tools))
        return request

    def review_tool_call(self, request: ToolCallRequest) -> ToolMessage | None:
        """The earlier result for a repeated call, or None to run it."""
        call = request.tool_call
        if call["name"] == LOAD_CONTEXT or call["name"] in self.allow_repeat:
            return None
        if request.tool is not None:
            self._learn([request.tool])
        if call["name"] in self._varying:
            return None
        messages = request.state.get("messages", []) if isinstance(request.state, Mapping) else []
        repeat = find_repeat(messages, call, self.writes_call)
        if repeat is None:
            return None
        return repeat_answer(call, repeat, self.result_chars)


__all__ = [
    "REPEAT_MARK",
    "RESULT_CHARS",
    "Repeat",
    "RepeatedCallMiddleware",
    "find_repeat",
    "repeat_answer",
    "repeat_payload",
    "repeat_text",
]
