"""One session as a strategy plays it: the transcript, the request of every model call
(rendered in provider order) and its bill under each price model, computed as the call is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from attention_scoping.observe.render import as_provider_message, stable_json
from attention_scoping_lab.cost import (
    CallCost,
    PriceModel,
    PromptCache,
    Request,
    render_request,
)
from attention_scoping_lab.simulate.sessions import CALL_SECONDS, TURN_GAP_SECONDS


@dataclass(frozen=True)
class CallRecord:
    """One model call: which user turn, whether it opened the turn, its bill per price model
    and the tokens it generated (the assistant message that follows it)."""

    turn: int
    first_of_turn: bool
    costs: dict[str, CallCost]
    output_tokens: int = 0


@dataclass
class Conversation:
    """The transcript of one session and the bills of its model calls."""

    prices: Sequence[PriceModel]
    count: Callable[[str], int]
    turn_gap_s: float = TURN_GAP_SECONDS
    keep_requests: bool = False
    """Keep every rendered request in `requests` (tests inspect what the model was shown)."""
    requests: list[Request] = field(default_factory=list)
    messages: list[BaseMessage] = field(default_factory=list)
    rendered: list[dict[str, Any]] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    clock: float = 0.0
    turn: int = -1
    _caches: dict[str, PromptCache] = field(default_factory=dict)
    _opened: bool = False
    _awaiting: bool = False
    """A call was sent and its reply (the next assistant message) is not in yet."""
    _ids: int = 0
    _texts: list[str] = field(default_factory=list)
    """`stable_json` of each of `rendered`, made once when the message is added."""
    _tool_texts: dict[int, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    """`stable_json` of each tool definition sent, by identity (the definition is kept, so its
    id is not reused; strategies never change a definition once built)."""

    def __post_init__(self) -> None:
        """One cache per price model, all fed the same requests."""
        self._caches = {p.name: PromptCache(p) for p in self.prices}

    def _add(self, message: BaseMessage) -> None:
        rendered = as_provider_message(message)
        self.messages.append(message)
        self.rendered.append(rendered)
        self._texts.append(stable_json(rendered))
        if isinstance(message, AIMessage) and self._awaiting:
            # the reply of the last call: what it generated (a message added without a call,
            # such as an announced disclosure, generates nothing)
            self.calls[-1] = replace(self.calls[-1], output_tokens=self.count(self._texts[-1]))
            self._awaiting = False

    def _tool_text(self, tool: Mapping[str, Any]) -> str:
        found = self._tool_texts.get(id(tool))
        if found is None:
            found = self._tool_texts[id(tool)] = (tool, stable_json(tool))
        return found[1]

    def user(self, text: str) -> None:
        """A new user turn (after the user's pause, if not the first)."""
        if self.turn >= 0:
            self.clock += self.turn_gap_s
        self.turn += 1
        self._opened = True
        self._add(HumanMessage(text))

    def send(self, tools: Sequence[Mapping[str, Any]], system: str | Sequence[str]) -> CallRecord:
        """One model call with `tools` and `system` over the transcript so far; billed."""
        texts = [self._tool_text(t) for t in tools]
        request = render_request(texts, system, self._texts, self.count)
        costs = {name: cache.call(request, self.clock) for name, cache in self._caches.items()}
        if self.keep_requests:
            self.requests.append(request)
        record = CallRecord(self.turn, self._opened, costs)
        self.calls.append(record)
        self._opened = False
        self._awaiting = True
        self.clock += CALL_SECONDS
        return record

    def tool_call(self, name: str, args: Mapping[str, Any]) -> str:
        """The model's call of `name`; returns the call id."""
        self._ids += 1
        call_id = f"call_{self._ids}"
        call = {"name": name, "args": dict(args), "id": call_id, "type": "tool_call"}
        self._add(AIMessage("", tool_calls=[call]))
        return call_id

    def tool_result(self, call_id: str, name: str, content: str, *, error: bool = False) -> None:
        """The result (or refusal) of a tool call."""
        status = "error" if error else "success"
        self._add(ToolMessage(content, tool_call_id=call_id, name=name, status=status))

    def answer(self, text: str) -> None:
        """The model's text answer, ending the turn."""
        self._add(AIMessage(text))
