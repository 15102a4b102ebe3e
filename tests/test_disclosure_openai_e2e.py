"""`disclosure="openai"` end to end: a real `create_agent` and `ChatOpenAI(use_responses_api=True)`
against the scripted Responses endpoint, over a session with scope switches, a model-initiated
tool search answered by our ranker, an application-set scope and an undisclosed call.

The middleware here is a reduced stand-in for what the scoping and gating middlewares do in a
native in-history mode (the `Disclosure` contract of `attention_scoping.disclosure.base`):
shape the fixed tools array, announce what code made visible, disclose `load_context` results
and search results through `content`, refuse calls the history has not disclosed, and pass the
messages through `outgoing` / the reply through `incoming`. It tests the mode, not the
middlewares.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

import pytest
from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import SecretStr

from attention_scoping.common.errors import ErrorCode, refusal, render_payload
from attention_scoping.disclosure.base import SEARCH_TOOL, resolve_disclosure
from attention_scoping.disclosure.openai import OpenAIDisclosure
from tests.openai_stub import OpenAIStub

SCOPES: dict[str, list[str]] = {
    "billing": ["get_invoice", "refund"],
    "support": ["open_ticket", "close_ticket"],
    "shipping": ["track_parcel", "reroute_parcel"],
}
LOADED = frozenset({"load_context", SEARCH_TOOL})
SYSTEM = "You are a support agent. " + " ".join(
    f"Rule {i}: load a context before using its tools, and answer briefly." for i in range(150)
)


class ScopedState(AgentState):
    """The harness's scope, set by `load_context` or the application."""

    active_context: NotRequired[str | None]


@tool
def load_context(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Load a context (billing, support, shipping) to use its tools."""
    update = {
        "active_context": name,
        "messages": [ToolMessage(f"Context {name!r} loaded.", tool_call_id=tool_call_id)],
    }
    return Command(update=update)


def _search(query: str) -> str:
    """Find tools by what they do."""
    return query


SEARCH = StructuredTool.from_function(_search, name=SEARCH_TOOL, description="Find tools.")


def rank(query: str) -> list[str]:
    """A stand-in ranker: tools whose name shares a word with the query."""
    words = set(query.lower().split())
    return [n for names in SCOPES.values() for n in names if words & set(n.split("_"))][:1]


class NativeHarness(AgentMiddleware[ScopedState]):
    """Scoping + gate reduced to the `Disclosure` calls a native in-history mode makes."""

    state_schema = ScopedState

    def __init__(self) -> None:
        super().__init__()
        self.tools = [load_context]
        self.mode: OpenAIDisclosure | None = None

    def _mode(self, model: Any) -> OpenAIDisclosure:
        if self.mode is None:
            found = resolve_disclosure("openai", model)
            assert isinstance(found, OpenAIDisclosure)
            self.mode = found
        return self.mode

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        mode = self._mode(request.model)
        scope = str(request.state.get("active_context") or "")
        visible = SCOPES.get(scope, [])
        shaped = mode.shape([*request.tools, SEARCH], visible=visible, loaded=LOADED, groups=SCOPES)
        new = [n for n in visible if n not in mode.disclosed(request.messages)]
        pair: list[BaseMessage] = []
        if new:  # a scope code or the application opened: announce it at the tail
            text = f"Context {scope!r} is active."
            call_id = f"disclose_{len(request.messages)}"
            args = {"name": scope}
            pair = mode.announce(new, tool="load_context", args=args, text=text, call_id=call_id)
        response = handler(
            request.override(
                tools=shaped.tools,
                tool_choice=shaped.tool_choice,
                system_message=SystemMessage(SYSTEM),
                messages=cast(Any, mode.outgoing([*request.messages, *pair])),
            )
        )
        replies = [mode.incoming(m) for m in response.result]
        return ModelResponse(result=[*pair, *replies])

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        mode = self.mode
        assert mode is not None
        call = request.tool_call
        name = call["name"]
        if name == SEARCH_TOOL:
            found = rank(str(call["args"].get("query", "")))
            return ToolMessage(mode.content(found), tool_call_id=call["id"], name=SEARCH_TOOL)
        if name == "load_context":
            result = handler(request)
            scope = str(call["args"].get("name"))
            return _disclosing(result, mode.content(SCOPES.get(scope, []), f"Context {scope!r}."))
        allowed = mode.disclosed(request.state["messages"]) | LOADED
        if name not in allowed:
            payload = refusal(
                ErrorCode.TOOL_NOT_AVAILABLE,
                f"{name!r} is not loaded in this conversation; it was not run.",
                tool=name,
                available=sorted(allowed),
            )
            return ToolMessage(render_payload(payload), tool_call_id=call["id"], status="error")
        return handler(request)


def _disclosing(result: Any, content: Any) -> Any:
    """A `load_context` result with its message's content replaced by `content`."""
    assert isinstance(result, Command) and isinstance(result.update, dict)
    messages = [m.model_copy(update={"content": content}) for m in result.update["messages"]]
    return Command(update={**result.update, "messages": messages})


def _cache_read(message: AIMessage) -> int:
    usage: dict[str, Any] = dict(message.usage_metadata or {})
    return int((usage.get("input_token_details") or {}).get("cache_read", 0))


def make_tools(ran: list[str]) -> list[BaseTool]:
    """The scoped tools; each records that it really ran."""

    def make(name: str) -> BaseTool:
        def run(ref: str) -> str:
            ran.append(name)
            return f"{name}({ref}) done"

        return StructuredTool.from_function(run, name=name, description=f"{name} by reference.")

    return [make(n) for names in SCOPES.values() for n in names]


def fc(name: str, ref: str = "R1", **extra: Any) -> dict[str, Any]:
    """A scripted model reply calling `name`."""
    return {"tool_calls": [{"name": name, "arguments": {"ref": ref}}], **extra}


SCRIPT: list[dict[str, Any]] = [
    # 1: billing was set by the application; its tools were announced before this call
    fc("get_invoice", "INV-7"),
    {"content": "Invoice INV-7 is 120 EUR."},
    # 2: the model switches to support itself
    {"tool_calls": [{"name": "load_context", "arguments": {"name": "support"}}]},
    fc("open_ticket", "late parcel"),
    {"content": "Ticket opened."},
    # 3: the model searches; our ranker answers with track_parcel
    {"tool_search": {"query": "track parcel"}},
    fc("track_parcel", "P1"),
    {"content": "Parcel P1 is in transit."},
    # 4: the model calls a deferred tool nobody disclosed: refused, never run
    fc("reroute_parcel", "P1", allow_unloaded=True),
    {"content": "I cannot reroute yet."},
    # 5: it loads shipping, then the reroute runs
    {"tool_calls": [{"name": "load_context", "arguments": {"name": "shipping"}}]},
    fc("reroute_parcel", "P1"),
    {"content": "Rerouted."},
    # 6: back to billing
    {"tool_calls": [{"name": "load_context", "arguments": {"name": "billing"}}]},
    fc("refund", "INV-7"),
    {"content": "Refunded."},
]
TURNS = [
    "What is invoice INV-7?",
    "Open a ticket about my late parcel.",
    "Where is parcel P1?",
    "Reroute parcel P1.",
    "Please load shipping and reroute P1.",
    "Refund INV-7.",
]


def _run_session(stub: OpenAIStub, ran: list[str]) -> list[Any]:
    model = ChatOpenAI(
        model="stub-model",
        base_url=stub.base_url,
        api_key=SecretStr("test-key"),
        use_responses_api=True,
    )
    agent: Any = create_agent(
        model, tools=make_tools(ran), middleware=[NativeHarness()], checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "session"}}
    results = []
    for i, text in enumerate(TURNS):
        state: dict[str, Any] = {"messages": [HumanMessage(text)]}
        if i == 0:
            state["active_context"] = "billing"
        results.append(agent.invoke(state, config))
    return results


@dataclass
class Session:
    """One scripted session, run once for the tests of this module."""

    stub: OpenAIStub
    results: list[Any]
    ran: list[str]


@pytest.fixture(scope="module")
def session() -> Session:
    ran: list[str] = []
    with OpenAIStub(script=SCRIPT, prompt_cache=True) as stub:
        results = _run_session(stub, ran)
    return Session(stub, results, ran)


def test_session_keeps_tools_and_system_byte_identical(session: Session) -> None:
    stub, results, ran = session.stub, session.results, session.ran
    assert stub.rejections == [] and stub.errors == [] and stub.remaining == 0
    view = stub.responses
    n = len(stub.requests)
    assert n == len(SCRIPT)
    assert len({view.tools_json(i) for i in range(n)}) == 1
    assert len({view.system_json(i) for i in range(n)}) == 1
    assert view.names(0) == ["load_context", "billing", "support", "shipping", "tool_search"]
    # every request after the first reads the unchanged prefix from the cache
    replies = [m for m in results[-1]["messages"] if isinstance(m, AIMessage) and m.usage_metadata]
    cached = [_cache_read(m) for m in replies]
    assert len(cached) == n
    assert cached[0] == 0 and all(c >= 1024 for c in cached[1:]), cached
    assert [r["messages"][-1].text for r in results][-1] == "Refunded."
    # what ran: never the undisclosed reroute of turn 4, the one of turn 5
    assert ran == ["get_invoice", "open_ticket", "track_parcel", "reroute_parcel", "refund"]


def test_disclosures_reach_the_wire_at_the_tail(session: Session) -> None:
    stub, results = session.stub, session.results
    view = stub.responses
    last = len(stub.requests) - 1
    assert view.loaded(0) == ["billing.get_invoice", "billing.refund"]  # announced pair
    assert "support.open_ticket" in view.loaded(3)  # from the load_context result
    assert "shipping.track_parcel" in view.loaded(6)  # the answer to the model's search
    assert "shipping.reroute_parcel" not in view.loaded(8)
    search_output = view.items(6, "tool_search_output")[-1]
    search_call = view.items(6, "tool_search_call")[-1]
    assert search_output["call_id"] == search_call["call_id"]
    assert [f["name"] for t in search_output["tools"] for f in t["tools"]] == ["track_parcel"]
    calls = {c["name"]: c.get("namespace") for c in view.items(last, "function_call")}
    assert calls == {
        "get_invoice": "billing",
        "load_context": None,
        "open_ticket": "support",
        "track_parcel": "shipping",
        "reroute_parcel": "shipping",
        "refund": "billing",
    }
    refused = [
        m for m in results[-1]["messages"] if isinstance(m, ToolMessage) and m.status == "error"
    ]
    assert len(refused) == 1
    payload = json.loads(str(refused[0].content))
    assert (payload["error"], payload["tool"]) == ("tool_not_available", "reroute_parcel")


def test_openai_mode_needs_the_responses_api() -> None:
    with OpenAIStub(script=[{"content": "never"}]) as stub:
        model = ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key=SecretStr("k"))
        agent = create_agent(model, tools=make_tools([]), middleware=[NativeHarness()])
        with pytest.raises(ValueError, match=r"disclosure='openai' cannot be used with ChatOpenAI"):
            agent.invoke({"messages": [HumanMessage("hi")]})
        assert stub.requests == []
