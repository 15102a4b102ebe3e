"""Property-based fuzzing of real agents driven by a scripted model (issue: nothing ends a run).

Random model steps (visible, hidden, unknown and near-miss tool names; `load_context` with any
JSON value; arguments of random JSON types, depth, size and unicode; invalid JSON; duplicate and
empty ids), random `active_context` values and user messages, against three agents: scoping in
`create_agent`, scoping + the tool gate in `create_agent`, and scoping in a hand-built
`StateGraph`. Invariants after every run:

1. no model output ends a run (an `active_context` naming no scope is the application's error:
   the core raises `UnknownScopeError`, an `AttentionScopingError` naming the valid scopes);
2. a tool runs only if the model was sent it in the call that issued it (hidden tools never run);
3. every tool call has a unique id and exactly one answer;
4. the thread is valid for a provider on the next turn (the OpenAI message rules of the test
   server) and a next turn runs.

CI runs a derandomised profile (`FUZZ_EXAMPLES`, default 700 per agent); a longer run:
`FUZZ_EXAMPLES=20000 python -m pytest tests/test_fuzz_agents.py` (see docs/reliability.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_openai.chat_models.base import _convert_message_to_dict
from langgraph.graph import END, START, StateGraph

from attention_scoping.errors import UnknownScopeError
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, say
from tests.fuzz_support import fuzz_settings
from tests.openai_stub import validate_messages
from tests.thread_support import assert_thread_valid
from tests.toolbox_support import TOOL_NAMES, Ran, make_toolbox

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "700"))

NAMES = [
    "add",
    "multiply",
    "shout",
    "reverse",
    "get_knowledge",
    "load_context",
    "ad",
    "Add",
    "mul tiply",
    "nope",
    "",
    "add" * 40,
    "load_context ",
]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)
args_for = st.one_of(
    st.fixed_dictionaries({"a": json_value, "b": json_value}),
    st.fixed_dictionaries({"text": json_value}),
    st.fixed_dictionaries({"name": json_value}),
    st.fixed_dictionaries({"topic": st.text(max_size=30)}),
    st.dictionaries(st.text(max_size=10), json_value, max_size=3),
)
ids = st.one_of(st.sampled_from(["c1", "c2", "c1", ""]), st.text(min_size=1, max_size=6))


@st.composite
def tool_call_dicts(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(NAMES))
    if name == "load_context":
        target = st.one_of(st.sampled_from(["math", "text"]), json_value)
        args: dict[str, Any] = {"name": draw(target)}
    else:
        args = draw(args_for)
    return {"name": name, "args": args, "id": draw(ids), "type": "tool_call"}


@st.composite
def model_steps(draw: st.DrawFn) -> AIMessage:
    calls = draw(st.lists(tool_call_dicts(), min_size=0, max_size=3))
    invalid = [
        {"name": draw(st.sampled_from(NAMES)), "args": raw, "id": draw(ids), "error": "bad"}
        for raw in draw(st.lists(st.text(max_size=20), max_size=1))
    ]
    text = draw(st.text(max_size=30))
    return AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid)


scripts = st.lists(model_steps(), min_size=1, max_size=4)
contexts = st.one_of(st.none(), st.sampled_from(["math", "text", "", "weather"]), json_value)


@dataclass
class Harness:
    """One agent with a scripted model whose script each example replaces."""

    model: ScriptedChatModel
    agent: Any
    ran: Ran = field(default_factory=list)


def _tools(ran: Ran) -> list[BaseTool]:
    return list(make_toolbox(ran, TOOL_NAMES[:5]).values())


def _scoping(tools: list[BaseTool]) -> AttentionScopingMiddleware:
    by = {t.name: t for t in tools}
    return AttentionScopingMiddleware(
        [
            Scope("math", "integer arithmetic", tools=[by["add"], by["multiply"]]),
            Scope("text", "string transformations", tools=[by["shout"], by["reverse"]]),
        ],
        always_on=[by["get_knowledge"]],
    )


def scoped_agent() -> Harness:
    ran: Ran = []
    model = ScriptedChatModel(policy=say("done"))
    tools = _tools(ran)
    agent = create_agent(model, tools=tools, middleware=[_scoping(tools)])
    return Harness(model, agent, ran)


def gated_agent() -> Harness:
    ran: Ran = []
    tools = _tools(ran)
    model = ScriptedChatModel(policy=say("done"))
    gate = ToolAttentionMiddleware(ranker="bm25", k=2, pinned=["get_knowledge"])
    stack: list[AgentMiddleware[Any, Any]] = [_scoping(tools), gate]
    agent = create_agent(model, tools=tools, middleware=stack)
    return Harness(model, agent, ran)


def graph_agent() -> Harness:
    ran: Ran = []
    tools = _tools(ran)
    scoping = _scoping(tools)
    model = ScriptedChatModel(policy=say("done"))
    builder = StateGraph(ScopedAgentState)
    schema = ScopedAgentState
    builder.add_node(
        "model", make_model_node(model, tools, middleware=[scoping], state_schema=schema)
    )
    builder.add_node("tools", make_tool_node(tools, middleware=[scoping], state_schema=schema))

    def route(state: dict[str, Any]) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    return Harness(model, builder.compile(), ran)


def check_run(h: Harness, script: list[AIMessage], context: Any, user: str) -> None:
    h.model.script = script
    h.model.recorded.clear()
    h.ran.clear()
    inputs: dict[str, Any] = {"messages": [HumanMessage(user or "go")]}
    if context is not None:
        inputs["active_context"] = context
    if context not in (None, "", "math", "text"):
        with pytest.raises(UnknownScopeError, match="valid scopes: 'math', 'text'"):
            h.agent.invoke(inputs, {"recursion_limit": 60})
        assert h.ran == []
        return
    result = h.agent.invoke(inputs, {"recursion_limit": 60})
    messages: list[BaseMessage] = result["messages"]
    assert_thread_valid(messages)
    assert_only_sent_tools_ran(messages, h)
    validate_messages([_convert_message_to_dict(m) for m in messages])
    h.model.script = []
    follow = h.agent.invoke(
        {"messages": [*messages, HumanMessage("and then?")]}, {"recursion_limit": 60}
    )
    assert isinstance(follow["messages"][-1], AIMessage)


def assert_only_sent_tools_ran(messages: list[BaseMessage], h: Harness) -> None:
    """Each successful tool result answers a call of a tool sent with that model call."""
    step = -1
    shown: dict[str, list[str]] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            step += 1
            for call in message.tool_calls:
                assert call["id"], call  # every call carries an id
                shown[call["id"]] = h.model.recorded[step]["tools"]
    ran_ok = 0
    for message in messages:
        if isinstance(message, ToolMessage) and message.status != "error":
            assert message.name in shown[message.tool_call_id], (message.name, shown)
            ran_ok += message.name != "load_context"
    assert len(h.ran) <= ran_ok  # nothing ran without a successful answer naming it


FUZZ = fuzz_settings(EXAMPLES)

HARNESSES: dict[str, Callable[[], Harness]] = {
    "create_agent": scoped_agent,
    "create_agent+gate": gated_agent,
    "state_graph": graph_agent,
}


@pytest.mark.parametrize("kind", sorted(HARNESSES))
def test_no_model_output_or_state_ends_the_run(kind: str) -> None:
    harness = HARNESSES[kind]()

    @FUZZ
    @given(script=scripts, context=contexts, user=st.text(max_size=60))
    def run(script: list[AIMessage], context: Any, user: str) -> None:
        check_run(harness, script, context, user)

    run()


def test_deep_and_huge_arguments_are_answered() -> None:
    harness = gated_agent()
    deep: Any = 1
    for _ in range(300):  # deeper than any schema; the scripted model deep-copies its replies
        deep = [deep]
    huge = "x" * 200_000
    script = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "load_context", "args": {"name": deep}, "id": "d1", "type": "tool_call"},
                {"name": "shout", "args": {"text": huge}, "id": "d2", "type": "tool_call"},
                {"name": "add", "args": {"a": deep, "b": 10**400}, "id": "d3", "type": "tool_call"},
            ],
        )
    ]
    check_run(harness, script, None, "go")
    assert harness.ran == []  # too deep to pass on; 'shout' is hidden while no scope is active
