"""Chat-template markup a small model copies into its reply: removed, the words kept, and a call
written inside it (or in the `name:` / `arguments:` form) still runs."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.testing import ScriptedChatModel, say
from attention_scoping.textcalls import TextToolCallMiddleware, convert_text_calls
from attention_scoping.textcalls.markup import keyed_call, strip_markup
from tests.conftest import Ledger

WRAPPED_CALL = '<tools>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tools>'
ECHOED_RESULT = "<tools>\n<tool_response>\nMadrid: 7 °C, partly cloudy\n</tool_response>\n</tools>"
KEYED_CALL = '<tool_response>\nname: add\narguments: {"a": 2, "b": 3}\n</tool_response>'


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
