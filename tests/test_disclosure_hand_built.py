"""The native modes in a hand-built `StateGraph` (`make_model_node`, `make_tool_node`): the same
scripted session sends byte-identical request JSON to the provider as `create_agent` does, and
runs the same tools (the refused ones not at all)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition
from pydantic import SecretStr

from attention_scoping.disclosure import Anthropic, OpenAI
from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node
from attention_scoping.middleware import AttentionScopingMiddleware, Disclosure
from tests.anthropic_stub import AnthropicStub
from tests.disclosure_support import (
    OPENING,
    THREAD,
    anthropic_chat,
    call,
    make_scopes,
    make_tools,
    replies,
    script_of,
)
from tests.openai_stub import OpenAIStub

SESSION = [
    *OPENING,
    ("Reverse abc.", {}, replies(
        call("add", "h4a", a=1, b=1), call("reverse", "h4b", text="abc"), answer="cba"
    )),
    ("Convert 5 km.", {"active_context": "units"}, replies(
        call("convert_km", "h5a", km=5), answer="3.1"
    )),
]  # fmt: skip
"""Five turns: the model loads math and text, calls a tool of a scope no longer open (refused),
the application opens units."""

RAN = ["add", "multiply", "shout", "reverse", "convert_km"]


def hand_built(model: BaseChatModel, tools: list[Any], middleware: Any) -> Any:
    """README's graph: a model node and a tool node behind the same middleware."""
    graph = StateGraph(ScopedAgentState)
    graph.add_node(
        "model",
        make_model_node(
            model,
            tools,
            middleware=[middleware],
            system_prompt="Be terse.",
            state_schema=ScopedAgentState,
        ),
    )
    graph.add_node(
        "tools", make_tool_node(tools, middleware=[middleware], state_schema=ScopedAgentState)
    )
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=InMemorySaver())


def through_create_agent(model: BaseChatModel, tools: list[Any], middleware: Any) -> Any:
    return create_agent(
        model,
        tools=tools,
        system_prompt="Be terse.",
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )


Build = Callable[[BaseChatModel, list[Any], Any], Any]


def play(stub: Any, model: BaseChatModel, build: Build, mode: Disclosure) -> list[str]:
    """Run `SESSION`; the tools that ran."""
    ran: list[str] = []
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(make_scopes(tools), selector=None, disclosure=mode)
    agent = build(model, list(tools.values()), scoping)
    for text, state, _ in SESSION:
        agent.invoke({"messages": [("user", text)], **state}, THREAD)
    return ran


@pytest.mark.parametrize("mode", ["anthropic", "openai"])
def test_a_hand_built_graph_sends_what_create_agent_sends(mode: str) -> None:
    bodies: list[list[str]] = []
    for build in (through_create_agent, hand_built):
        stub: Any = AnthropicStub(script_of(SESSION)) if mode == "anthropic" else None
        stub = stub or OpenAIStub(script_of(SESSION))
        with stub:
            if mode == "anthropic":
                model: BaseChatModel = anthropic_chat(stub.base_url)
                ran = play(stub, model, build, Anthropic())
            else:
                model = ChatOpenAI(
                    model="m", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
                )
                ran = play(stub, model, build, OpenAI())
        assert ran == RAN
        assert stub.rejections == []
        bodies.append([json.dumps(b, sort_keys=True) for b in stub.requests])
    assert bodies[0] == bodies[1]
