"""The native `disclosure=` modes in a hand-built `StateGraph` (`make_model_node`,
`make_tool_node`): the same scripted session sends byte-identical request JSON to the provider
as `create_agent` does, and runs the same tools (the refused ones not at all)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition
from pydantic import SecretStr

from attention_scoping import (
    AttentionScopingMiddleware,
    Navigation,
    SummaryPool,
    ToolAttentionMiddleware,
)
from attention_scoping.disclosure import DisclosureMode
from attention_scoping.scoping.nodes import ScopedAgentState, make_model_node, make_tool_node
from tests.anthropic_stub import AnthropicStub
from tests.disclosure_support import (
    RANKED_SESSION,
    THREAD,
    anthropic_chat,
    call,
    gate_tools,
    make_scopes,
    make_tools,
)
from tests.openai_stub import OpenAIStub

Setup = Callable[[list[str]], tuple[list[Any], Any]]
"""(the list tools append their runs to) -> (the tools the app passes, the middleware)."""


def hand_built(model: BaseChatModel, tools: list[Any], middleware: Any) -> Any:
    """The README's graph: a model node and a tool node behind the same middleware."""
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


def agent_of(model: BaseChatModel, tools: list[Any], middleware: Any) -> Any:
    """The same agent through `create_agent`."""
    return create_agent(
        model,
        tools=tools,
        system_prompt="Be terse.",
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )


def play(
    stub_of: Callable[[list[Any]], Any],
    model_of: Callable[[Any], BaseChatModel],
    setup: Setup,
    turns: Sequence[str],
    script: list[Any],
    build: Callable[[BaseChatModel, list[Any], Any], Any],
) -> tuple[list[str], list[str]]:
    """Play `turns` against a fresh stub; the request bodies (JSON, keys sorted) and the tools
    that ran."""
    ran: list[str] = []
    tools, middleware = setup(ran)
    with stub_of(list(script)) as stub:
        app = build(model_of(stub), tools, middleware)
        for text in turns:
            app.invoke({"messages": [("user", text)]}, THREAD)
    assert not stub.script and stub.rejections == []
    return [json.dumps(body, sort_keys=True) for body in stub.requests], ran


def scoping_setup(mode: DisclosureMode) -> Setup:
    """Scoping over the shared scopes in `mode` (lexical ranker, no pre-selection)."""

    def setup(ran: list[str]) -> tuple[list[Any], Any]:
        scopes = make_scopes(make_tools(ran))
        navigation = Navigation(preselect="off", ranker="lexical")
        return [], AttentionScopingMiddleware(scopes, navigation=navigation, disclosure=mode)

    return setup


def gate_setup(ran: list[str]) -> tuple[list[Any], Any]:
    """The gate alone in the anthropic mode, one tool per decision."""
    gate = ToolAttentionMiddleware(
        ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="anthropic")
    )
    return gate_tools(ran), gate


def responses_model(stub: Any) -> BaseChatModel:
    return ChatOpenAI(
        model="stub-model",
        base_url=stub.base_url,
        api_key=SecretStr("test-key"),
        use_responses_api=True,
    )


GATE_SCRIPT = [
    {"tool_calls": [call("get_weather", "w", city="Paris")]},
    {"tool_calls": [call("search_tools", "s1", query="money currency convert")]},
    {"tool_calls": [call("convert_currency", "c", amount=3, to="EUR")]},
    {"content": "done"},
    {"tool_calls": [call("get_forecast", "f", city="Rome")]},
    {"content": "rain"},
]
OPENAI_SCRIPT = [
    {"tool_calls": [call("load_context", "o1", name="math")]},
    {"tool_calls": [call("add", "o2", a=2, b=3)]},
    {"content": "5"},
    {"tool_calls": [call("multiply", "o3", a=4, b=5)]},
    {"content": "20"},
]
CASES: dict[str, tuple[Any, Any, Setup, list[str], list[Any]]] = {
    "scoping, anthropic": (
        lambda script: AnthropicStub(script, min_cache_tokens=64),
        lambda stub: anthropic_chat(stub.base_url),
        scoping_setup("anthropic"),
        [text for text, _ in RANKED_SESSION],
        [reply for _, replies in RANKED_SESSION for reply in replies],
    ),
    "gate, anthropic": (
        AnthropicStub,
        lambda stub: anthropic_chat(stub.base_url),
        gate_setup,
        ["What is the weather in Paris?", "And the forecast for tomorrow in Rome?"],
        GATE_SCRIPT,
    ),
    "scoping, openai": (
        OpenAIStub,
        responses_model,
        scoping_setup("openai"),
        ["Please add 2 and 3.", "Now multiply 4 by 5."],
        OPENAI_SCRIPT,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hand_built_graph_sends_what_create_agent_sends(case: str) -> None:
    stub_of, model_of, setup, turns, script = CASES[case]
    built, built_ran = play(stub_of, model_of, setup, turns, script, hand_built)
    agent, agent_ran = play(stub_of, model_of, setup, turns, script, agent_of)
    assert built == agent
    assert built_ran == agent_ran and built_ran
    assert len({json.dumps(json.loads(b).get("tools"), sort_keys=True) for b in built}) == 1
