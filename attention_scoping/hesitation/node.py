"""The post-model node form of the hesitation nudge, for `create_agent` and hand-built graphs.

After the model node, a stalled message (see `attention_scoping.hesitation.radar`) is removed
from the state and its text goes to a `think` custom event; a nudge turn, marked synthetic
(`additional_kwargs["hesitation_nudge"]`, see `is_nudge`) so a UI can hide it, is added to the
state, and the graph goes back to the model: at most `max_nudges` times per user turn. The
policy (which stalls, which tools, the nudge text, the bound) is `HesitationPolicy`'s, as for
the in-call `HesitationMiddleware`; only where the loop runs differs.

Pick this form when the history should show what happened (a persisted nudge a UI can hide or
an auditor can read), or when a UI streams `updates` and wants the retry as its own graph step.
Pick `HesitationMiddleware` (in-call) when the checkpointed history should hold only what the
user saw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware.types import (
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ResponseT,
    hook_config,
)
from langchain_core.messages import AIMessage, RemoveMessage
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.adapters.tools import ToolLike, tool_name
from attention_scoping.hesitation.middleware import STATE_KEY, HesitationPolicy, HesitationState
from attention_scoping.hesitation.pending import NUDGE_MARK, current_turn

__all__ = ["HesitationNodeMiddleware", "make_hesitation_node"]


class HesitationNodeMiddleware(ModelCallHooks, HesitationPolicy[ResponseT, ContextT]):
    """The post-model node: reroute a stall to a think event, add a nudge turn to the state and
    jump back to the model (bounded). Same options as `HesitationMiddleware`.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.hesitation.node import HesitationNodeMiddleware

        agent = create_agent(model, tools=tools, middleware=[HesitationNodeMiddleware()],
                             checkpointer=InMemorySaver())
        # In the history, hide messages where is_nudge(message) is true.
        ```
    """

    @property
    def _tools(self) -> dict[str, Any]:
        """The tools seen bound to a model call, by name (the node judges against them)."""
        return self.__dict__.setdefault("_seen_tools", {})

    # -- record what the model call was shown -------------------------------------------------

    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the expected tools' hint when one is due; the node judges replies
        after the model, so only a turn's first call works out the expected tools here."""
        if not self.hint_due(list(request.messages)):
            return request
        return self.prepare(request)[0]

    def _record(self, request: ModelRequest[ContextT]) -> Command[Any]:
        names = []
        for tool in request.tools:
            name = tool_name(tool)
            self._tools[name] = tool
            names.append(name)
        state: Mapping[str, Any] = request.state if isinstance(request.state, Mapping) else {}
        record: dict[str, Any] = dict(state.get(STATE_KEY) or {})
        return Command(update={STATE_KEY: {**record, "bound": names}})

    def finish_reply(
        self, request: ModelRequest[Any], response: ModelResponse[Any]
    ) -> ExtendedModelResponse[Any]:
        """The reply, and which tools the model was shown (the node judges against them; the
        hint changes only the messages, so `request`'s tools are those)."""
        return ExtendedModelResponse(model_response=response, command=self._record(request))

    # -- the node -------------------------------------------------------------------------------

    def reroute(
        self,
        state: Mapping[str, Any],
        writer: Callable[[Any], None] | None = None,
        *,
        tools: Sequence[Any] | None = None,
    ) -> dict[str, Any] | None:
        """The state update after a model step: None to keep the message; else remove it, add
        the nudge (with `"jump_to": "model"`) or, after the bound, the honest answer.

        Args:
            state: The graph state after the model node.
            writer: Where think events go (default: LangGraph's stream writer).
            tools: The tools bound to the model call, when the state does not record them.
        """
        messages = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.id is None:
            return None
        record = dict(state.get(STATE_KEY) or {})
        if record.get("bound") is not None:
            tools = [self._tools[n] for n in record["bound"] if n in self._tools]
        turn = self.turn_of(messages, state, list(tools or ()))
        if turn is None:
            return None
        start, _ = current_turn(messages)
        turn.stalled = [
            str(m.additional_kwargs[NUDGE_MARK].get("stalled", ""))
            for m in messages[start + 1 :]
            if isinstance(m.additional_kwargs.get(NUDGE_MARK), Mapping)
        ]
        decision = self.decide(last, turn)
        if decision is None:
            return None
        self.emit(writer, self.event(last, decision))
        record.update(turn=turn.key, nudges=turn.used)
        if decision.action == "give_up":
            final = self.final_message(last, decision)
            return {"messages": [RemoveMessage(id=last.id), final], STATE_KEY: record}
        nudge = self.nudge_message(decision, stalled=last)
        nudge.additional_kwargs[NUDGE_MARK]["stalled"] = last.text
        record["nudges"] = turn.used + 1
        return {
            "messages": [RemoveMessage(id=last.id), nudge],
            STATE_KEY: record,
            "jump_to": "model",
        }

    @hook_config(can_jump_to=["model"])
    @override
    def after_model(
        self, state: HesitationState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Reroute a stall: think event, nudge turn in the state, back to the model."""
        return self.reroute(state, getattr(runtime, "stream_writer", None))

    @hook_config(can_jump_to=["model"])
    @override
    async def aafter_model(
        self, state: HesitationState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async form of `after_model` (no I/O: the same step)."""
        return self.reroute(state, getattr(runtime, "stream_writer", None))


def make_hesitation_node(
    hesitation: HesitationNodeMiddleware[Any, Any] | None = None,
    tools: Iterable[ToolLike] = (),
    *,
    model_node: str = "model",
    tools_node: str = "tools",
    end: str = END,
) -> Callable[[Any], Command[Any]]:
    """The post-model node for a hand-built `StateGraph`: after the model, route to the tools,
    back to the model with a nudge, or to the end.

    Pass the same `hesitation` to `attention_scoping.graph.make_model_node(...,
    middleware=[hesitation])` so the node judges against the tools that call was shown;
    otherwise it judges against `tools`.

    Example:
        ```python
        hesitation = HesitationNodeMiddleware()
        state = HesitationGraphState  # from attention_scoping.hesitation.middleware
        graph = StateGraph(state)
        graph.add_node("model", make_model_node(llm, tools, middleware=[hesitation],
                                                state_schema=state))
        graph.add_node("hesitation", make_hesitation_node(hesitation, tools),
                       destinations=("model", "tools", END))
        graph.add_node("tools", make_tool_node(tools, state_schema=state))
        graph.add_edge(START, "model")
        graph.add_edge("model", "hesitation")
        graph.add_edge("tools", "model")
        ```
    """
    policy = hesitation if hesitation is not None else HesitationNodeMiddleware()
    fallback = list(tools)

    def node(state: Any) -> Command[Any]:
        update = policy.reroute(state, tools=fallback)
        if update is not None:
            goto = model_node if update.pop("jump_to", None) == "model" else end
            return Command(update=update, goto=goto)
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        calls = isinstance(last, AIMessage) and bool(last.tool_calls)
        return Command(goto=tools_node if calls else end)

    return node
