"""Tool calls written as text: what is found, what is converted, and the opt-in middleware; and
the chat-template markup a small model copies into its reply (removed, the words kept)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.testing import ScriptedChatModel, say
from attention_scoping.textcalls import (
    TextToolCallMiddleware,
    convert_text_calls,
    find_text_calls,
    offered_calls,
)
from attention_scoping.textcalls.markup import keyed_call, strip_markup
from attention_scoping.textcalls.middleware import offered_tool_names
from tests.conftest import Ledger

FENCED = 'Sure.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'
DOUBLE_BRACE = '```json\n{{"name": "add", "arguments": {"a": 2, "b": 3}}}\n```'
TAGGED = '<tool_call>\n{"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}\n</tool_call>'
BARE = '{"name": "add", "parameters": {"a": 2, "b": 3}}'
OPENAI_SHAPE = '[{"type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]'
WRAPPED_CALL = '<tools>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tools>'
ECHOED_RESULT = "<tools>\n<tool_response>\nMadrid: 7 °C, partly cloudy\n</tool_response>\n</tools>"
KEYED_CALL = '<tool_response>\nname: add\narguments: {"a": 2, "b": 3}\n</tool_response>'


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


# -- template markup ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ECHOED_RESULT, "Madrid: 7 °C, partly cloudy"),
        ("<|im_start|>assistant\nIt is 7 °C.<|im_end|>", "assistant\nIt is 7 °C."),
        ("<TOOL_RESULT>5</TOOL_RESULT>", "5"),
    ],
)
def test_template_tags_go_and_the_words_stay(text: str, expected: str) -> None:
    assert strip_markup(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It is 7 °C in Madrid.",
        "Use <b>bold</b> and a <note> element in the XML.",
        '<tool_call>{"name": "add", "arguments": {}}</tool_call>',
    ],
)
def test_text_without_template_tags_is_the_same_string(text: str) -> None:
    assert strip_markup(text) is text


def test_the_keyed_form_is_a_call_only_when_it_is_the_whole_reply() -> None:
    call = keyed_call('name: add\narguments: {"a": 2, "b": 3}')
    assert call is not None and (call.name, call.arguments) == ("add", {"a": 2, "b": 3})
    assert keyed_call('name: add\narguments: {"a": 2,') is None  # not JSON
    assert keyed_call("name: add\narguments: [1, 2]") is None  # not an object
    assert keyed_call('Call it like this:\nname: add\narguments: {"a": 2}') is None


@pytest.mark.parametrize("text", [WRAPPED_CALL, KEYED_CALL])
def test_a_call_inside_markup_converts_with_no_markup_left(text: str) -> None:
    converted = convert_text_calls(AIMessage(content=text), {"add"})
    assert isinstance(converted, AIMessage)
    assert [(c["name"], c["args"]) for c in converted.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert converted.content == ""


def test_a_keyed_call_of_a_tool_not_offered_does_not_run() -> None:
    converted = convert_text_calls(AIMessage(content=KEYED_CALL), {"shout"})
    assert isinstance(converted, AIMessage)
    assert converted.tool_calls == []
    assert converted.content == 'name: add\narguments: {"a": 2, "b": 3}'


def test_an_answer_dressed_as_a_tool_result_loses_the_dress() -> None:
    message = AIMessage(content=ECHOED_RESULT)
    cleaned = convert_text_calls(message, {"add"})
    assert isinstance(cleaned, AIMessage)
    assert cleaned.content == "Madrid: 7 °C, partly cloudy"
    assert cleaned.response_metadata["markup_removed"] is True
    assert convert_text_calls(AIMessage(content="It is 7 °C."), {"add"}).content == "It is 7 °C."


def test_the_thread_keeps_no_markup_for_the_next_turn(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[
            AIMessage(content=WRAPPED_CALL),
            AIMessage(content="<tool_response>5</tool_response>"),
            say("done"),
        ]
    )
    agent: Any = create_agent(model, tools=[toolbox["add"]], middleware=[TextToolCallMiddleware()])
    out = agent.invoke({"messages": [("user", "add 2 and 3")]})
    messages: list[BaseMessage] = out["messages"]
    assert ledger.names() == ["add"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["5"]
    assert [m.content for m in messages if isinstance(m, AIMessage)] == ["", "5"]
