"""Tool calls written as text: what is found, what is converted, and the opt-in middleware."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.testing import ScriptedChatModel, say
from attention_scoping.textcalls import (
    TextToolCallMiddleware,
    convert_text_calls,
    find_text_calls,
    offered_calls,
)
from attention_scoping.textcalls.middleware import offered_tool_names
from tests.conftest import Ledger

FENCED = 'Sure.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'
DOUBLE_BRACE = '```json\n{{"name": "add", "arguments": {"a": 2, "b": 3}}}\n```'
TAGGED = '<tool_call>\n{"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}\n</tool_call>'
BARE = '{"name": "add", "parameters": {"a": 2, "b": 3}}'
OPENAI_SHAPE = '[{"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]'


@pytest.mark.parametrize(
    ("text", "source"),
    [
        (FENCED, "fence"),
        (DOUBLE_BRACE, "fence"),
        (TAGGED, "tag"),
        (BARE, "bare"),
        (OPENAI_SHAPE, "bare"),
    ],
)
def test_every_written_form_is_found(text: str, source: str) -> None:
    calls = find_text_calls(text)
    assert [(c.name, c.arguments, c.source) for c in calls] == [("add", {"a": 2, "b": 3}, source)]


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 5.",
        'The result was {"value": 5}.',
        '```json\n{"answer": 5}\n```',
        '{"name": "add", "arguments": "not json"}',
        "",
    ],
)
def test_prose_and_plain_json_are_not_calls(text: str) -> None:
    assert find_text_calls(text) == []


def test_two_tagged_calls_are_both_found() -> None:
    text = (
        '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>\n'
        '<tool_call>{"name": "shout", "arguments": {"text": "hi"}}</tool_call>'
    )
    assert [c.name for c in find_text_calls(text)] == ["add", "shout"]


def test_only_offered_names_convert() -> None:
    offered, other = offered_calls(FENCED, {"multiply"})
    assert offered == [] and [c.name for c in other] == ["add"]
    message = AIMessage(content=FENCED)
    assert convert_text_calls(message, {"multiply"}) is message


def test_conversion_makes_real_calls_and_keeps_prose() -> None:
    converted = convert_text_calls(AIMessage(content=FENCED), {"add"})
    assert isinstance(converted, AIMessage)
    assert [(c["name"], c["args"]) for c in converted.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert converted.content == "Sure."
    assert converted.response_metadata["text_tool_calls"] == 1


def test_list_content_and_provider_dict_tools_convert() -> None:
    """Content as text blocks (some providers' replies) and tools offered as provider dicts."""
    message = AIMessage(content=[{"type": "text", "text": TAGGED}])
    offered = offered_tool_names([{"type": "function", "function": {"name": "add"}}])
    assert offered == {"add"}
    converted = convert_text_calls(message, offered)
    assert isinstance(converted, AIMessage)
    assert [(c["name"], c["args"]) for c in converted.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert converted.content == ""


def test_a_message_with_real_calls_is_left_alone() -> None:
    message = AIMessage(
        content=FENCED, tool_calls=[{"name": "add", "args": {"a": 1, "b": 1}, "id": "c1"}]
    )
    assert convert_text_calls(message, {"add"}) is message


def _agent(toolbox: dict[str, BaseTool], reply: str) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=[AIMessage(content=reply), say("5")])
    agent = create_agent(
        model, tools=[toolbox["add"], toolbox["shout"]], middleware=[TextToolCallMiddleware()]
    )
    return agent, model


def test_middleware_runs_the_offered_tool(toolbox: dict[str, BaseTool], ledger: Ledger) -> None:
    agent, model = _agent(toolbox, DOUBLE_BRACE)
    out = agent.invoke({"messages": [("user", "add 2 and 3")]})
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_messages] == ["5"]
    assert ledger.names() == ["add"]
    assert len(model.recorded) == 2


def test_middleware_never_runs_an_unoffered_name(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    text = '```json\n{"name": "multiply", "arguments": {"a": 2, "b": 3}}\n```'
    agent, model = _agent(toolbox, text)
    out = agent.invoke({"messages": [("user", "multiply 2 and 3")]})
    assert out["messages"][-1].content == text
    assert ledger.names() == []
    assert len(model.recorded) == 1


async def test_middleware_async(toolbox: dict[str, BaseTool], ledger: Ledger) -> None:
    agent, _ = _agent(toolbox, TAGGED)
    await agent.ainvoke({"messages": [("user", "add 2 and 3")]})
    assert ledger.names() == ["add"]
