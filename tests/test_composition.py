"""The documented stack: scoping -> gating -> hesitation -> HumanInTheLoopMiddleware(per_call).

Refused calls (out of scope, not exposed by the gate) never reach a human; a stall after the
schema was disclosed is nudged; the write tool pauses for approval once and runs once.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command, Interrupt

from attention_scoping import AttentionScopingMiddleware, HesitationMiddleware, Scope
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.scoping.nodes import ScopedAgentState, make_model_node, make_tool_node
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
    Scope("files", "workspace files", tools=[read_file, delete_file, list_files]),
    Scope("mail", "email", tools=[send_email]),
]
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
    stack: list[AgentMiddleware[Any, Any]] = [
        AttentionScopingMiddleware(SCOPES),
        ToolAttentionMiddleware(ranker="bm25", k=1, summary_pool="off"),
        HesitationMiddleware(),
        HumanInTheLoopMiddleware(interrupt_on={"delete_file": True}, interrupt_mode="per_call"),
    ]
    agent = create_agent(model, middleware=stack, checkpointer=InMemorySaver())
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
    graph = StateGraph(ScopedAgentState)
    graph.add_node("model", make_model_node(model, middleware=[scoping, gate]))
    graph.add_node("tools", make_tool_node(middleware=[scoping, gate]))
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
