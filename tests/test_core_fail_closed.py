"""The core fails closed: what runs is what the reply that called it was shown, recorded once.

Each case runs in `create_agent` and in a hand-built `StateGraph` with default options (issue
38's cases 1, 2 and 4; case 3 with the small-model kit is in the add-on's tests).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from attention_scoping.errors import ErrorCode, ScopeConfigError, StateSchemaError
from attention_scoping.gate import RECORD_KEY
from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import Selection
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

Ran = list[str]


def billing_tools(ran: Ran) -> list[BaseTool]:
    """README's tools: `get_invoice` declared a read, `refund` and `update_card` unmarked."""

    @tool(extras={})
    def get_invoice(order_id: str) -> str:
        """Look up the invoice of an order."""
        ran.append("get_invoice")
        return f"invoice {order_id}: 40 EUR"

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append("refund")
        return f"refunded {order_id}"

    @tool
    def update_card(card: str) -> str:
        """Replace the card on file."""
        ran.append("update_card")
        return "card updated"

    @tool
    def open_ticket(text: str) -> str:
        """Open a support ticket."""
        ran.append("open_ticket")
        return "ticket 7"

    get_invoice.metadata = {"risk": "read"}
    return [get_invoice, refund, update_card, open_ticket]


def scopes_of(tools: Sequence[BaseTool]) -> list[Scope]:
    by = {t.name: t for t in tools}
    return [
        Scope(
            "billing",
            "invoices, refunds and cards",
            [by["get_invoice"], by["refund"], by["update_card"]],
        ),
        Scope("support", "support tickets", [by["open_ticket"]]),
    ]


def agent_app(
    model: ScriptedChatModel, tools: list[BaseTool], mw: AttentionScopingMiddleware
) -> Any:
    return create_agent(model, tools=tools, middleware=[mw])


def graph_app(
    model: ScriptedChatModel, tools: list[BaseTool], mw: AttentionScopingMiddleware
) -> Any:
    graph = StateGraph(ScopedAgentState)
    graph.add_node(
        "model", make_model_node(model, tools, middleware=[mw], state_schema=ScopedAgentState)
    )
    graph.add_node("tools", make_tool_node(tools, middleware=[mw], state_schema=ScopedAgentState))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


BUILDERS: dict[
    str, Callable[[ScriptedChatModel, list[BaseTool], AttentionScopingMiddleware], Any]
] = {
    "create_agent": agent_app,
    "graph": graph_app,
}


def errors(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """Tool name -> error code of every refused call."""
    out = {}
    for m in messages:
        if isinstance(m, ToolMessage) and m.status == "error":
            out[str(m.name)] = json.loads(str(m.content))["error"]
    return out


@pytest.mark.parametrize("build", BUILDERS)
def test_readme_refund_never_runs_when_code_opened_billing(build: str) -> None:
    """Case 1: the selector opens `billing` for "how do refunds work", which shows only its
    declared reads; a `refund` call is refused and nothing runs."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools))
    model = ScriptedChatModel(script=[calls(tool_call("refund", {"order_id": "1234"})), say("ok")])
    out = BUILDERS[build](model, tools, mw).invoke(
        {"messages": [("user", "How do refunds work for order 1234? Don't do anything yet.")]}
    )
    assert model.recorded[0]["tools"] == ["load_context", "get_invoice"]
    assert out["active_context"] == "billing"
    assert out["scope_opened"]["by"] == "code"
    assert errors(out["messages"]) == {"refund": ErrorCode.TOOL_NOT_IN_CONTEXT}
    assert ran == []


@pytest.mark.parametrize("build", BUILDERS)
def test_the_model_opens_writes_with_its_own_load_context(build: str) -> None:
    """A write the user asked for runs once the model loads the scope itself."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools))
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "billing"})),
            calls(tool_call("refund", {"order_id": "1234"})),
            say("refunded"),
        ]
    )
    out = BUILDERS[build](model, tools, mw).invoke(
        {"messages": [("user", "Refund order 1234 now.")]}
    )
    assert model.recorded[0]["tools"] == ["load_context", "get_invoice"]
    assert model.recorded[1]["tools"] == ["load_context", "get_invoice", "refund", "update_card"]
    assert out["scope_opened"]["by"] == "model"
    assert ran == ["refund"]
    assert errors(out["messages"]) == {}


def test_a_state_without_the_record_keys_fails_when_the_node_is_made() -> None:
    """Case 2: a hand-built state lacking `scope_opened` is an error at build time, naming it."""

    class Partial(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        active_context: str | None

    tools = billing_tools([])
    mw = AttentionScopingMiddleware(scopes_of(tools))
    with pytest.raises(StateSchemaError, match="'scope_opened'"):
        make_model_node(ScriptedChatModel(), tools, middleware=[mw], state_schema=Partial)
    with pytest.raises(StateSchemaError, match="'scope_opened'"):
        make_tool_node(tools, middleware=[mw], state_schema=Partial)
    with pytest.raises(TypeError):
        make_model_node(ScriptedChatModel(), tools, middleware=[mw])  # type: ignore[call-arg]


def test_a_hidden_write_from_a_reply_without_a_record_never_runs() -> None:
    """Case 2, the other way round: a plain model node (no record on its reply) in front of the
    gated tool node: the call of a hidden write is refused as not shown."""

    class Partial(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        active_context: str | None

    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools))
    model = ScriptedChatModel(script=[calls(tool_call("refund", {"order_id": "1"})), say("done")])

    def plain_model(state: Partial) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(Partial)
    graph.add_node("model", plain_model)
    graph.add_node("tools", ToolNode([*tools, *mw.tools], wrap_tool_call=mw.wrap_tool_call))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    start: Any = {"messages": [("user", "refund order 1")], "active_context": "billing"}
    out = graph.compile().invoke(start)
    assert errors(out["messages"]) == {"refund": ErrorCode.NOT_SHOWN}
    assert ran == []


def test_a_forged_or_edited_record_is_read_per_owner() -> None:
    """A record stamped by another middleware name does not allow a call of this one."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools))
    forged = AIMessage(
        "",
        tool_calls=[tool_call("refund", {"order_id": "1"}, id="c1")],
        response_metadata={RECORD_KEY: {"SomeoneElse": {"tools": ["refund"]}}},
    )
    graph = StateGraph(ScopedAgentState)
    graph.add_node("tools", make_tool_node(tools, middleware=[mw], state_schema=ScopedAgentState))
    graph.add_edge(START, "tools")
    start: Any = {"messages": [("user", "refund"), forged]}
    out = graph.compile().invoke(start)
    assert errors(out["messages"]) == {"refund": ErrorCode.NOT_SHOWN}
    assert ran == []


def waits_for_the_other(barrier: threading.Barrier, reply: AIMessage) -> Any:
    """A scripted step that returns `reply` once the other thread's model call is in flight."""

    def step(messages: list[BaseMessage], names: list[str]) -> AIMessage:
        barrier.wait()
        return reply

    return step


def run_two_threads(build: str) -> tuple[dict[str, Any], Ran]:
    """Two agents on two models, one middleware instance, replies in flight together: A has
    `billing` open and calls `update_card` (shown) and `open_ticket` (not); B has `support`
    open and calls `refund` (not shown) and `open_ticket` (shown)."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools))
    barrier = threading.Barrier(2, timeout=10)
    card, ticket = tool_call("update_card", {"card": "x"}), tool_call("open_ticket", {"text": "t"})
    refund = tool_call("refund", {"order_id": "1"})
    ticket_b = tool_call("open_ticket", {"text": "t"})
    models = {
        "a": ScriptedChatModel(
            script=[waits_for_the_other(barrier, calls(card, ticket)), say("a")]
        ),
        "b": ScriptedChatModel(
            script=[waits_for_the_other(barrier, calls(refund, ticket_b)), say("b")]
        ),
    }
    scope = {"a": "billing", "b": "support"}
    results: dict[str, Any] = {}

    def run(key: str) -> None:
        app = BUILDERS[build](models[key], tools, mw)
        results[key] = app.invoke({"messages": [("user", "go")], "active_context": scope[key]})

    threads = [threading.Thread(target=run, args=(key,)) for key in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, ran


@pytest.mark.parametrize("build", BUILDERS)
def test_one_instance_serves_two_threads_at_once(build: str) -> None:
    """Case 4: each call is decided by its own reply's record, never by the other thread's
    (six runs)."""
    for _ in range(6):
        results, ran = run_two_threads(build)
        assert errors(results["a"]["messages"]) == {"open_ticket": ErrorCode.TOOL_NOT_IN_CONTEXT}
        assert errors(results["b"]["messages"]) == {"refund": ErrorCode.TOOL_NOT_IN_CONTEXT}
        assert sorted(ran) == ["open_ticket", "update_card"]


@pytest.mark.parametrize("build", BUILDERS)
def test_a_switch_in_the_same_reply_does_not_run_the_new_scopes_tools(build: str) -> None:
    """`load_context` and a tool of the scope it loads in one reply: the switch happens, the
    tool is refused (it was not shown with that reply) and runs after the model calls it again."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=None)
    model = ScriptedChatModel(
        script=[
            calls(
                tool_call("load_context", {"name": "support"}),
                tool_call("open_ticket", {"text": "t"}),
            ),
            calls(tool_call("open_ticket", {"text": "t"})),
            say("done"),
        ]
    )
    out = BUILDERS[build](model, tools, mw).invoke({"messages": [("user", "open a ticket")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert errors(out["messages"]) == {"open_ticket": ErrorCode.CONTEXT_SWITCHED_IN_SAME_STEP}
    assert ran == ["open_ticket"]
    assert out["active_context"] == "support"


@pytest.mark.parametrize("build", BUILDERS)
def test_no_selection_for_a_message_that_needs_no_tool(build: str) -> None:
    """ "Thanks!" selects nothing: the model sees only `load_context`."""
    tools = billing_tools([])
    mw = AttentionScopingMiddleware(scopes_of(tools))
    model = ScriptedChatModel(script=[say("You're welcome.")])
    out = BUILDERS[build](model, tools, mw).invoke({"messages": [("user", "Thanks, that's all!")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert out.get("active_context") is None
    assert out["scope_selection"]["reason"] in {"no_match", "no_intent"}


class Careless:
    """A selector that reports every tool of billing as a matching read, declared or not."""

    def __init__(self, scope: str | None) -> None:
        self.scope = scope

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        reads = ("get_invoice", "refund", "update_card")
        return Selection(self.scope, "close_call" if self.scope is None else "confident", {}, reads)


@pytest.mark.parametrize("build", BUILDERS)
def test_a_selector_cannot_put_a_tool_nobody_declared_a_read_in_view(build: str) -> None:
    """A custom selector naming `refund` among its reads on a close call: the core keeps only
    declared reads, in view and in the recorded selection (so no hint can name it either)."""
    ran: Ran = []
    tools = billing_tools(ran)
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=Careless(None))
    model = ScriptedChatModel(script=[calls(tool_call("refund", {"order_id": "1"})), say("ok")])
    out = BUILDERS[build](model, tools, mw).invoke({"messages": [("user", "refund 1")]})
    assert model.recorded[0]["tools"] == ["load_context", "get_invoice"]
    assert out["scope_selection"]["reads"] == ["get_invoice"]
    assert errors(out["messages"]) == {"refund": ErrorCode.TOOL_NOT_IN_CONTEXT}
    assert ran == []


def test_a_forged_selection_record_in_state_shows_no_write() -> None:
    """A selection record the state carries (written by anything) is read again through the
    declared reads: `refund` listed there stays out of view."""
    tools = billing_tools([])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=None)
    messages = [HumanMessage("refund 1", id="u1")]
    turn = "0:u1"
    forged = {
        "scope": None,
        "reason": "close_call",
        "reads": ["refund", "get_invoice"],
        "turn": turn,
    }
    plan = mw.plan({"messages": messages, "scope_selection": forged}, mw.tools)
    assert plan.tools == ("load_context", "get_invoice")


def test_a_selector_naming_an_unknown_scope_is_a_clear_error() -> None:
    tools = billing_tools([])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=Careless("shipping"))
    with pytest.raises(ScopeConfigError, match=r"chose unknown scope 'shipping'.*'billing'"):
        mw.plan({"messages": [HumanMessage("where is it")]}, mw.tools)
