"""Intent pre-selection of the scope, the start set of unscoped calls, and scope switching by
calling a tool (issue: scoping that works with any model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.scoping.catalog import ScopeCatalog
from attention_scoping.scoping.preselect import choose, scope_scores
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import Ledger


def agent_for(scopes: list[Scope], script: list[Any], **options: Any) -> tuple[Any, Any]:
    model = ScriptedChatModel(script=script)
    options.setdefault("ranker", "lexical")
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes, **options)])
    return agent, model


def test_choose_needs_a_clear_lead_and_a_real_match() -> None:
    assert choose({"math": 0.6, "text": 0.2}, margin=0.1, min_score=0.3).scope == "math"
    close = choose({"math": 0.6, "text": 0.55}, margin=0.1, min_score=0.3)
    assert (close.scope, close.reason) == (None, "close_call")
    weak = choose({"math": 0.2, "text": 0.0}, margin=0.1, min_score=0.3)
    assert (weak.scope, weak.reason) == (None, "no_match")
    assert choose({}, margin=0.1).reason == "no_match"
    assert "ahead by" in choose({"math": 0.6}, margin=0.1).explain()


def test_scope_scores_take_each_scopes_best_document(scopes: list[Scope]) -> None:
    catalog = ScopeCatalog(scopes)
    ranked = [("multiply", 0.9), ("scope::text", 0.4), ("shout", 0.3), ("add", 0.1)]
    assert scope_scores(ranked, catalog) == {"math": 0.9, "text": 0.4}


def test_a_confident_message_gets_its_scope_on_the_first_call(
    scopes: list[Scope], ledger: Ledger
) -> None:
    agent, model = agent_for(
        scopes,
        [calls(tool_call("multiply", {"a": 47, "b": 83}, "c1")), say("3901")],
        layout="layered",  # the module travels in the system prompt
    )
    result = agent.invoke({"messages": [HumanMessage("multiply 47 and 83 (integer arithmetic)")]})
    assert model.recorded[0]["tools"] == ["load_context", "add", "multiply"]
    assert "Use add and multiply" in model.recorded[0]["system"]
    assert len(model.recorded) == 2  # no extra call to navigate
    assert ledger.names() == ["multiply"]
    assert result["active_context"] == "math"
    assert result["scope_selection"]["reason"] == "confident"


def test_an_off_topic_message_activates_nothing(scopes: list[Scope]) -> None:
    agent, model = agent_for(scopes, [say("hello!")])
    result = agent.invoke({"messages": [HumanMessage("hello there")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert result.get("active_context") is None
    assert result["scope_selection"]["reason"] == "no_match"


def test_the_all_start_offers_every_tool_and_a_call_loads_its_scope(
    scopes: list[Scope], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[calls(tool_call("shout", {"text": "hi"}, "c1")), say("HI"), say("ok")]
    )
    scoping = AttentionScopingMiddleware(scopes, preselect="off", start="all")
    agent = create_agent(model, middleware=[scoping], checkpointer=InMemorySaver())
    thread: RunnableConfig = {"configurable": {"thread_id": "t"}}
    result = agent.invoke({"messages": [HumanMessage("hello there")]}, thread)
    assert set(model.recorded[0]["tools"]) == {
        "load_context",
        "add",
        "multiply",
        "shout",
        "reverse",
    }
    assert ledger.names() == ["shout"]
    assert result["active_context"] == "text"
    assert result["scope_opened"]["by"] == "code"  # a start-set call adopted it
    # The start set leaves view once a scope is loaded: the adopted scope's tools alone.
    assert model.recorded[1]["tools"] == ["load_context", "shout", "reverse"]
    assert result.get("scope_offered") is None
    # The next user message sees the loaded scope alone.
    later = agent.invoke({"messages": [HumanMessage("and again")]}, thread)
    assert model.recorded[2]["tools"] == ["load_context", "shout", "reverse"]
    assert later.get("scope_offered") is None


def test_the_start_set_leaves_view_once_a_call_loads_a_scope(
    scopes: list[Scope], ledger: Ledger
) -> None:
    """A close call offers tools of two scopes; calling one loads its scope, and the start set
    leaves view: the other scope's tool is refused until the model loads that scope."""

    def rank(query: str, documents: Sequence[Any]) -> list[tuple[str, float]]:
        scores = {"multiply": 0.6, "shout": 0.58, "add": 0.2}
        return sorted(((d.name, scores.get(d.name, 0.0)) for d in documents), key=lambda x: -x[1])

    script = [
        calls(tool_call("multiply", {"a": 6, "b": 7}, "c1")),
        calls(tool_call("shout", {"text": "42"}, "c2")),
        calls(tool_call("load_context", {"name": "text"}, "c3")),
        calls(tool_call("shout", {"text": "42"}, "c4")),
        say("42!"),
    ]
    agent, model = agent_for(
        scopes,
        script,
        ranker=rank,
        preselect_margin=0.1,
        preselect_min_score=0.3,
        start="top",
        start_top_k=2,
    )
    result = agent.invoke({"messages": [HumanMessage("multiply 6 by 7, then shout it")]})
    assert result["scope_selection"]["reason"] == "close_call"
    assert model.recorded[0]["tools"] == ["load_context", "multiply", "shout"]
    assert model.recorded[1]["tools"] == ["load_context", "add", "multiply"]
    refused = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert [json.loads(str(m.content))["error"] for m in refused] == ["tool_not_in_context"]
    assert "load_context('text')" in json.loads(str(refused[0].content))["next_step"]
    assert model.recorded[3]["tools"] == ["load_context", "shout", "reverse"]
    assert ledger.names() == ["multiply", "shout"]  # the refused shout never ran
    assert result["active_context"] == "text"
    assert result["scope_opened"]["by"] == "model"


def test_the_top_start_offers_only_matching_tools_and_refuses_the_others(
    scopes: list[Scope], ledger: Ledger
) -> None:
    step = calls(
        tool_call("reverse", {"text": "abc"}, "c1"), tool_call("add", {"a": 1, "b": 2}, "c2")
    )
    agent, model = agent_for(
        scopes, [step, say("done")], preselect="off", start="top", start_top_k=1
    )
    result = agent.invoke({"messages": [HumanMessage("reverse this text please")]})
    assert model.recorded[0]["tools"] == ["load_context", "reverse"]
    assert ledger.names() == ["reverse"]  # 'add' was not offered: refused, never run
    refused = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert [json.loads(str(m.content))["error"] for m in refused] == ["tool_not_in_context"]
    assert result["active_context"] == "text"


def test_every_turn_preselection_follows_a_new_request(scopes: list[Scope]) -> None:
    model = ScriptedChatModel(script=[say("ok"), say("ok")])
    scoping = AttentionScopingMiddleware(scopes, preselect="every_turn", ranker="lexical")
    agent = create_agent(model, middleware=[scoping], checkpointer=InMemorySaver())
    thread: RunnableConfig = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("multiply two integers")]}, thread)
    assert first["active_context"] == "math"
    second = agent.invoke({"messages": [HumanMessage("shout this text in upper case")]}, thread)
    assert second["active_context"] == "text"
    assert model.recorded[1]["tools"] == ["load_context", "shout", "reverse"]


def test_unscoped_preselection_keeps_an_active_scope(scopes: list[Scope]) -> None:
    agent, model = agent_for(scopes, [say("ok")], preselect="unscoped")
    result = agent.invoke(
        {"messages": [HumanMessage("shout this text in upper case")], "active_context": "math"}
    )
    assert model.recorded[0]["tools"] == ["load_context", "add", "multiply"]
    assert result["active_context"] == "math"


@pytest.mark.parametrize("policy", ["refuse", "switch"])
def test_a_call_to_another_scopes_tool(scopes: list[Scope], ledger: Ledger, policy: str) -> None:
    step = calls(
        tool_call("shout", {"text": "hi"}, "c1"), tool_call("reverse", {"text": "ab"}, "c2")
    )
    agent, _ = agent_for(scopes, [step, say("done")], preselect="off", on_foreign_tool=policy)
    result = agent.invoke({"messages": [HumanMessage("go")], "active_context": "math"})
    if policy == "switch":
        assert sorted(ledger.names()) == ["reverse", "shout"]
        assert result["active_context"] == "text"
    else:
        assert ledger.names() == []
        assert result["active_context"] == "math"


def test_the_scope_event_says_why(scopes: list[Scope]) -> None:
    agent, _ = agent_for(scopes, [say("ok")])
    events = [
        chunk
        for mode, chunk in agent.stream(
            {"messages": [HumanMessage("reverse this text")]}, stream_mode=["custom"]
        )
        if mode == "custom"
    ]
    scope_events = [e for e in events if e.get("type") == "scope"]
    assert scope_events[0]["active_context"] == "text"
    assert scope_events[0]["preselect"]["reason"] == "confident"
    assert "chose 'text'" in scope_events[0]["preselect"]["why"]


def test_bad_options_are_refused(scopes: list[Scope]) -> None:
    with pytest.raises(ValueError, match="preselect must be one of"):
        AttentionScopingMiddleware(scopes, preselect="always")
    with pytest.raises(ValueError, match="start must be one of"):
        AttentionScopingMiddleware(scopes, start="everything")
    with pytest.raises(ValueError, match="custom ranker needs"):
        AttentionScopingMiddleware(scopes, ranker=lambda q, d: [])
    with pytest.raises(ValueError, match="on_foreign_tool"):
        AttentionScopingMiddleware(scopes, on_foreign_tool="maybe")


def test_the_real_encoder_picks_the_example_agents_scopes() -> None:
    pytest.importorskip("onnxruntime")
    from agents import build_scopes
    from attention_scoping.scoping.start import ScopeStart

    scopes = build_scopes()
    start = ScopeStart(
        ScopeCatalog(scopes),
        preselect="unscoped",
        start="top",
        margin=None,
        min_score=None,
        top_k=5,
        ranker="auto",
    )
    tools = [t for s in scopes for t in s.tool_objects]
    assert start.choose("What is 47 times 83?", tools).scope == "math"
    assert start.choose("What's the weather in Paris right now?", tools).scope == "weather"
    assert start.choose("Which language is 'Ich habe keine Zeit' in?", tools).scope == "translation"
    assert start.choose("Hello!", tools).scope is None
