"""Malformed model output and state never end a run: each gets a structured answer.

Every tool call of the thread is answered exactly once, so the next turn is valid for a
provider (an unanswered call makes OpenAI and Anthropic reject the request).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.adapters.hygiene import INVALID_ARGUMENTS_KEY, repair_message
from attention_scoping.errors import UnknownScopeError
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import Ledger
from tests.thread_support import assert_thread_valid


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(message.content)  # type: ignore[arg-type]


@pytest.fixture
def scopes(toolbox: dict[str, BaseTool]) -> list[Scope]:
    """`math` (add, multiply) and `text` (shout, reverse) as core scopes."""
    return [
        Scope("math", "integer arithmetic", tools=[toolbox["add"], toolbox["multiply"]]),
        Scope("text", "string transformations", tools=[toolbox["shout"], toolbox["reverse"]]),
    ]


def agent_for(scopes: list[Scope], script: list[Any], **options: Any) -> tuple[Any, Any]:
    model = ScriptedChatModel(script=script)
    tools = [t for s in scopes for t in s.tool_objects]
    scoping = AttentionScopingMiddleware(scopes, selector=None, **options)
    agent = create_agent(model, tools=tools, middleware=[scoping])
    return agent, model


@pytest.mark.parametrize("name", [["math"], {"scope": "math"}, 3, None, 2.5, True, "", "x" * 5000])
def test_load_context_with_a_malformed_name_is_refused(scopes: list[Scope], name: Any) -> None:
    agent, model = agent_for(
        scopes, [calls(tool_call("load_context", {"name": name}, "c1")), say("ok")]
    )
    result = agent.invoke({"messages": [HumanMessage("go")]})
    answer = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error"
    payload = body(answer)
    assert payload["error"] == "unknown_context"
    assert payload["valid_contexts"] == ["math", "text"]
    assert len(payload["requested"]) <= 200
    assert result.get("active_context") is None
    assert_thread_valid(result["messages"])
    assert len(model.recorded) == 2  # the model got the refusal and answered


def test_load_context_without_arguments_is_refused(scopes: list[Scope]) -> None:
    call = {"name": "load_context", "args": {}, "id": "c1", "type": "tool_call"}
    agent, _ = agent_for(scopes, [calls(call), say("ok")])
    result = agent.invoke({"messages": [HumanMessage("go")]})
    assert body(result["messages"][2])["error"] == "unknown_context"
    assert_thread_valid(result["messages"])


def test_two_load_context_calls_sharing_one_id_get_one_answer_each(scopes: list[Scope]) -> None:
    step = calls(
        tool_call("load_context", {"name": "math"}, "same"),
        tool_call("load_context", {"name": "text"}, "same"),
    )
    agent, _ = agent_for(scopes, [step, say("ok")])
    result = agent.invoke({"messages": [HumanMessage("go")]})
    assert result.get("active_context") == "math"  # two switches in one step: the first runs
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [body(a).get("error") for a in answers] == [None, "one_context_per_step"]
    assert len({a.tool_call_id for a in answers}) == 2
    assert_thread_valid(result["messages"])


def test_duplicate_and_empty_ids_of_tool_calls_are_made_unique(
    scopes: list[Scope], ledger: Ledger
) -> None:
    step = calls(
        tool_call("add", {"a": 1, "b": 2}, "dup"),
        tool_call("multiply", {"a": 2, "b": 3}, "dup"),
        {"name": "add", "args": {"a": 5, "b": 5}, "id": "", "type": "tool_call"},
    )
    agent, _ = agent_for(scopes, [step, say("ok")], default_scope="math")
    result = agent.invoke({"messages": [HumanMessage("go")]})
    assert sorted(ledger.names()) == ["add", "add", "multiply"]
    assert_thread_valid(result["messages"])


def test_tool_call_with_invalid_json_arguments_is_answered_not_run(
    scopes: list[Scope], ledger: Ledger
) -> None:
    bad = AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "add", "args": '{"a": 1, "b":', "id": "bad1", "error": "truncated"}
        ],
    )
    agent, model = agent_for(scopes, [bad, say("ok")], default_scope="math")
    result = agent.invoke({"messages": [HumanMessage("go")]})
    answer = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert answer.tool_call_id == "bad1"
    assert body(answer)["error"] == "invalid_arguments"
    assert "JSON object" in body(answer)["next_step"]
    assert ledger.names() == []  # never ran with made-up arguments
    assert len(model.recorded) == 2
    assert_thread_valid(result["messages"])


@pytest.mark.parametrize("value", [3, ["math"], {"name": "math"}, 1.5, "missing"])
def test_active_context_of_the_wrong_type_is_an_error_naming_the_scopes(
    scopes: list[Scope], value: Any
) -> None:
    agent, model = agent_for(scopes, [say("ok")])
    with pytest.raises(UnknownScopeError, match="valid scopes: 'math', 'text'"):
        agent.invoke({"messages": [HumanMessage("go")], "active_context": value})
    assert model.recorded == []


def test_a_hidden_tool_called_with_a_malformed_context_still_never_runs(
    scopes: list[Scope], ledger: Ledger
) -> None:
    agent, _ = agent_for(scopes, [calls(tool_call("shout", {"text": "x"}, "c1")), say("ok")])
    with pytest.raises(UnknownScopeError):
        agent.invoke({"messages": [HumanMessage("go")], "active_context": ["text"]})
    assert ledger.names() == []


def test_repair_leaves_a_clean_message_alone() -> None:
    clean = calls(tool_call("add", {"a": 1, "b": 2}, "x"))
    assert repair_message(clean) is None
    fixed = repair_message(
        AIMessage(content="", invalid_tool_calls=[{"name": None, "args": None, "id": None}])
    )
    assert fixed is not None
    assert fixed.tool_calls[0]["id"] == "call_0"
    assert INVALID_ARGUMENTS_KEY in fixed.tool_calls[0]["args"]
