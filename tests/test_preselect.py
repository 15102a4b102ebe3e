"""`EncoderSelector`: dense (MiniLM) similarity fused with the lexical share, as the core's
selector (`AttentionScopingMiddleware(scopes, selector=EncoderSelector())`). The encoder here is
the deterministic `HashingEncoder`, except in the test of the real MiniLM."""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.errors import AttentionScopingError, ScopeConfigError
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import HashingEncoder
from attention_scoping.gating.errors import GateConfigError
from attention_scoping.gating.selectors import MARGIN, MIN_SCORE, EncoderSelector
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import Selector
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

Ran = list[str]


def toolbox(ran: Ran) -> dict[str, BaseTool]:
    """Math and text tools declared reads; `save_note` left unclassified."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append("add")
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        ran.append("multiply")
        return a * b

    @tool
    def shout(text: str) -> str:
        """Return the text in upper case."""
        ran.append("shout")
        return text.upper()

    @tool
    def reverse(text: str) -> str:
        """Return the text reversed."""
        ran.append("reverse")
        return text[::-1]

    @tool
    def save_note(text: str) -> str:
        """Save a text note."""
        ran.append("save_note")
        return "saved"

    tools = [add, multiply, shout, reverse, save_note]
    for t in tools[:4]:
        t.metadata = {"risk": "read"}
    return {t.name: t for t in tools}


def scopes_of(tools: dict[str, BaseTool]) -> list[Scope]:
    return [
        Scope("math", "integer arithmetic", [tools["add"], tools["multiply"]], "Use add."),
        Scope("text", "string transformations", [tools["shout"], tools["reverse"]]),
        Scope("notes", "notes you keep", [tools["save_note"]]),
    ]


def selector() -> EncoderSelector:
    return EncoderSelector(encoder=HashingEncoder(), cache=VectorCache(persist=False))


def test_it_is_a_core_selector_with_the_calibrated_defaults() -> None:
    chosen = EncoderSelector()
    assert isinstance(chosen, Selector)
    assert (chosen.min_score, chosen.margin, chosen.weight) == (MIN_SCORE, MARGIN, 0.3)
    assert (MIN_SCORE, MARGIN) == (0.2, 0.03)


def test_a_scope_scores_its_best_document_and_the_lexical_share_is_added() -> None:
    ran: Ran = []
    catalog = ScopeCatalog(scopes_of(toolbox(ran)))
    chosen = selector()
    scored = chosen.scores("multiply two integers", catalog)
    best = max(score for doc, score in scored if doc.scope == "math")
    selection = chosen.select("multiply two integers", catalog)
    assert selection.scores["math"] == pytest.approx(best)
    lexical = EncoderSelector(encoder=HashingEncoder(), cache=VectorCache(persist=False), weight=0)
    plain = dict((d.name, s) for d, s in lexical.scores("multiply two integers", catalog))
    fused = dict((d.name, s) for d, s in scored)
    assert fused["multiply"] == pytest.approx(plain["multiply"] + 0.3 * 1.0)  # every word found
    assert fused["shout"] == pytest.approx(plain["shout"])  # no word found


def test_a_confident_message_gets_its_scope_and_only_declared_reads_on_the_first_call() -> None:
    ran: Ran = []
    tools = toolbox(ran)
    model = ScriptedChatModel(
        script=[calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")]
    )
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=selector())
    result = create_agent(model, tools=list(tools.values()), middleware=[mw]).invoke(
        {"messages": [HumanMessage("multiply 47 and 83 (integer arithmetic)")]}
    )
    assert sorted(model.recorded[0]["tools"]) == ["add", "load_context", "multiply"]
    assert len(model.recorded) == 2  # no extra call to navigate
    assert ran == ["multiply"]
    assert result["active_context"] == "math"
    assert result["scope_selection"]["reason"] == "confident"
    assert result["scope_opened"]["by"] == "code"


def test_the_reads_it_reports_are_declared_reads_only() -> None:
    """`save_note` matches the message best, but nobody declared it a read: never reported,
    and a scope code opens for it shows none of its tools."""
    ran: Ran = []
    tools = toolbox(ran)
    catalog = ScopeCatalog(scopes_of(tools))
    selection = selector().select("save a text note please", catalog)
    assert selection.scope == "notes"
    assert "save_note" not in selection.reads
    model = ScriptedChatModel(script=[calls(tool_call("save_note", {"text": "x"})), say("no")])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=selector())
    create_agent(model, tools=list(tools.values()), middleware=[mw]).invoke(
        {"messages": [HumanMessage("save a text note please")]}
    )
    assert model.recorded[0]["tools"] == ["load_context"]
    assert ran == []


def test_an_off_topic_message_activates_nothing() -> None:
    ran: Ran = []
    tools = toolbox(ran)
    model = ScriptedChatModel(script=[say("hello!")])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=selector())
    result = create_agent(model, tools=list(tools.values()), middleware=[mw]).invoke(
        {"messages": [HumanMessage("hello there")]}
    )
    assert model.recorded[0]["tools"] == ["load_context"]
    assert result.get("active_context") is None
    assert result["scope_selection"]["reason"] in ("no_match", "no_intent")


def test_every_turn_follows_a_new_request() -> None:
    ran: Ran = []
    tools = toolbox(ran)
    model = ScriptedChatModel(script=[say("ok"), say("ok")])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=selector())
    agent = create_agent(
        model, tools=list(tools.values()), middleware=[mw], checkpointer=InMemorySaver()
    )
    thread: RunnableConfig = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("multiply two integers")]}, thread)
    assert first["active_context"] == "math"
    second = agent.invoke({"messages": [HumanMessage("shout this text in upper case")]}, thread)
    assert second["active_context"] == "text"
    assert sorted(model.recorded[1]["tools"]) == ["load_context", "reverse", "shout"]


def test_a_scope_the_application_sets_is_kept() -> None:
    ran: Ran = []
    tools = toolbox(ran)
    model = ScriptedChatModel(script=[say("ok")])
    mw = AttentionScopingMiddleware(scopes_of(tools), selector=selector())
    given: dict[str, Any] = {
        "messages": [HumanMessage("shout this text in upper case")],
        "active_context": "math",
    }
    agent: Any = create_agent(model, tools=list(tools.values()), middleware=[mw])
    result = agent.invoke(given)
    assert sorted(model.recorded[0]["tools"]) == ["add", "load_context", "multiply"]
    assert result["active_context"] == "math"


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"min_score": math.nan}, ScopeConfigError, "min_score must be a number in"),
        ({"margin": 1.5}, ScopeConfigError, "margin must be a number in"),
        ({"weight": -0.1}, GateConfigError, r"weight must be in \[0, 1\]"),
        ({"weight": math.inf}, GateConfigError, r"weight must be in \[0, 1\]"),
        ({"encoder": object()}, GateConfigError, "encoder must have an encode"),
    ],
)
def test_bad_options_are_refused(
    options: dict[str, Any], error: type[AttentionScopingError], says: str
) -> None:
    with pytest.raises(error, match=says):
        EncoderSelector(**options)


def test_the_real_encoder_picks_the_example_agents_scopes() -> None:
    pytest.importorskip("onnxruntime")
    from agents import build_scopes

    scopes = [Scope(s.name, s.description, list(s.tool_objects)) for s in build_scopes()]
    catalog = ScopeCatalog(scopes)
    chosen = EncoderSelector()
    assert chosen.select("What is 47 times 83?", catalog).scope == "math"
    assert chosen.select("What's the weather in Paris right now?", catalog).scope == "weather"
    assert chosen.select("Which language is 'Ich habe keine Zeit' in?", catalog).scope == (
        "translation"
    )
    assert chosen.select("Hello!", catalog).scope is None
    assert chosen.select("Thanks!", catalog).scope is None
