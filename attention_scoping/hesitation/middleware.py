"""Hesitation middleware: catch a stall after a schema was disclosed, hide it, nudge, retry.

A stall is a model message with no tool call that parrots a disclosed schema or asks for
confirmation instead of acting (see `attention_scoping.hesitation.radar`). On a stall the text
goes to a `{"type": "think", ...}` custom stream event (with the message id, since the messages
stream already emitted it), the stalled message stays out of the conversation, a nudge turn
naming the
exact call is added, and the model is called again: at most `max_nudges` times per user turn,
then the user gets an honest answer that nothing was executed.

The loop runs inside `wrap_model_call` (not `after_model` + `jump_to`): the retry sees the tool
list the outer middleware (scoping, gating) narrowed, the stalled message and the nudge never
enter the graph state or its checkpoints, and the same hook works in a hand-built `StateGraph`
through `attention_scoping.graph.make_model_node`.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ResponseT,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.graph import ScopedAgentState
from attention_scoping.hesitation.pending import (
    META_TOOLS,
    Pending,
    bound_disclosures,
    current_turn,
    gateway_disclosures,
    nudge_text,
)
from attention_scoping.hesitation.radar import (
    DEFAULT_MARKERS,
    DEFAULT_THRESHOLD,
    Hesitation,
    HesitationMarkers,
    detect_hesitation,
)

logger = logging.getLogger(__name__)

__all__ = [
    "STATE_KEY",
    "HesitationGraphState",
    "HesitationMiddleware",
    "HesitationState",
    "detect_hesitation",
    "honest_answer",
]

STATE_KEY = "hesitation"
"""Private state key: `{"turn": <key of the user's turn>, "nudges": <count>}`."""

ASKS_ABOUT_TOOLS = re.compile(
    r"\b(?:what|which) (?:parameters|fields|arguments|options|inputs|settings)\b|"
    r"\bhow (?:do|can|should) (?:i|you|we) (?:use|call)\b|\bschema\b|"
    r"\bwhat does \S+ (?:need|take|require|accept|expect)\b|"
    r"\b(?:don't|do not|without) (?:run|execut|call|send|creat|schedul)\w*\b",
    re.IGNORECASE,
)
"""A user message matching this asks *about* a tool (or forbids running it): no nudging."""


class HesitationState(AgentState[ResponseT]):
    """Agent state with the private nudge counter of the current user turn."""

    hesitation: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


HesitationGraphState = ScopedAgentState
"""State for a hand-built graph (messages, active scope, gate keys, the nudge counter)."""


def honest_answer(tools: Sequence[str], draft: str) -> str:
    """Final answer after the nudge bound: say plainly that nothing ran, then the model's ask."""
    names = ", ".join(tools) if tools else "the tool"
    text = f"Nothing was executed: I did not call {names}."
    draft = draft.strip()
    return f"{text}\n\n{draft}" if draft else text


@dataclass
class _Turn:
    """What one model call needs to judge and repair a stall."""

    key: str
    used: int
    pending: list[Pending]
    request: str = ""
    """The user's message of this turn (the radar reads it: a tool question, a review first)."""
    nudges: int = 0
    extra: list[AnyMessage] = field(default_factory=list)

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [p.schema for p in self.pending]


class HesitationMiddleware(AgentMiddleware[HesitationState[ResponseT], ContextT, ResponseT]):
    """Turn schema-parroting stalls into tool calls: think event, nudge, bounded retry.

    Place it after scoping and gating and before approval/HITL:
    `[AttentionScopingMiddleware(...), <gating>, HesitationMiddleware(), HumanInTheLoopMiddleware(
    ..., interrupt_mode="per_call")]`.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping import HesitationMiddleware, ToolGateway

        agent = create_agent(model, tools=gateway.tools,
                             middleware=[HesitationMiddleware(max_nudges=2)])
        for mode, chunk in agent.stream(inputs, stream_mode=["custom", "updates"]):
            if mode == "custom" and chunk.get("type") == "think":
                show_dimmed(chunk["content"])  # and hide the message chunk["message_id"]
        ```
    """

    state_schema = HesitationState  # type: ignore[assignment]

    def __init__(
        self,
        *,
        max_nudges: int = 2,
        markers: HesitationMarkers = DEFAULT_MARKERS,
        threshold: float = DEFAULT_THRESHOLD,
        watch_bound_tools: bool = True,
        ignore_tools: Sequence[str] = tuple(sorted(META_TOOLS)),
        skip_when_user_asks: re.Pattern[str] | None = ASKS_ABOUT_TOOLS,
        nudge: Callable[[Sequence[Pending], Hesitation], str] | None = None,
        give_up: Callable[[Sequence[str], str], str] = honest_answer,
        emit_events: bool = True,
        name: str | None = None,
    ) -> None:
        """Configure the radar and the loop.

        Args:
            max_nudges: Nudges per user turn before giving up (0 = only hide and report).
            markers: Phrase markers of the radar (`radar.DEFAULT_MARKERS`: English).
            threshold: Radar score at or above which a message is a stall.
            watch_bound_tools: Also treat the schemas bound to the call (promoted or visible
                tools) as disclosed, while no action tool has run in the turn.
            ignore_tools: Tools whose schemas never count (navigation and gateway tools).
            skip_when_user_asks: A user message matching it asks about tools (or forbids
                running them): its answers are not judged. None judges everything. Other user
                messages are passed to the radar as `request=`, so it can tell a draft the
                user asked to review, or a question about a value the request lacks, from a
                stall.
            nudge: `(pending, verdict) -> text` of the nudge turn (default: `nudge_text`).
            give_up: `(tool names, stalled text) -> final answer` after the bound.
            emit_events: Write think events to the custom stream.
            name: Middleware name, to add two instances to one agent.
        """
        super().__init__()
        if max_nudges < 0:
            msg = f"max_nudges must be >= 0, not {max_nudges!r}"
            raise ValueError(msg)
        self.max_nudges = max_nudges
        self.markers = markers
        self.threshold = threshold
        self.watch_bound_tools = watch_bound_tools
        self.ignore_tools = frozenset(ignore_tools)
        self.skip_when_user_asks = skip_when_user_asks
        self.nudge = nudge or (lambda pending, verdict: nudge_text(pending, verdict.tools))
        self.give_up = give_up
        self.emit_events = emit_events
        self._name = name

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    # -- pure steps -------------------------------------------------------------------------

    def disclosed(self, request: ModelRequest[ContextT]) -> list[Pending]:
        """Schemas a stall in this call could be about (gateway first, then bound tools)."""
        messages = list(request.messages)
        pending = gateway_disclosures(messages)
        if self.watch_bound_tools:
            known = {p.name for p in pending}
            bound = bound_disclosures(request.tools, messages, ignore=self.ignore_tools)
            pending += [p for p in bound if p.name not in known]
        return pending

    def _turn(self, request: ModelRequest[ContextT]) -> _Turn | None:
        messages = list(request.messages)
        start, key = current_turn(messages)
        asks = self.skip_when_user_asks
        if asks is not None and start >= 0 and asks.search(messages[start].text):
            return None
        pending = self.disclosed(request)
        if not pending:
            return None
        state: Mapping[str, Any] = request.state if isinstance(request.state, Mapping) else {}
        record = state.get(STATE_KEY) or {}
        used = int(record.get("nudges", 0)) if record.get("turn") == key else 0
        user = messages[start].text if start >= 0 else ""
        return _Turn(key=key, used=used, pending=pending, request=user)

    def judge(self, message: AIMessage, turn: _Turn) -> Hesitation | None:
        """The radar's verdict on `message` if it is a candidate (no tool call), else None."""
        if message.tool_calls or getattr(message, "invalid_tool_calls", None):
            return None
        return detect_hesitation(
            message.text,
            turn.schemas,
            request=turn.request or None,
            markers=self.markers,
            threshold=self.threshold,
        )

    def _emit(self, request: ModelRequest[ContextT], event: dict[str, Any]) -> None:
        if not self.emit_events:
            return
        writer = getattr(request.runtime, "stream_writer", None) if request.runtime else None
        if writer is None:
            try:
                from langgraph.config import get_stream_writer

                writer = get_stream_writer()
            except RuntimeError:  # outside a graph run
                return
        writer(event)

    def _step(
        self, request: ModelRequest[ContextT], response: ModelResponse[ResponseT], turn: _Turn
    ) -> ModelRequest[ContextT] | ModelResponse[ResponseT] | None:
        """After one model reply: None (keep it), a request to retry, or a final response."""
        if response.structured_response is not None or not response.result:
            return None
        message = response.result[-1]
        if not isinstance(message, AIMessage):
            return None
        verdict = self.judge(message, turn)
        if not verdict:
            return None
        total = turn.used + turn.nudges
        tools = list(verdict.tools) or [p.name for p in turn.pending]
        action = "nudge" if total < self.max_nudges else "give_up"
        event = {
            "type": "think",
            "content": message.text,
            "message_id": message.id,
            "reason": "hesitation",
            "action": action,
            "round": total + 1,
            "max_nudges": self.max_nudges,
            "tools": tools,
            "score": round(verdict.score, 2),
            "reasons": list(verdict.reasons),
        }
        self._emit(request, event)
        logger.info("hesitation (%s, score %.2f): %s", action, verdict.score, verdict.reasons)
        if action == "give_up":
            final = AIMessage(
                content=self.give_up(tools, message.text),
                id=f"hesitation-{uuid.uuid4().hex}",
                response_metadata={"hesitation": "gave_up", "stalled_message_id": message.id},
            )
            return ModelResponse(result=[*response.result[:-1], final])
        turn.nudges += 1
        nudge = HumanMessage(
            content=self.nudge(turn.pending, verdict),
            id=f"nudge-{uuid.uuid4().hex}",
        )
        turn.extra += [message, nudge]
        return request.override(messages=[*request.messages, *turn.extra])

    def _finish(
        self, response: ModelResponse[ResponseT], turn: _Turn | None
    ) -> ModelResponse[ResponseT] | ExtendedModelResponse[ResponseT]:
        if turn is None or (turn.nudges == 0 and not _gave_up(response)):
            return response
        count = turn.used + turn.nudges
        return ExtendedModelResponse(
            model_response=response,
            command=Command(update={STATE_KEY: {"turn": turn.key, "nudges": count}}),
        )

    # -- LangChain hooks --------------------------------------------------------------------

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]],
    ) -> ModelResponse[ResponseT] | ExtendedModelResponse[ResponseT]:
        """Call the model; on a stall, emit a think event, nudge and call it again (bounded)."""
        turn = self._turn(request)
        response = handler(request)
        while turn is not None:
            step = self._step(request, response, turn)
            if step is None:
                break
            if isinstance(step, ModelResponse):
                response = step
                break
            response = handler(step)
        return self._finish(response, turn)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelResponse[ResponseT] | ExtendedModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        turn = self._turn(request)
        response = await handler(request)
        while turn is not None:
            step = self._step(request, response, turn)
            if step is None:
                break
            if isinstance(step, ModelResponse):
                response = step
                break
            response = await handler(step)
        return self._finish(response, turn)


def _gave_up(response: ModelResponse[Any]) -> bool:
    last = response.result[-1] if response.result else None
    return isinstance(last, AIMessage) and last.response_metadata.get("hesitation") == "gave_up"
