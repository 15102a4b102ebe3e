"""Hesitation middleware: catch a stall after a schema was disclosed, hide it, nudge, retry.

A stall is a model message with no tool call that parrots a disclosed schema or asks for
confirmation instead of acting (see `attention_scoping.hesitation.radar`). On a stall the text
goes to a `{"type": "think", ...}` custom stream event (with the message id, since the messages
stream already emitted it), a nudge naming the exact call is added, and the model is called
again: at most `max_nudges` times per user turn. Then the model's last answer stands as it is;
only an answer that announces an action it did not take gets an honest note that nothing ran.

An ungrounded answer is nudged the same way, once per turn: the turn's first reply calls no
tool although the user's message needs one of the bound tools (`expect_tool_call`; by default
the declared reads the core selector matched to the message, `options.preselected_tools`).

What is never done: the nudge is a runtime note, marked synthetic, never written in the user's
voice or as their consent; the user's request decides (a request for text, an explanation or a
draft is answered, not nudged). Fail closed on risk (`attention_scoping.risk`): code names and
nudges toward declared reads only (`metadata={"risk": "read"}`, an MCP `readOnlyHint: true`, or
a scope's `reads=`, passed here as `reads=`); a tool nobody classified may write. So the hint
and the ungrounded nudge name only declared reads, and a stall's nudge pushes toward another
tool only when the application opts in (`Nudging(writes=True)`); the model may still call a
write it has in view. A message that needs no tool (`hesitation.assist`) gets no hint and no
ungrounded nudge, nor does a close call of the selector.

Two forms, one policy (the base class `HesitationPolicy`):

- `HesitationMiddleware` retries inside `wrap_model_call`: the stalled message and the nudge
  never enter the graph state or its checkpoints, and the retry sees the tool list the outer
  middleware (scoping, gating) narrowed. Works in a hand-built graph through
  `attention_scoping.graph.make_model_node`.
- `HesitationNodeMiddleware` is the post-model node: its `after_model` hook removes the stalled
  message, adds the nudge turn to the state (marked so a UI can hide it) and jumps back to the
  model. `make_hesitation_node` is the same node for a hand-built graph.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ResponseT,
)
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters.hooks import AsyncModelHandler, ModelHandler
from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.messages import hit_output_limit, is_disclosure_call
from attention_scoping.common.text import names_in_text
from attention_scoping.disclosure.in_history import callable_tools
from attention_scoping.graph import ScopedAgentState
from attention_scoping.hesitation.assist import best_score, needs_tool, refers_back
from attention_scoping.hesitation.errors import KitConfigError, KitTypeError, check_at_least
from attention_scoping.hesitation.markers import ASKS_ABOUT_TOOLS
from attention_scoping.hesitation.options import (
    DEFAULT_GROUNDING,
    DEFAULT_MAX_NUDGES,
    DEFAULT_NUDGING,
    DEFAULT_RADAR,
    GROUNDING_PRESETS,
    Grounding,
    GroundingPreset,
    Nudging,
    Radar,
)
from attention_scoping.hesitation.options import ExpectToolCall as ExpectToolCall
from attention_scoping.hesitation.options import NudgeRole as NudgeRole
from attention_scoping.hesitation.pending import (
    NUDGE_MARK,
    Pending,
    bound_disclosures,
    current_turn,
    gateway_disclosures,
)
from attention_scoping.hesitation.radar import (
    Hesitation,
    detect_hesitation,
)
from attention_scoping.hesitation.state import STATE_KEY, HesitationState
from attention_scoping.hesitation.texts import (
    OUTPUT_LIMIT_MARK,
    hint_text,
    honest_answer,
    nudge_text,
    ungrounded_text,
)
from attention_scoping.scopes import ScopeCatalog
from attention_scoping.select import SELECTION_KEY

logger = logging.getLogger(__name__)

__all__ = [
    "ASKS_ABOUT_TOOLS",
    "STATE_KEY",
    "HesitationGraphState",
    "HesitationMiddleware",
    "HesitationPolicy",
    "HesitationState",
    "detect_hesitation",
    "honest_answer",
]

UNGROUNDED = "ungrounded"
"""The signal (and think-event reason) of an answer given without the expected tool call."""
NAMED_NOT_CALLED = "named_not_called"
"""The signal of an ungrounded reply that writes out an expected tool's name: it describes,
announces or claims the call instead of making it."""


class HesitationGraphState(ScopedAgentState, HesitationState[Any]):
    """State for a hand-built graph: messages, the core's scoping keys (`active_context`,
    `scope_opened`, `scope_selection`) and the nudge counter (`hesitation`)."""


CUT_SHOWN = 400
"""Characters of a reply cut at the output cap that the retry shows the model again."""


def shown_again(message: AIMessage) -> AIMessage:
    """The hidden reply as the retry shows it: whole, unless it stopped at the output cap. Such a
    reply (often one list repeated until the cap) is cut to its start, so the retry neither
    re-reads it in full nor invites the model to write it out again."""
    text = message.text
    if not hit_output_limit(message) or len(text) <= CUT_SHOWN:
        return message
    cut = text[:CUT_SHOWN].rstrip() + OUTPUT_LIMIT_MARK
    return message.model_copy(update={"content": cut})


def is_nudge(message: BaseMessage) -> bool:
    """Whether `message` is a hesitation nudge (synthetic: a UI hides it)."""
    return bool(message.additional_kwargs.get(NUDGE_MARK))


@dataclass
class _Turn:
    """What one model call needs to judge and repair a stall."""

    key: str
    used: int
    pending: list[Pending]
    request: str = ""
    """The user's message of this turn (the radar reads it: a tool question, a request for
    text, a review first)."""
    nudges: int = 0
    extra: list[AnyMessage] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)
    """Texts of the stalls seen in this call (a model repeating one keeps its answer)."""
    expected: list[str] = field(default_factory=list)
    """Bound tools the user's message needs (`expect_tool_call`), best first, that code may
    name (`HesitationPolicy.expected_tools`: reads only, none when the message needs no tool)."""

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [p.schema for p in self.pending]


@dataclass(frozen=True)
class _Decision:
    """What to do about one stalled message."""

    verdict: Hesitation
    action: Literal["nudge", "give_up"]
    targets: list[Pending]
    round: int

    @property
    def tools(self) -> list[str]:
        return [p.name for p in self.targets]


def selection_of(
    state: Mapping[str, Any], messages: Sequence[BaseMessage]
) -> Mapping[str, Any] | None:
    """Pre-selection's record (`scope_selection`) when it was made for the current user turn."""
    record = state.get(SELECTION_KEY)
    if not isinstance(record, Mapping) or record.get("turn") != current_turn(messages)[1]:
        return None
    return record


def _in_order(pending: Sequence[Pending], names: Sequence[str]) -> list[Pending]:
    """The disclosed tools named in `names`, in that order (best first)."""
    order = {name: i for i, name in enumerate(names)}
    return sorted((p for p in pending if p.name in order), key=lambda p: order[p.name])


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def default_nudge(pending: Sequence[Pending], verdict: Hesitation) -> str:
    """The runtime note for a verdict: the call to make after an ungrounded answer, else the
    exact call after a stall."""
    if UNGROUNDED in verdict.signals:
        return ungrounded_text(pending, named=NAMED_NOT_CALLED in verdict.signals)
    return nudge_text(pending, verdict.tools)


def _grounding(grounding: object) -> Grounding:
    """`grounding` as a `Grounding` (a preset name resolved), or an error naming the valid ones."""
    if isinstance(grounding, str):
        if grounding not in GROUNDING_PRESETS:
            valid = ", ".join(map(repr, GROUNDING_PRESETS))
            msg = f"grounding={grounding!r} is not a preset; valid: {valid}"
            raise KitConfigError(msg)
        return GROUNDING_PRESETS[grounding]
    if not isinstance(grounding, Grounding):
        msg = f"grounding must be a Grounding or a preset name, not {grounding!r}"
        raise KitTypeError(msg)
    return grounding


def _check_groups(radar: object, nudging: object, reads: object) -> None:
    """Refuse an option group of the wrong type, and `reads` that is not a catalog or names."""
    for option, value, kind in (("radar", radar, Radar), ("nudging", nudging, Nudging)):
        if not isinstance(value, kind):
            msg = f"{option} must be a {kind.__name__}, not {value!r}"
            raise KitTypeError(msg)
    if isinstance(reads, str) or not isinstance(reads, ScopeCatalog | Collection):
        msg = f"reads must be a ScopeCatalog or a collection of tool names, not {reads!r}"
        raise KitTypeError(msg)


class HesitationPolicy(AgentMiddleware[HesitationState[ResponseT], ContextT, ResponseT]):
    """What both hesitation forms share: the radar's configuration, which stalls to nudge,
    the nudge message and the bound. Use `HesitationMiddleware` or `HesitationNodeMiddleware`."""

    state_schema = HesitationState  # type: ignore[assignment]

    def __init__(
        self,
        *,
        max_nudges: int = DEFAULT_MAX_NUDGES,
        radar: Radar = DEFAULT_RADAR,
        nudging: Nudging = DEFAULT_NUDGING,
        grounding: Grounding | GroundingPreset = DEFAULT_GROUNDING,
        reads: ScopeCatalog | Collection[str] = (),
        emit_events: bool = True,
        name: str | None = None,
    ) -> None:
        """Configure the radar and the loop.

        Args:
            max_nudges: Nudges per user turn before the model's answer stands (default 2;
                0 = never nudge).
            radar: What counts as a stall: `Radar(threshold=, markers=, watch_bound_tools=,
                ignore_tools=, skip_when_user_asks=, gateway=)` (see `hesitation.options`).
            nudging: How a stall is nudged: `Nudging(role=, writes=, text=, give_up=)`; the
                default sends a runtime note as a user message, never the user's consent, and
                never pushes toward a tool that is not a declared read (`Nudging(writes=True)`:
                the application opts in for stall nudges; never the hint or the ungrounded
                nudge).
            grounding: A first reply that answers without the tool the message needs:
                `Grounding(expect_tool_call=, hint=)` or a preset, `"hint"` (default: name the
                declared reads the core selector matched before the first reply, and nudge a
                reply that skips them once), `"check"` (only the nudge) or `"off"`.
            reads: Tools declared reads beyond their own metadata: the scoping middleware's
                catalog (`scoping.catalog`, so `Scope(..., reads=[...])` counts) or names.
                Default none: only a tool's metadata or MCP annotations declare it a read.
            emit_events: Write think events to the custom stream (default on).
            name: Middleware name, to add two instances to one agent.

        Raises:
            KitConfigError: A bad count, preset or option value, or options that contradict.
            KitTypeError: An option group of the wrong type.
        """
        super().__init__()
        expects = _grounding(grounding)
        _check_groups(radar, nudging, reads)
        check_at_least("max_nudges", max_nudges)
        self.radar: Radar = radar
        """The radar options in force."""
        self.nudging: Nudging = nudging
        """The nudging options in force."""
        self.grounding: Grounding = expects
        """The grounding options in force (preset resolved)."""
        self.max_nudges = max_nudges
        self.markers = radar.markers
        self.threshold = radar.threshold
        self.watch_bound_tools = radar.watch_bound_tools
        self.ignore_tools = radar.ignored
        self.gateway = radar.gateway
        self.reads: ScopeCatalog | frozenset[str] = (
            reads if isinstance(reads, ScopeCatalog) else frozenset(reads)
        )
        """Tools declared reads beyond their metadata (a catalog's declared reads, or names)."""
        self.skip_when_user_asks = radar.skip_when_user_asks
        self.nudge = nudging.text or default_nudge
        self.give_up = nudging.give_up or honest_answer
        self.emit_events = emit_events
        self.nudge_writes = nudging.writes
        self.nudge_role: NudgeRole = nudging.role
        self.expect_tool_call = expects.expect_tool_call
        self.hint_expected = expects.hints
        self._name = name

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    # -- pure steps -------------------------------------------------------------------------

    def disclosed(self, messages: Sequence[BaseMessage], tools: Sequence[Any]) -> list[Pending]:
        """Schemas a stall could be about (the gateway's first, with `Radar(gateway=)`; then the
        bound `tools`; in a native disclosure mode only those the model can call now:
        `disclosure.callable_tools`)."""
        pending = [] if self.gateway is None else gateway_disclosures(messages, self.gateway)
        if self.watch_bound_tools:
            known = {p.name for p in pending}
            now = callable_tools(tools, messages)
            listed = tools if now is None else now
            names = {tool_name(t) for t in listed if not isinstance(t, Mapping)}
            bound = bound_disclosures(
                listed, messages, ignore=self.ignore_tools, reads=self.scope_reads(names)
            )
            pending += [p for p in bound if p.name not in known]
        return pending

    def scope_reads(self, names: Collection[str]) -> frozenset[str]:
        """Which of `names` `reads=` declares reads (a scope's `reads`, or names given)."""
        if isinstance(self.reads, ScopeCatalog):
            catalog = self.reads
            return frozenset(n for n in names if n in catalog.declared_reads or n in catalog.reads)
        return frozenset(n for n in names if n in self.reads)

    def turn_of(
        self, messages: Sequence[BaseMessage], state: Any, tools: Sequence[Any]
    ) -> _Turn | None:
        """The user's turn to judge, or None when nothing needs judging."""
        start, key = current_turn(messages)
        user = messages[start].text if start >= 0 else ""
        asks = self.skip_when_user_asks
        if asks is not None and start >= 0 and asks.search(user):
            return None
        pending = self.disclosed(messages, tools)
        if not pending:
            return None
        record = (state.get(STATE_KEY) if isinstance(state, Mapping) else None) or {}
        used = int(record.get("nudges", 0)) if record.get("turn") == key else 0
        expected = self.expected_tools(state, messages, user, pending)
        return _Turn(key=key, used=used, pending=pending, request=user, expected=expected)

    def expected_tools(
        self,
        state: Any,
        messages: Sequence[BaseMessage],
        request: str,
        pending: Sequence[Pending],
    ) -> list[str]:
        """The bound tools the user's message needs (`expect_tool_call`), best first, that code
        may name: declared reads only (`Pending.read`: `attention_scoping.risk.declared_read`).
        When the core selector made this turn's expectation: none on its close call, and none
        when the message needs no tool at all (`assist.needs_tool`: no content word shared with
        them and a best score below `ASSIST_MIN_SCORE`, or it asks about the conversation
        before it)."""
        if self.expect_tool_call is None or not isinstance(state, Mapping):
            return []
        by_name = {p.name: p for p in pending}
        names = dict.fromkeys(self.expect_tool_call(state, messages))
        wanted = [by_name[t] for t in names if t in by_name]
        reads = [p for p in wanted if p.read]
        record = selection_of(state, messages)
        if not reads or record is None:  # no selector record: the app's own expectation stands
            return [p.name for p in reads]
        if record.get("reason") == "close_call":
            return []
        earlier = ""
        if refers_back(request):  # the earlier text is read only for a message that points back
            start, _ = current_turn(messages)
            earlier = "\n".join(m.text for m in messages[: max(start, 0)])
        if not needs_tool(request, [p.words for p in reads], best_score(record), earlier=earlier):
            logger.info("hesitation: no hint or nudge: the message needs no tool")
            return []
        return [p.name for p in reads]

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

    def ungrounded(self, message: AIMessage, turn: _Turn) -> Hesitation | None:
        """A stall verdict for a reply without a tool call on a turn whose message needs a
        bound tool (`expect_tool_call`): the turn's first reply, or a later one that names an
        expected tool (it describes the call instead of making it); else None."""
        if not turn.expected or message.tool_calls or getattr(message, "invalid_tool_calls", None):
            return None
        named = names_in_text(message.text, turn.expected)
        if turn.used + turn.nudges > 0 and not named:
            return None  # nudged once already: an answer that names no tool stands
        if named:
            reason = f"names {', '.join(named)} but calls no tool"
            signals: tuple[str, ...] = (UNGROUNDED, NAMED_NOT_CALLED)
        else:
            matches = ", ".join(turn.expected[:3])
            reason = f"answered without a tool call; the message matches {matches}"
            signals = (UNGROUNDED,)
        return Hesitation(
            stalled=True,
            score=self.threshold,
            reasons=(reason,),
            tools=(*named, *(t for t in turn.expected if t not in named)),
            threshold=self.threshold,
            signals=signals,
        )

    def may_nudge(self, pending: Pending) -> bool:
        """Whether a stall's nudge may push the model toward `pending`: a declared read
        (`Pending.read`), or any tool in view only when the application opted in
        (`Nudging(writes=True)`). An approval tier does not open writes to nudges: code may
        assist with declared reads; only the model or the application opens the rest."""
        return self.nudge_writes or pending.read

    def hint_due(self, messages: Sequence[BaseMessage]) -> bool:
        """Whether this call may carry the hint: it is on, and no reply or nudge came yet in
        the user's turn (cheap: nothing about the tools is worked out). A disclosure pair code
        added in a native mode is not a reply."""
        if not self.hint_expected or self.expect_tool_call is None:
            return False
        start, _ = current_turn(messages)
        later = messages[start + 1 :]
        replied = any(
            (isinstance(m, AIMessage) and not is_disclosure_call(m)) or is_nudge(m) for m in later
        )
        return start >= 0 and not replied

    def hint(self, messages: Sequence[BaseMessage], turn: _Turn | None) -> AnyMessage | None:
        """The runtime note naming the expected tools before the turn's first reply
        (`hint_expected`), or None: no expectation (none, writes only, a close call, or a
        message that needs no tool: `expected_tools`), or a reply or a nudge came already."""
        if turn is None or not turn.expected or not self.hint_due(messages):
            return None
        targets = [p for p in _in_order(turn.pending, turn.expected) if p.read]
        if not targets:
            return None
        logger.info("hesitation: hint before the first reply: %s", [p.name for p in targets])
        return self._note(hint_text(targets), {"hint": [p.name for p in targets]})

    def prepare(
        self, request: ModelRequest[ContextT]
    ) -> tuple[ModelRequest[ContextT], _Turn | None]:
        """The turn to judge, and the request with the expected tools' hint when one is due."""
        messages = list(request.messages)
        turn = self.turn_of(messages, request.state, list(request.tools))
        note = self.hint(messages, turn)
        if note is None:
            return request, turn
        return request.override(messages=[*messages, note]), turn

    def decide(self, message: AIMessage, turn: _Turn) -> _Decision | None:
        """None to keep `message` as the answer; else nudge, or give up at the bound."""
        verdict = self.judge(message, turn) or self.ungrounded(message, turn)
        if not verdict:
            return None
        # an action announced (or a call described or claimed), not taken
        promises = "promise" in verdict.signals or NAMED_NOT_CALLED in verdict.signals
        if not promises and any(_same_text(message.text, seen) for seen in turn.stalled):
            return None  # asked again, the model keeps its answer: it stands
        concerned = _in_order(turn.pending, verdict.tools) or turn.pending
        if UNGROUNDED in verdict.signals:  # the selector's guess: code names declared reads only
            targets = [p for p in concerned if p.read]
        else:
            targets = [p for p in concerned if self.may_nudge(p)]
        if not targets:
            logger.info("hesitation: not nudging toward %s (writes, no approval tier)", verdict)
            return None
        total = turn.used + turn.nudges
        action: Literal["nudge", "give_up"] = "nudge" if total < self.max_nudges else "give_up"
        if action == "give_up" and not promises:
            return None  # the model's answer stands as it is
        return _Decision(verdict, action, targets, total + 1)

    def event(self, message: AIMessage, decision: _Decision) -> dict[str, Any]:
        """The think event of a stall (`message_id` names the streamed message to hide)."""
        return {
            "type": "think",
            "content": message.text,
            "message_id": message.id,
            "reason": UNGROUNDED if UNGROUNDED in decision.verdict.signals else "hesitation",
            "action": decision.action,
            "round": decision.round,
            "max_nudges": self.max_nudges,
            "tools": decision.tools,
            "score": round(decision.verdict.score, 2),
            "reasons": list(decision.verdict.reasons),
        }

    def nudge_message(
        self, decision: _Decision, *, stalled: AIMessage | None = None
    ) -> HumanMessage | SystemMessage:
        """The nudge turn: a runtime note, marked synthetic (`NUDGE_MARK`) so a UI hides it.

        `stalled` quotes the hidden reply in the note (for the node form, where the stalled
        message leaves the history the model sees)."""
        text = self.nudge(decision.targets, decision.verdict)
        if stalled is not None:
            quoted = shown_again(stalled).text.strip()
            text += "\nYour hidden reply was:\n<<<\n" + quoted + "\n>>>"
        return self._note(
            text, {"round": decision.round, "stalled_message_id": stalled and stalled.id}
        )

    def _note(self, text: str, record: dict[str, Any]) -> HumanMessage | SystemMessage:
        """A runtime note in the nudge role, marked synthetic (`NUDGE_MARK` holds `record`)."""
        mark: dict[str, Any] = {
            NUDGE_MARK: record,
            "synthetic": True,  # not the user's turn (attention_scoping.messages.is_user_turn)
        }
        kind = SystemMessage if self.nudge_role == "system" else HumanMessage
        return kind(content=text, id=f"nudge-{uuid.uuid4().hex}", additional_kwargs=mark)

    def final_message(self, message: AIMessage, decision: _Decision) -> AIMessage:
        """The honest answer after the bound (`give_up`), for a model that announced an action."""
        return AIMessage(
            content=self.give_up(decision.tools, message.text),
            id=f"hesitation-{uuid.uuid4().hex}",
            response_metadata={"hesitation": "gave_up", "stalled_message_id": message.id},
        )

    def emit(self, writer: Callable[[Any], None] | None, event: dict[str, Any]) -> None:
        """Write `event` to the custom stream, if events are on and there is a stream."""
        if not self.emit_events:
            return
        if writer is None:
            try:
                from langgraph.config import get_stream_writer

                writer = get_stream_writer()
            except RuntimeError:  # outside a graph run
                return
        writer(event)
        logger.info("hesitation (%s): %s", event["action"], event["reasons"])


class HesitationMiddleware(HesitationPolicy[ResponseT, ContextT]):
    """Turn schema-parroting stalls into tool calls: think event, nudge, bounded retry, all
    inside the model call (nothing of it reaches the state or the checkpoints).

    Place it after scoping and before approval/HITL:
    `[AttentionScopingMiddleware(...), HesitationMiddleware(reads=scoping.catalog),
    ApprovalMiddleware(...)]` (or `HumanInTheLoopMiddleware(..., interrupt_mode="per_call")`).
    Defaults: at most 2 nudges per turn, the English radar, nudges as user-role runtime notes
    toward declared reads only, and the `"hint"` grounding (the selector's matched reads named
    before the first reply).

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.hesitation.middleware import HesitationMiddleware
        from attention_scoping.middleware import AttentionScopingMiddleware

        scoping = AttentionScopingMiddleware(scopes)
        agent = create_agent(model, tools=tools,
                             middleware=[scoping, HesitationMiddleware(reads=scoping.catalog)])
        for mode, chunk in agent.stream(inputs, stream_mode=["custom", "updates"]):
            if mode == "custom" and chunk.get("type") == "think":
                show_dimmed(chunk["content"])  # and hide the message chunk["message_id"]
        ```
    """

    def _step(
        self, request: ModelRequest[ContextT], response: ModelResponse[ResponseT], turn: _Turn
    ) -> ModelRequest[ContextT] | ModelResponse[ResponseT] | None:
        """After one model reply: None (keep it), a request to retry, or a final response."""
        if response.structured_response is not None or not response.result:
            return None
        message = response.result[-1]
        if not isinstance(message, AIMessage):
            return None
        decision = self.decide(message, turn)
        if decision is None:
            return None
        writer = getattr(request.runtime, "stream_writer", None) if request.runtime else None
        self.emit(writer, self.event(message, decision))
        if decision.action == "give_up":
            final = self.final_message(message, decision)
            return ModelResponse(result=[*response.result[:-1], final])
        turn.nudges += 1
        turn.stalled.append(message.text)
        turn.extra += [shown_again(message), self.nudge_message(decision)]
        return request.override(messages=[*request.messages, *turn.extra])

    def _after(
        self,
        request: ModelRequest[ContextT],
        response: ModelResponse[ResponseT],
        turn: _Turn | None,
    ) -> tuple[ModelResponse[ResponseT], ModelRequest[ContextT] | None]:
        """The reply to keep after one model reply, and the request to send next (None: done);
        the loop both model-call hooks run around their handler."""
        step = None if turn is None else self._step(request, response, turn)
        if isinstance(step, ModelResponse):
            return step, None
        return response, step

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

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT] | ExtendedModelResponse[ResponseT]:
        """Call the model; on a stall, emit a think event, nudge and call it again (bounded)."""
        request, turn = self.prepare(request)
        response, again = self._after(request, handler(request), turn)
        while again is not None:
            response, again = self._after(request, handler(again), turn)
        return self._finish(response, turn)

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT] | ExtendedModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        request, turn = self.prepare(request)
        response, again = self._after(request, await handler(request), turn)
        while again is not None:
            response, again = self._after(request, await handler(again), turn)
        return self._finish(response, turn)


def _gave_up(response: ModelResponse[Any]) -> bool:
    last = response.result[-1] if response.result else None
    return isinstance(last, AIMessage) and last.response_metadata.get("hesitation") == "gave_up"
