"""Malformed model output and state never end a run: each gets a structured answer.

Every tool call of the thread is answered exactly once, so the next turn is valid for a
provider (an unanswered call makes OpenAI and Anthropic reject the request).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.adapters.hygiene import INVALID_ARGUMENTS_KEY, repair_message
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import Ledger
from tests.thread_support import assert_thread_valid


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(message.content)  # type: ignore[arg-type]


def agent_for(scopes: list[Scope], script: list[Any], **options: Any) -> tuple[Any, Any]:
    model = ScriptedChatModel(script=script)
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes, **options)])
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
    assert result["active_context"] == "math"  # the first switch of the step wins
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(body(a).get("error", "ok") for a in answers) == ["ok", "one_context_per_step"]
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
def test_active_context_of_the_wrong_type_degrades_to_the_default(
    scopes: list[Scope], value: Any, caplog: Any
) -> None:
    agent, model = agent_for(scopes, [say("ok")])
    with caplog.at_level(logging.WARNING):
        result = agent.invoke({"messages": [HumanMessage("go")], "active_context": value})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert result["active_context"] is None
    assert "active_context" in caplog.text


def test_a_hidden_tool_called_with_a_malformed_context_still_never_runs(
    scopes: list[Scope], ledger: Ledger
) -> None:
    agent, _ = agent_for(scopes, [calls(tool_call("shout", {"text": "x"}, "c1")), say("ok")])
    result = agent.invoke({"messages": [HumanMessage("go")], "active_context": ["text"]})
    assert ledger.names() == []
    assert_thread_valid(result["messages"])


def test_repair_leaves_a_clean_message_alone() -> None:
    clean = calls(tool_call("add", {"a": 1, "b": 2}, "x"))
    assert repair_message(clean) is None
    fixed = repair_message(
        AIMessage(content="", invalid_tool_calls=[{"name": None, "args": None, "id": None}])
    )
    assert fixed is not None
    assert fixed.tool_calls[0]["id"] == "call_0"
    assert INVALID_ARGUMENTS_KEY in fixed.tool_calls[0]["args"]
