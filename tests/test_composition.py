"""The documented stack: scoping -> gating -> hesitation -> HumanInTheLoopMiddleware(per_call).

Refused calls (out of scope, not exposed by the gate) never reach a human; a stall after the
schema was disclosed is nudged; the write tool pauses for approval once and runs once. And
issue 38's case 3: the core scoping, hesitation and the repeat guard with default options let a
requested write run once the model loads its scope, and never push toward it unasked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command, Interrupt

from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.graph import agent_state, make_model_node, make_tool_node
from attention_scoping.hesitation.middleware import (
    HesitationGraphState,
    HesitationMiddleware,
    is_nudge,
)
from attention_scoping.hesitation.options import Nudging
from attention_scoping.hesitation.repeats import RepeatedCallMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

RAN: list[str] = []


@tool
def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    RAN.append("read_file")
    return "contents"


@tool
def delete_file(path: str) -> str:
    """Delete a file from the workspace permanently."""
    RAN.append("delete_file")
    return f"deleted {path}"


@tool
def list_files(folder: str) -> str:
    """List the files in a workspace folder."""
    RAN.append("list_files")
    return "a.txt"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message."""
    RAN.append("send_email")
    return "sent"


SCOPES = [
    Scope(
        "files",
        "workspace files",
        tools=[read_file, delete_file, list_files],
        reads=[read_file, list_files],
    ),
    Scope("mail", "email", tools=[send_email]),
]
TOOLS = [read_file, delete_file, list_files, send_email]
STALL = (
    "To delete the file I need the following: path (the file to delete). "
    "Would you like me to proceed?"
)


def errors(messages: list[Any]) -> dict[str, str]:
    return {
        m.tool_call_id: json.loads(m.text)["error"]
        for m in messages
        if isinstance(m, ToolMessage) and m.status == "error"
    }


def test_full_stack_with_approval() -> None:
    RAN.clear()
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "files"}, "c1")),
            calls(tool_call("send_email", {"to": "x", "body": "y"}, "c2")),  # other scope
            calls(tool_call("read_file", {"path": "report.txt"}, "c3")),  # held back by gate
            say(STALL),  # a stall: hidden, nudged
            calls(tool_call("delete_file", {"path": "report.txt"}, "c4")),  # needs approval
            say("Deleted report.txt."),
        ]
    )
    scoping = AttentionScopingMiddleware(SCOPES)
    stack: list[AgentMiddleware[Any, Any]] = [
        scoping,
        ToolAttentionMiddleware(ranker="bm25", k=1, summary_pool="off"),
        # delete_file may write: the application opts in to stall nudges toward it
        HesitationMiddleware(nudging=Nudging(writes=True), reads=scoping.catalog),
        HumanInTheLoopMiddleware(interrupt_on={"delete_file": True}, interrupt_mode="per_call"),
    ]
    agent = create_agent(model, tools=TOOLS, middleware=stack, checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "stack"}}
    events: list[dict[str, Any]] = []
    interrupts: list[Interrupt] = []
    mode: str  # with a list of stream modes, LangGraph yields (mode, chunk) pairs
    chunk: Any
    for mode, chunk in agent.stream(
        {"messages": [HumanMessage("delete the file report.txt")]},
        config,
        stream_mode=["custom", "updates"],
    ):
        if mode == "custom":
            events.append(chunk)
        elif "__interrupt__" in chunk:
            interrupts.extend(chunk["__interrupt__"])
    assert len(interrupts) == 1  # only the exposed, in-scope write reached a human
    assert interrupts[0].value["name"] == "delete_file"
    assert RAN == []  # nothing ran before approval
    messages = agent.get_state(config).values["messages"]
    assert errors(messages) == {"c2": "tool_not_in_context", "c3": "tool_not_available"}
    assert [e["action"] for e in events if e["type"] == "think"] == ["nudge"]
    # The model saw only the gate's pick within the scope.
    assert model.recorded[1]["tools"] == ["load_context", "delete_file"]

    result = agent.invoke(Command(resume={interrupts[0].id: {"type": "approve"}}), config)
    assert RAN == ["delete_file"]
    assert result["messages"][-1].content == "Deleted report.txt."
    assert STALL not in [m.content for m in result["messages"]]


def test_gate_in_a_hand_built_graph() -> None:
    RAN.clear()
    scoping = AttentionScopingMiddleware(SCOPES)
    gate = ToolAttentionMiddleware(ranker="bm25", k=1, summary_pool="off")
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "files"}, "c1")),
            calls(tool_call("read_file", {"path": "a"}, "c2")),  # held back: refused, promoted
            calls(tool_call("read_file", {"path": "a"}, "c3")),
            say("contents"),
        ]
    )
    schema = agent_state(HesitationGraphState, scoping, gate)
    graph = StateGraph(schema)
    middleware: list[AgentMiddleware[Any, Any]] = [scoping, gate]
    graph.add_node(
        "model", make_model_node(model, TOOLS, middleware=middleware, state_schema=schema)
    )
    graph.add_node("tools", make_tool_node(TOOLS, middleware=middleware, state_schema=schema))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "g"}}
    result = app.invoke({"messages": [HumanMessage("list the files in docs")]}, config)
    assert model.recorded[1]["tools"] == ["load_context", "list_files"]
    assert "read_file" in model.recorded[2]["tools"]
    assert errors(result["messages"]) == {"c2": "tool_not_available"}
    assert RAN == ["read_file"]
    exposed = app.get_state(config).values["gate_exposed"]
    assert exposed == ["load_context", "read_file", "list_files"]  # sticky + best match


# -- issue 38, case 3: scoping + hesitation + the repeat guard, default options ---------------

REFUNDS: list[str] = []


@tool
def get_invoice(order_id: str) -> str:
    """Get the invoice of an order."""
    return f"invoice for order {order_id}: 120 EUR, paid"


get_invoice.metadata = {"risk": "read"}


@tool
def refund(order_id: str) -> str:
    """Refund an order to the customer's card."""
    REFUNDS.append(order_id)
    return f"refunded order {order_id}"


@tool
def open_ticket(subject: str) -> str:
    """Open a support ticket."""
    return "ticket 7"


BILLING = [
    Scope("billing", "invoices and refunds", tools=[get_invoice, refund]),
    Scope("support", "support tickets", tools=[open_ticket]),
]
SHOP_TOOLS = [get_invoice, refund, open_ticket]
Builder = str
BUILDERS = pytest.mark.parametrize("builder", ["create_agent", "graph"])


def shop(model: ScriptedChatModel, builder: Builder) -> Any:
    """README's shop agent with the small-model kit, default options everywhere; `refund` carries
    no metadata (nobody classified it, so it may write)."""
    middleware: list[Any] = [
        AttentionScopingMiddleware(BILLING),
        HesitationMiddleware(),
        RepeatedCallMiddleware(),
    ]
    if builder == "create_agent":
        return create_agent(
            model, tools=SHOP_TOOLS, middleware=middleware, checkpointer=InMemorySaver()
        )
    schema = agent_state(HesitationGraphState, *middleware)
    graph = StateGraph(schema)
    graph.add_node(
        "model", make_model_node(model, SHOP_TOOLS, middleware=middleware, state_schema=schema)
    )
    graph.add_node("tools", make_tool_node(SHOP_TOOLS, middleware=middleware, state_schema=schema))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=InMemorySaver())


def runtime_notes(model: ScriptedChatModel) -> list[str]:
    """Every hint or nudge the model was sent."""
    return [m.text for r in model.recorded for m in r["messages"] if is_nudge(m)]


@BUILDERS
def test_a_refund_the_user_asks_for_runs_once_after_the_model_loads_billing(
    builder: Builder,
) -> None:
    REFUNDS.clear()
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "billing"}, "l1")),
            calls(tool_call("refund", {"order_id": "1234"}, "r1")),
            say("Order 1234 is refunded."),
        ]
    )
    agent = shop(model, builder)
    config: RunnableConfig = {"configurable": {"thread_id": f"refund-{builder}"}}
    result = agent.invoke({"messages": [HumanMessage("Refund order 1234 now")]}, config)
    # the selector opened billing by code: only the declared read was shown
    assert result["scope_selection"]["scope"] == "billing"
    assert sorted(model.recorded[0]["tools"]) == ["get_invoice", "load_context"]
    # the model's own load_context ran (not answered as a repeat) and opened the whole scope
    loaded = next(m for m in result["messages"] if getattr(m, "tool_call_id", None) == "l1")
    assert loaded.status != "error" and "repeated_call" not in loaded.response_metadata
    assert result["scope_opened"]["by"] == "model"
    assert "refund" in model.recorded[1]["tools"]
    assert REFUNDS == ["1234"]  # exactly once
    assert errors(result["messages"]) == {}
    assert result["messages"][-1].text == "Order 1234 is refunded."
    assert all("refund`" not in note for note in runtime_notes(model))


@BUILDERS
def test_a_question_about_refunds_never_refunds_and_nothing_names_refund(
    builder: Builder,
) -> None:
    REFUNDS.clear()
    model = ScriptedChatModel(
        script=[
            calls(tool_call("refund", {"order_id": "1234"}, "r1")),
            say("Refunds go back to the card in 5 days. Want me to go ahead with order 1234?"),
        ],
        policy=lambda messages, tools: say("unused"),
    )
    agent = shop(model, builder)
    config: RunnableConfig = {"configurable": {"thread_id": f"ask-{builder}"}}
    text = "How do refunds work for order 1234? Don't do anything yet."
    result = agent.invoke({"messages": [HumanMessage(text)]}, config)
    assert REFUNDS == []
    assert errors(result["messages"]) == {"r1": "tool_not_in_context"}  # refused, never run
    assert all("refund" not in tools for tools in (r["tools"] for r in model.recorded))
    assert all("refund" not in note for note in runtime_notes(model))  # no hint or nudge names it
    assert len(model.recorded) == 2  # the question stands: no "make one tool call now"
    assert result["messages"][-1].text.startswith("Refunds go back to the card")
