"""The gate fails closed: it shows a tool that is not a declared read only when pinned, and a
call runs only when the record of the reply that made it names the tool (issue 38)."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping.errors import AttentionScopingError, ErrorCode
from attention_scoping.gate import record_of
from attention_scoping.gating.errors import GateConfigError
from attention_scoping.gating.middleware import ToolAttentionMiddleware
from attention_scoping.gating.options import Promotion, SummaryPool
from attention_scoping.gating.ranking import BM25Ranker
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

Ran = list[str]


def toolset(ran: Ran, refund_meta: dict[str, Any] | None = None) -> list[BaseTool]:
    """`get_invoice` and `list_orders` declared reads; `refund` as given (unmarked by default)."""

    def make(name: str, description: str, meta: dict[str, Any] | None) -> BaseTool:
        def run(order_id: str = "") -> str:
            ran.append(name)
            return f"{name} ok"

        return StructuredTool.from_function(run, name=name, description=description, metadata=meta)

    return [
        make("get_invoice", "Look up the invoice of an order.", {"risk": "read"}),
        make("list_orders", "List the customer's recent orders.", {"risk": "read"}),
        make("refund", "Refund an order: give the customer their money back.", refund_meta),
    ]


def gate(**options: Any) -> ToolAttentionMiddleware:
    options.setdefault("ranker", BM25Ranker())
    return ToolAttentionMiddleware(**options)


def errors(messages: list[Any]) -> dict[str, str]:
    return {
        str(m.name): json.loads(str(m.content))["error"]
        for m in messages
        if isinstance(m, ToolMessage) and m.status == "error"
    }


@pytest.mark.parametrize("refund_meta", [None, {"risk": "write"}])
def test_a_refund_that_is_not_a_declared_read_is_never_exposed_by_ranking(
    refund_meta: dict[str, Any] | None,
) -> None:
    """Ranking, the user's naming it, everything fitting within k, the model's retry: none puts
    an unmarked (or write) `refund` in view, names it in the pool, or runs it."""
    ran: Ran = []
    tools = toolset(ran, refund_meta)
    model = ScriptedChatModel(
        script=[
            calls(tool_call("refund", {"order_id": "1"}, "c1")),
            calls(tool_call("refund", {"order_id": "1"}, "c2")),
            say("I cannot refund that here."),
        ]
    )
    mw = gate(k=5, summary_pool="scope")
    agent = create_agent(model, tools=tools, middleware=[mw])
    result = agent.invoke({"messages": [HumanMessage("refund order 1 please: call refund")]})
    for call in model.recorded:
        assert "refund" not in call["tools"]
        assert "refund" not in (call["system"] or "")
    assert model.recorded[0]["tools"] == ["get_invoice", "list_orders"]  # all fit: reads only
    assert ran == []
    refusals = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [json.loads(str(m.content))["error"] for m in refusals] == ["tool_not_available"] * 2
    body = json.loads(str(refusals[0].content))
    assert "summary" not in body and "again" not in body["next_step"]
    decision = mw.decide({"messages": [HumanMessage("refund order 1")]}, tools)
    assert decision.verdicts["refund"].reason == "writes"
    assert "pins it" in decision.explain("refund")


def test_a_pinned_refund_is_shown_and_runs() -> None:
    ran: Ran = []
    tools = toolset(ran)
    model = ScriptedChatModel(script=[calls(tool_call("refund", {"order_id": "1"})), say("ok")])
    agent = create_agent(model, tools=tools, middleware=[gate(k=1, pinned=["refund"])])
    agent.invoke({"messages": [HumanMessage("refund order 1")]})
    assert "refund" in model.recorded[0]["tools"]
    assert ran == ["refund"]


def test_reads_declared_to_the_gate_count_as_reads() -> None:
    ran: Ran = []
    tools = toolset(ran)
    mw = gate(k=5, reads=["refund"])
    assert "refund" in mw.decide({"messages": [HumanMessage("refund order 1")]}, tools).shown


def test_the_catalog_pool_names_only_declared_reads() -> None:
    ran: Ran = []
    tools = toolset(ran)
    mw = gate(k=1, summary_pool="catalog", tools=tools)
    mw.warm_up()
    text, _ = mw.pool([], not_reads=())
    assert "get_invoice" in text and "list_orders" in text
    assert "refund" not in text


def test_a_call_from_a_reply_without_the_gates_record_never_runs() -> None:
    """A reply made elsewhere (no record of this gate) calling a read is refused `not_shown`."""
    ran: Ran = []
    tools = toolset(ran)
    mw = gate(k=5, name="gate_a")
    model = ScriptedChatModel(
        script=[calls(tool_call("get_invoice", {"order_id": "1"})), say("ok")]
    )
    other = gate(k=5, name="gate_b")
    # gate_b stamps the reply, gate_a only reviews calls: no record of gate_a on the reply
    agent = create_agent(model, tools=tools, middleware=[other])
    out = agent.invoke({"messages": [HumanMessage("invoice of order 1")]})
    reply = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert record_of(reply, "gate_b") is not None and record_of(reply, "gate_a") is None
    from langchain.agents.middleware.types import ToolCallRequest

    request = ToolCallRequest(
        tool_call=reply.tool_calls[0],
        tool=tools[0],
        state=out,
        runtime=None,  # type: ignore[arg-type]
    )
    refusal = mw.review_tool_call(request)
    assert refusal is not None
    assert json.loads(str(refusal.content))["error"] == ErrorCode.NOT_SHOWN
    assert other.review_tool_call(request) is None


def waits_for_the_other(barrier: threading.Barrier, reply: AIMessage) -> Callable[..., AIMessage]:
    def step(messages: list[BaseMessage], names: list[str]) -> AIMessage:
        barrier.wait()
        return reply

    return step


def run_two_threads() -> tuple[dict[str, Any], dict[str, ScriptedChatModel], Ran]:
    """Two agents on two models, one gate instance, both replies in flight together; each
    reply calls `get_invoice` and `list_orders`."""
    ran: Ran = []
    tools = toolset(ran)
    mw = gate(k=1, summary_pool="off")
    barrier = threading.Barrier(2, timeout=10)
    both = [
        tool_call("get_invoice", {"order_id": "1"}),
        tool_call("list_orders", {"order_id": "1"}),
    ]
    models = {
        "a": ScriptedChatModel(script=[waits_for_the_other(barrier, calls(*both)), say("a")]),
        "b": ScriptedChatModel(
            script=[waits_for_the_other(barrier, calls(*both)), say("b")], label="other"
        ),
    }
    asks = {"a": "show the invoice of order 1", "b": "list my recent orders"}
    results: dict[str, Any] = {}

    def run(key: str) -> None:
        agent = create_agent(models[key], tools=tools, middleware=[mw])
        results[key] = agent.invoke({"messages": [HumanMessage(asks[key])]})

    threads = [threading.Thread(target=run, args=(key,)) for key in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, models, ran


def test_one_instance_serves_two_threads_with_two_models_at_once() -> None:
    """Each call is decided by its own reply's record: thread A was shown `get_invoice` (its
    message asks for an invoice), thread B `list_orders`; each calls both, and only the one its
    reply was shown runs (six runs)."""
    for _ in range(6):
        results, models, ran = run_two_threads()
        assert models["a"].recorded[0]["tools"] == ["get_invoice"]
        assert models["b"].recorded[0]["tools"] == ["list_orders"]
        assert errors(results["a"]["messages"]) == {"list_orders": "tool_not_available"}
        assert errors(results["b"]["messages"]) == {"get_invoice": "tool_not_available"}
        assert sorted(ran) == ["get_invoice", "list_orders"]


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"k": 0}, "k must be an integer >= 1, not 0"),
        ({"k": -1}, "k must be an integer >= 1, not -1"),
        ({"k": 2.5}, "k must be an integer >= 1, not 2.5"),
        ({"k": True}, "k must be an integer >= 1, not True"),
        ({"promotion": Promotion}, "promotion must be a Promotion or one of"),
        ({"promotion": "sometimes"}, "promotion must be a Promotion or one of 'per_call'"),
        ({"summary_pool": "sometimes"}, "summary_pool must be a SummaryPool or one of"),
        ({"pinned": "refund"}, "pinned must be a collection of tool names"),
        ({"reads": [3]}, "reads must hold tool names"),
        ({"emit_events": "yes"}, "emit_events must be True or False"),
        ({"name": ""}, "name must be a non-empty string"),
    ],
)
def test_bad_options_are_refused_at_construction(options: dict[str, Any], says: str) -> None:
    with pytest.raises(GateConfigError, match=says) as raised:
        gate(**options)
    assert isinstance(raised.value, AttentionScopingError)
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: Promotion(threshold=math.nan), "threshold must be a finite number, not nan"),
        (lambda: Promotion(threshold=math.inf), "threshold must be a finite number, not inf"),
        (lambda: Promotion(intent_turns=0), "intent_turns must be an integer >= 1, not 0"),
        (lambda: Promotion(sticky_turns=-1), "sticky_turns must be an integer >= 0, not -1"),
        (lambda: SummaryPool("auto", budget_tokens=-5), "budget_tokens must be an integer >= 0"),
        (lambda: SummaryPool("off", budget_tokens=5), "read only by mode='auto'"),
        (lambda: SummaryPool(disclosure="nope"), "disclosure must be"),  # type: ignore[arg-type]
    ],
)
def test_bad_option_groups_name_the_valid_range(build: Callable[[], Any], says: str) -> None:
    with pytest.raises(GateConfigError, match=says):
        build()


def test_a_finite_threshold_is_kept() -> None:
    assert gate(promotion=Promotion(threshold=-0.5)).threshold == -0.5


class ChatAnthropic(ScriptedChatModel):
    """A scripted model the `auto` disclosure takes for Anthropic's (native deferral)."""


def test_a_native_and_a_rewrite_thread_share_one_gate() -> None:
    """Thread A's model is disclosed natively (every tool sent, deferred, plus the search tool),
    thread B's by rewrite, both replies in flight together: A's search call is answered from
    its own reply's record (the mode and what it may load), whatever B's call did meanwhile,
    and it loads declared reads only."""
    for _ in range(6):
        ran: Ran = []
        tools = toolset(ran)
        mw = gate(k=1, summary_pool="off")
        barrier = threading.Barrier(2, timeout=10)
        search = tool_call("search_tools", {"query": "refund order invoice"}, "s1")
        models: dict[str, ScriptedChatModel] = {
            "a": ChatAnthropic(script=[waits_for_the_other(barrier, calls(search)), say("a")]),
            "b": ScriptedChatModel(
                script=[
                    waits_for_the_other(barrier, calls(tool_call("list_orders", {}, "b1"))),
                    say("b"),
                ]
            ),
        }
        results: dict[str, Any] = {}

        def run(
            key: str,
            models: dict[str, ScriptedChatModel] = models,
            tools: list[BaseTool] = tools,
            mw: ToolAttentionMiddleware = mw,
            results: dict[str, Any] = results,
        ) -> None:
            agent = create_agent(models[key], tools=tools, middleware=[mw])
            results[key] = agent.invoke({"messages": [HumanMessage("list my orders")]})

        threads = [threading.Thread(target=run, args=(key,)) for key in ("b", "a")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        answer = next(
            m
            for m in results["a"]["messages"]
            if isinstance(m, ToolMessage) and m.tool_call_id == "s1"
        )
        assert answer.status != "error"
        blocks = answer.content
        assert isinstance(blocks, list)
        referenced = [b["tool_name"] for b in blocks if isinstance(b, dict) and "tool_name" in b]
        text = next(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        assert referenced == json.loads(text)["loaded"] == ["get_invoice"]  # never `refund`
        reply = next(
            m
            for m in results["a"]["messages"]
            if isinstance(m, AIMessage) and [c["id"] for c in m.tool_calls] == ["s1"]
        )
        assert record_of(reply, mw.name)["disclosure"] == "anthropic"  # type: ignore[index]
        assert ran == ["list_orders"]
