"""ToolAttentionMiddleware on tiny catalogs with known answers, driven by a scripted model."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, tool

from attention_scoping.common.messages import intent_text
from attention_scoping.errors import AttentionScopingError
from attention_scoping.gating.errors import GateConfigError
from attention_scoping.gating.gate import GateInputs, NameMatcher, decide
from attention_scoping.gating.middleware import ToolAttentionMiddleware, explain
from attention_scoping.gating.options import Promotion, SummaryPool
from attention_scoping.gating.ranking import BM25Ranker
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

RAN: list[str] = []


def make(name: str, description: str) -> BaseTool:
    """A tool declared a read, so the gate's ranking may show it."""

    def run(query: str = "") -> str:
        RAN.append(name)
        return f"{name} ok"

    return StructuredTool.from_function(
        run, name=name, description=description, metadata={"risk": "read"}
    )


CATALOG = [
    make("get_weather", "Current weather and temperature for a city."),
    make("get_forecast", "Weather forecast for the next days in a city."),
    make("send_email", "Send an email message to a recipient."),
    make("read_inbox", "List the latest emails in the inbox."),
    make("create_invoice", "Create an invoice for a customer order."),
    make("refund_payment", "Refund a customer payment for an order."),
    make("convert_currency", "Convert an amount of money between currencies."),
    make("translate_text", "Translate text into another language."),
]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def gate(**kwargs: Any) -> ToolAttentionMiddleware:
    kwargs.setdefault("ranker", BM25Ranker())
    kwargs.setdefault("summary_pool", "off")
    return ToolAttentionMiddleware(**kwargs)


def agent_for(model: ScriptedChatModel, *middleware: Any, **kwargs: Any) -> Any:
    return create_agent(model, tools=CATALOG, middleware=list(middleware), **kwargs)


def body(message: ToolMessage) -> dict[str, Any]:
    return json.loads(message.content)  # type: ignore[arg-type]


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_top_k_follows_the_intent() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    agent_for(model, gate(k=2)).invoke({"messages": [HumanMessage("what's the weather forecast")]})
    assert model.recorded[0]["tools"] == ["get_weather", "get_forecast"]


def test_threshold_cuts_weak_matches() -> None:
    # BM25 scores are raw: with a high threshold only strong matches survive, even below k.
    model = ScriptedChatModel(script=[say("ok"), say("ok")])
    agent = agent_for(model, gate(k=5, promotion=Promotion(threshold=1.0)))
    agent.invoke({"messages": [HumanMessage("refund the payment")]})
    assert model.recorded[0]["tools"] == ["refund_payment"]
    agent.invoke({"messages": [HumanMessage("hello there")]})  # nothing matches at all
    assert model.recorded[1]["tools"] == []


def test_pinned_tools_are_never_dropped() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    agent_for(model, gate(k=1, pinned=["translate_text"])).invoke(
        {"messages": [HumanMessage("send an email to Bob")]}
    )
    assert model.recorded[0]["tools"] == ["send_email", "translate_text"]


def test_preconditions_hide_and_refuse_with_the_reason() -> None:
    g = gate(k=3, preconditions={"read_inbox": {"authenticated": True}})
    model = ScriptedChatModel(
        script=[calls(tool_call("read_inbox", {}, "c1")), say("please log in")]
    )
    result = agent_for(model, g).invoke({"messages": [HumanMessage("read my inbox emails")]})
    assert "read_inbox" not in model.recorded[0]["tools"]
    (refusal,) = tool_messages(result)
    assert refusal.status == "error"
    assert body(refusal)["error"] == "precondition_failed"
    assert body(refusal)["unmet"] == "requires state authenticated == True (it is not set)"
    assert RAN == []
    trace = g.decide({"messages": [HumanMessage("read my inbox")]}, CATALOG)
    assert trace.verdicts["read_inbox"].reason == "precondition"
    assert "authenticated" in trace.explain("read_inbox")


def test_callable_precondition_on_state() -> None:
    def logged_in(state: Any) -> bool:
        """the user is logged in"""
        return bool(state.get("user"))

    g = gate(k=8, preconditions={"read_inbox": logged_in})
    hidden = g.decide({"messages": [HumanMessage("inbox")]}, CATALOG)
    shown = g.decide({"messages": [HumanMessage("inbox")], "user": "ada"}, CATALOG)
    assert "read_inbox" not in hidden.shown and "read_inbox" in shown.shown
    assert "'logged_in' (the user is logged in) is not met" in hidden.explain("read_inbox")


def test_refused_call_is_promoted_for_the_next_step() -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("convert_currency", {"query": "10 EUR"}, "c1")),  # known, not sent
            calls(tool_call("convert_currency", {"query": "10 EUR"}, "c2")),
            say("done"),
        ]
    )
    result = agent_for(model, gate(k=1)).invoke(
        {"messages": [HumanMessage("send an email to Bob")]}
    )
    assert model.recorded[0]["tools"] == ["send_email"]
    refusal = tool_messages(result)[0]
    assert body(refusal)["error"] == "tool_not_available"
    assert body(refusal)["summary"] == "Convert an amount of money between currencies."
    assert "convert_currency" in model.recorded[1]["tools"]  # promoted, schema sent
    assert RAN == ["convert_currency"]  # ran once, on the second call


def test_unknown_tool_is_refused_without_listing_hidden_tools() -> None:
    model = ScriptedChatModel(script=[calls(tool_call("delete_everything", {}, "c1")), say("ok")])
    result = agent_for(model, gate(k=1)).invoke({"messages": [HumanMessage("send an email")]})
    refusal = body(tool_messages(result)[0])
    assert refusal["error"] == "unknown_tool"
    assert refusal["available_tools"] == ["send_email"]
    assert "refund_payment" not in json.dumps(refusal)


def test_sticky_promotion_keeps_tools_of_the_current_task() -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("get_weather", {"query": "Paris"}, "c1")),
            say("15 degrees"),
            say("ok"),
        ]
    )
    agent = agent_for(model, gate(k=1, promotion=Promotion(sticky_turns=2)), checkpointer=_saver())
    config = {"configurable": {"thread_id": "s"}}
    agent.invoke({"messages": [HumanMessage("weather in Paris")]}, config)
    agent.invoke({"messages": [HumanMessage("and send an email about it")]}, config)
    assert model.recorded[2]["tools"] == ["get_weather", "send_email"]  # sticky + ranked


def test_intent_comes_from_user_turns_only() -> None:
    # A tool result full of weather words must not pull weather tools into the list.
    model = ScriptedChatModel(
        script=[
            calls(tool_call("translate_text", {"query": "hola"}, "c1")),
            say("hello"),
        ]
    )

    @tool("translate_text")
    def noisy(query: str = "") -> str:
        """Translate text into another language."""
        return "error: weather forecast service timeout, get weather failed"

    noisy.metadata = {"risk": "read"}

    agent = create_agent(
        model,
        tools=[*CATALOG[:-1], noisy],
        middleware=[gate(k=1, promotion=Promotion(sticky_turns=0))],
    )
    agent.invoke({"messages": [HumanMessage("translate hola to English")]})
    assert model.recorded[0]["tools"] == ["translate_text"]
    assert model.recorded[1]["tools"] == ["translate_text"]
    messages = [
        HumanMessage("translate hola"),
        ToolMessage("timeout: weather email invoice refund", tool_call_id="x"),
        HumanMessage("please, now", additional_kwargs={"synthetic": True}),
    ]
    assert intent_text(messages) == "translate hola"


def test_named_tools_are_promoted_before_ranking() -> None:
    named_tools = NameMatcher([t.name for t in CATALOG])
    assert named_tools("please call refund_payment for order 7") == ["refund_payment"]
    assert named_tools("use the refund_paymnt tool") == ["refund_payment"]  # near-exact
    assert named_tools("getWeather? no: send_email and refund_payment") == [
        "refund_payment",
        "send_email",
    ]
    assert named_tools("refund payment 7 now") == []  # describes a tool, names none
    assert named_tools("weather please") == []
    model = ScriptedChatModel(script=[say("ok")])
    agent_for(model, gate(k=1)).invoke(
        {"messages": [HumanMessage("what's the weather? use create_invoice after")]}
    )
    assert model.recorded[0]["tools"] == ["create_invoice"]


def test_decision_precedence_and_explanations() -> None:
    inputs = GateInputs(
        intent="x",
        candidates=["a", "b", "c", "d", "e"],
        pinned=frozenset({"a"}),
        named=["b"],
        preconditions={"e": {"ok": True}},
        state={"ok": False},
    )
    scores = {"c": 0.9, "d": 0.2}
    decision = decide(inputs, lambda q, names: [scores[n] for n in names], k=2, threshold=0.5)
    assert decision.shown == ("a", "b", "c")
    reasons = {n: v.reason for n, v in decision.verdicts.items()}
    assert reasons == {
        "a": "pinned",
        "b": "named_by_user",
        "c": "ranked",
        "d": "below_threshold",
        "e": "precondition",
    }
    assert decision.explain("d") == "'d' was hidden: score 0.200 < threshold 0.5 (rank 2)."
    assert "not a candidate" in decision.explain("zzz")


def test_summary_pool_modes_and_budget() -> None:
    model = ScriptedChatModel(script=[say("ok")] * 3)
    agent_for(model, gate(k=1, summary_pool="scope")).invoke(
        {"messages": [HumanMessage("send email")]}
    )
    system = model.recorded[0]["system"]
    assert system.startswith("# Tool index")
    lines = [line for line in system.splitlines() if line.startswith("- ")]
    assert lines[0] == "- get_weather: Current weather and temperature for a city."
    assert len(lines) == len(CATALOG)  # stable catalog order, every candidate
    model = ScriptedChatModel(script=[say("ok")])
    agent_for(model, gate(k=1, summary_pool=SummaryPool("auto", budget_tokens=10))).invoke(
        {"messages": [HumanMessage("send email")]}
    )
    assert model.recorded[0]["system"] is None  # over budget: left out
    g = gate(summary_pool="scope")
    g.warm_up(CATALOG)
    text, tokens = g.pool([t.name for t in CATALOG], not_reads=())
    assert tokens > 50 and text.count("\n- ") == len(CATALOG)


def test_gate_trace_is_kept_in_private_state() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    g = gate(k=1)
    agent = agent_for(model, g, checkpointer=_saver())
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("refund the payment")]}, config)
    values = agent.get_state(config).values
    assert values["gate_exposed"] == ["refund_payment"]
    trace = values["gate_trace"]
    assert trace["intent"] == "refund the payment"
    assert explain(trace, "refund_payment").startswith("'refund_payment' was shown: ranked")
    assert "hidden" in explain(trace, "create_invoice")


def test_composes_inside_scoping() -> None:
    scopes = [
        Scope("mail", "email", tools=CATALOG[2:4]),
        Scope("money", "payments", tools=CATALOG[4:7]),
    ]
    model = ScriptedChatModel(
        script=[calls(tool_call("load_context", {"name": "money"}, "c1")), say("ok")]
    )
    stack: list[AgentMiddleware[Any, Any]] = [
        AttentionScopingMiddleware(scopes, selector=None),
        gate(k=1),
    ]
    create_agent(model, tools=CATALOG, middleware=stack).invoke(
        {"messages": [HumanMessage("refund the payment please")]}
    )
    assert model.recorded[0]["tools"] == ["load_context"]  # gate sees only the scoped list
    assert sorted(model.recorded[1]["tools"]) == ["load_context", "refund_payment"]


async def test_async_path() -> None:
    model = ScriptedChatModel(
        script=[calls(tool_call("send_email", {"query": "hi"}, "c1")), say("sent")]
    )
    result = await agent_for(model, gate(k=1)).ainvoke(
        {"messages": [HumanMessage("send an email")]}
    )
    assert model.recorded[0]["tools"] == ["send_email"]
    assert tool_messages(result)[0].content == "send_email ok"


def test_bad_configuration() -> None:
    with pytest.raises(GateConfigError, match="k must be an integer >= 1, not -1"):
        ToolAttentionMiddleware(k=-1, ranker="bm25")
    with pytest.raises(GateConfigError, match="summary_pool"):
        ToolAttentionMiddleware(summary_pool="sometimes", ranker="bm25")  # type: ignore[arg-type]
    with pytest.raises(GateConfigError, match="unknown ranker 'bm52'"):
        ToolAttentionMiddleware(ranker="bm52")
    with pytest.raises(TypeError, match="precondition of 'x'") as raised:
        ToolAttentionMiddleware(ranker="bm25", preconditions={"x": 3})  # type: ignore[dict-item]
    assert isinstance(raised.value, AttentionScopingError)


def _saver() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def test_index_refits_only_when_tools_change() -> None:
    g = gate()
    g.warm_up(CATALOG)
    assert g.index.fits == 1
    g.decide({"messages": [HumanMessage("x")]}, CATALOG)
    assert g.index.fits == 1

    @tool
    def get_weather(city: str) -> str:
        """Weather now, wind and humidity for a city."""
        return city

    g.decide({"messages": [HumanMessage("x")]}, [get_weather, *CATALOG[1:]])
    assert g.index.fits == 2
    assert g.index.spec("get_weather").description.startswith("Weather now")  # type: ignore[union-attr]
    assert np.isfinite(g.index.scores("wind", ["get_weather"])).all()


@pytest.mark.parametrize(
    ("actual", "ok"),
    [(True, True), (1, False), (1.0, False), ("true", False), ([True], False), (None, False)],
)
def test_preconditions_compare_json_kinds_strictly(actual: object, ok: bool) -> None:
    from attention_scoping.gating.preconditions import unmet

    problem = unmet({"authenticated": True}, {"authenticated": actual})
    assert (problem is None) is ok


def test_preconditions_compare_numbers_by_value_and_nested_values_strictly() -> None:
    from attention_scoping.gating.preconditions import unmet

    assert unmet({"user.level": 2}, {"user": {"level": 2.0}}) is None
    assert unmet({"user.level": 2}, {"user": {"level": "2"}}) is not None
    assert unmet({"flags": {"beta": True}}, {"flags": {"beta": 1}}) is not None


def test_named_tools_are_capped_at_k_and_the_rest_compete_in_the_ranking() -> None:
    from attention_scoping.gating.gate import GateInputs, decide

    names = [f"tool_number_{i}" for i in range(200)]
    inputs = GateInputs(intent="all of them", candidates=names, named=names)
    decision = decide(inputs, lambda _, rest: [0.0] * len(rest), k=5, threshold=0.0)
    assert len(decision.shown) == 5
    shown = [v.reason for v in decision.verdicts.values() if v.shown]
    assert shown == ["named_by_user"] * 5


def test_name_matching_is_bounded_and_memoised_on_huge_messages() -> None:
    from attention_scoping.gating.gate import MAX_FUZZY_TOKENS, NameMatcher

    names = [f"service_{i}_do_thing_{i}" for i in range(1_000)]
    matcher = NameMatcher(names)
    near_misses = " ".join(f"servise_{i}_do_thing_{i}" for i in range(3_000))
    found = matcher(near_misses + " service_7_do_thing_7")
    assert found[0] == "service_7_do_thing_7"  # exact names first
    assert 1 < len(found) <= 1 + MAX_FUZZY_TOKENS  # near misses found, within the bound
    assert matcher(near_misses + " service_7_do_thing_7") == found  # memoised, same answer
    assert matcher("refund_paymnt") == []  # nothing close in this catalog


def _turn_script() -> list[Any]:
    return [
        calls(tool_call("convert_currency", {"query": "10 EUR"}, "c1")),  # known, not sent
        calls(tool_call("convert_currency", {"query": "10 EUR"}, "c2")),
        calls(tool_call("send_email", {"query": "Bob"}, "c3")),
        say("done"),
        say("next turn"),
    ]


def test_decide_per_turn_keeps_the_tools_array_within_a_turn() -> None:
    """Cache-stable mode: one decision per user turn; a refused tool is appended to it and
    nothing is dropped, so each call's tools array extends the previous one's."""
    from langgraph.checkpoint.memory import InMemorySaver

    model = ScriptedChatModel(script=_turn_script())
    agent = agent_for(model, gate(k=2, promotion="per_turn"), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("send an email to Bob about the invoice")]}, config)
    arrays = [r["tools"] for r in model.recorded]
    first = arrays[0]
    assert len(first) == 2 and "convert_currency" not in first
    assert arrays[1] == [*first, "convert_currency"]
    assert arrays[1] == arrays[2] == arrays[3]  # the rest of the turn: byte-identical tools
    assert RAN == ["convert_currency", "send_email"]
    agent.invoke({"messages": [HumanMessage("what is the weather forecast")]}, config)
    assert {"get_weather", "get_forecast"} <= set(model.recorded[4]["tools"])  # a new decision


def test_decide_per_must_be_call_or_turn() -> None:
    with pytest.raises(GateConfigError, match="decide_per must be 'call' or 'turn'"):
        Promotion(decide_per="session")  # type: ignore[arg-type]
