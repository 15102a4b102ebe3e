"""The gateway stacks of the example agent and of `eval`: text calls converted by one layer, and a
repeat guard that knows which catalog tools read (they run inside `execute_tool`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

import example_agent
from attention_scoping.gateway import GatewayRoutingMiddleware, ToolGateway
from attention_scoping.hesitation.repeats import REPEAT_MARK, RepeatedCallMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from attention_scoping.textcalls import TextToolCallMiddleware
from attention_scoping_lab.eval.strategies import STRATEGIES, StrategyOptions
from attention_scoping_lab.eval.suites import example_suite


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def run_gateway_agent(script: list[AIMessage], *, text_calls: bool = False) -> list[BaseMessage]:
    model = ScriptedChatModel(script=script)
    agent, _tools = example_agent.build_gateway_agent(model, text_calls=text_calls)
    result = agent.invoke(
        {"messages": [HumanMessage("What is 47 times 83, and 5 km in miles?")]},
        {"configurable": {"thread_id": "gateway"}},
    )
    messages: list[BaseMessage] = result["messages"]
    return messages


def test_the_example_gateway_stack_converts_text_calls_in_one_layer() -> None:
    gateway = example_agent.ToolGateway(
        example_agent.catalog_tools(), approval=example_agent.approval_gate()
    )
    stack = example_agent.gateway_middleware(gateway, text_calls=True)
    assert not any(isinstance(m, TextToolCallMiddleware) for m in stack)
    [routing] = [m for m in stack if isinstance(m, GatewayRoutingMiddleware)]
    assert routing.parse_text_calls is True
    assert not example_agent.gateway_middleware(gateway)[2].parse_text_calls


@pytest.mark.parametrize("name", ["calculate", "get_knowledge"])
def test_a_text_call_of_a_catalog_or_an_offered_tool_runs_once(name: str) -> None:
    args = {"expression": "47*83"} if name == "calculate" else {"topic": "billing"}
    text = f"```json\n{json.dumps({'name': name, 'arguments': args})}\n```"
    messages = run_gateway_agent([say(text), say("Done.")], text_calls=True)
    [answer] = tool_messages(messages)
    expected = "execute_tool" if name == "calculate" else name
    assert answer.name == expected and answer.status == "success"
    [ai] = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    assert ai.response_metadata["text_tool_calls"] == 1


def test_the_example_repeat_guard_knows_catalog_reads() -> None:
    """A read repeated after a write through `execute_tool` runs again (the guard knows the
    catalog's reads: without it, `read_counter` would count as a write, never run twice, and
    the stale count would come back)."""
    counter = {"value": 0}

    @tool
    def read_counter() -> int:
        """Read the counter."""
        return counter["value"]

    @tool
    def bump_counter() -> int:
        """Add one to the counter."""
        counter["value"] += 1
        return counter["value"]

    read_counter.metadata = {"risk": "read"}
    bump_counter.metadata = {"risk": "write", "requires_approval": False}
    gateway = ToolGateway([read_counter, bump_counter])
    read = {"tool_name": "read_counter", "arguments": {}}
    bump = {"tool_name": "bump_counter", "arguments": {}}
    script = [
        calls(tool_call("execute_tool", read, "c1")),
        calls(tool_call("execute_tool", bump, "c2")),
        calls(tool_call("execute_tool", read, "c3")),
        calls(tool_call("execute_tool", read, "c4")),
        say("The counter is 1."),
    ]
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model, tools=gateway.tools, middleware=example_agent.gateway_middleware(gateway)
    )
    messages = agent.invoke({"messages": [HumanMessage("bump the counter and read it")]})
    before, bumped, after, again = tool_messages(messages["messages"])
    assert json.loads(before.text)["result"] == 0 and json.loads(bumped.text)["result"] == 1
    assert json.loads(after.text)["result"] == 1  # ran again after the write
    assert not after.response_metadata.get(REPEAT_MARK)
    assert again.response_metadata.get(REPEAT_MARK) is True  # no write since: answered


@pytest.mark.parametrize("strategy", ["gateway", "gateway-pool"])
def test_eval_gateway_strategies_tell_the_repeat_guard_the_catalog(strategy: str) -> None:
    suite = example_suite()
    guard = RepeatedCallMiddleware()
    execute = {"name": "execute_tool", "args": {"tool_name": "calculate", "arguments": {}}}
    assert guard.writes_call(execute)  # not known yet: counts as a write
    tail: list[Any] = [guard]
    STRATEGIES[strategy].build(suite, ScriptedChatModel(script=[]), tail, StrategyOptions())
    assert not guard.writes_call(execute)
    unknown = {"name": "execute_tool", "args": {"tool_name": "nope", "arguments": {}}}
    assert guard.writes_call(unknown)
