"""The same scoping behaviour in a hand-built StateGraph, through the node factories."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import NAVIGATION_ONLY, Ledger

SCRIPT = [
    calls(tool_call("add", {"a": 1, "b": 2}, "c1")),  # hidden: no scope yet
    calls(
        tool_call("load_context", {"name": "math"}, "c2"),
        tool_call("multiply", {"a": 6, "b": 7}, "c3"),  # same step as the switch
    ),
    calls(tool_call("multiply", {"a": 6, "b": 7}, "c4")),
    say("42"),
]


def build(model: ScriptedChatModel, scopes: list[Scope]) -> Any:
    scoping = AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)
    graph = StateGraph(ScopedAgentState)
    graph.add_node("model", make_model_node(model, middleware=[scoping], system_prompt="Be brief."))
    graph.add_node("tools", make_tool_node(middleware=[scoping]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=InMemorySaver())


def check(model: ScriptedChatModel, result: dict[str, Any], ledger: Ledger) -> None:
    assert [r["tools"] for r in model.recorded] == [
        ["load_context"],
        ["load_context"],
        ["load_context", "add", "multiply"],
        ["load_context", "add", "multiply"],
    ]
    assert "Be brief." in model.recorded[0]["system"]
    assert "# Active context: math" in model.recorded[2]["system"]
    errors = {
        m.tool_call_id: json.loads(m.content)["error"]  # type: ignore[arg-type]
        for m in result["messages"]
        if isinstance(m, ToolMessage) and m.status == "error"
    }
    assert errors == {"c1": "tool_not_in_context", "c3": "context_switched_in_same_step"}
    assert ledger.ran == [("multiply", {"a": 6, "b": 7})]
    assert result["active_context"] == "math"


def test_state_graph_sync(scopes: list[Scope], ledger: Ledger) -> None:
    model = ScriptedChatModel(script=list(SCRIPT))
    app = build(model, scopes)
    config = {"configurable": {"thread_id": "g1"}}
    result = app.invoke({"messages": [HumanMessage("6*7")]}, config)
    check(model, result, ledger)
    # The scope persists in the checkpoint for the next turn.
    model.script.append(say("still math"))
    app.invoke({"messages": [HumanMessage("and now?")]}, config)
    assert model.recorded[-1]["tools"] == ["load_context", "add", "multiply"]


async def test_state_graph_async(scopes: list[Scope], ledger: Ledger) -> None:
    model = ScriptedChatModel(script=list(SCRIPT))
    app = build(model, scopes)
    result = await app.ainvoke(
        {"messages": [HumanMessage("6*7")]}, {"configurable": {"thread_id": "g2"}}
    )
    check(model, result, ledger)
