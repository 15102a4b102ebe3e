"""The search's array paths return exactly what the simple paths returned: scope pre-selection
over a ranker's score array against the walk over its (name, score) pairs, and the gate's
decision through its per-tool-list facts against a fresh gate and the names-only entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping.adapters.tools import specs_from_tools
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.catalog_ranker import CatalogRanker
from attention_scoping.gating.encoders import HashingEncoder
from attention_scoping.gating.gate import positions, withheld_writes
from attention_scoping.gating.middleware import ToolAttentionMiddleware
from attention_scoping.gating.ranking import BM25Ranker, DenseRanker

DESCRIPTIONS = {
    "get_current_weather": "Current weather and temperature for a city.",
    "weather_forecast": "Weather forecast for the next days in a city.",
    "convert_currency": "Convert an amount between two currencies.",
    "exchange_rate": "Exchange rate between two currencies.",
    "send_email": "Send an email message to a recipient.",
    "read_inbox": "Read the latest email messages in the inbox.",
    "twin_a": "Book a table at a restaurant.",  # twin_a and twin_b tie on every query
    "twin_b": "Book a table at a restaurant.",
    "shared_search": "Search the web for a query.",
}
SCOPES = {
    "weather": ["get_current_weather", "weather_forecast", "shared_search"],
    "money": ["convert_currency", "exchange_rate"],
    "mail": ["send_email", "read_inbox", "shared_search"],
    "dining": ["twin_b", "twin_a"],
}
QUERIES = [
    "what is the weather in Paris",
    "get current weather for Rome please",  # names a tool exactly
    "convert 10 dollars to euros and email the result",
    "book a table at a restaurant",  # the twins tie
    "search the web",
    "hello there",
    "",
]


def make_tools() -> list[BaseTool]:
    def run(text: str) -> str:
        return text

    return [
        StructuredTool.from_function(run, name=name, description=text, metadata={"risk": "read"})
        for name, text in DESCRIPTIONS.items()
    ]


@pytest.fixture(params=["dense", "bm25"])
def ranker(request: pytest.FixtureRequest, tmp_path: Path) -> CatalogRanker:
    if request.param == "bm25":
        return CatalogRanker(BM25Ranker())
    return CatalogRanker(DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path)))


# -- the gate ---------------------------------------------------------------------------------


def gate_tools() -> list[BaseTool]:
    tools = make_tools()
    by_name = {t.name: t for t in tools}
    by_name["send_email"].metadata = {"risk": "write"}
    by_name["read_inbox"].metadata = {"risk": "read", "preconditions": {"authenticated": True}}
    by_name["shared_search"].metadata = {"pinned": True}  # not a declared read: shown as pinned
    return tools


def new_gate() -> ToolAttentionMiddleware:
    return ToolAttentionMiddleware(
        ranker="bm25", k=3, summary_pool="off", preconditions={"exchange_rate": {"vip": True}}
    )


STATES = [
    {"messages": [HumanMessage(q)], "authenticated": auth, "vip": True}
    for q in QUERIES[:-1]
    for auth in (True, False)
]


def test_the_gate_decides_the_same_through_its_facts_as_a_fresh_gate() -> None:
    tools = gate_tools()
    kept = new_gate()
    for state in STATES:
        first = kept.decide(state, tools)
        again = kept.decide(state, tools)  # facts and positions remembered
        fresh = new_gate().decide(state, tools)
        by_names = new_gate()
        by_names.index.update(tools)
        named = by_names.decide_names(state, [t.name for t in tools], list(tools))
        for other in (again, fresh, named):
            assert other.shown == first.shown
            assert other.as_trace() == first.as_trace()
            assert other.verdicts == first.verdicts
    assert kept._facts.reads == 1


def test_the_gate_reads_a_tool_again_when_its_metadata_is_replaced() -> None:
    tools = gate_tools()
    gate = new_gate()
    state = {"messages": [HumanMessage("convert 10 dollars to euros")], "vip": True}
    assert "convert_currency" in gate.decide(state, tools).shown
    tools[2].metadata = {"risk": "write"}  # the same object, now a write
    decision = gate.decide(state, tools)
    assert "convert_currency" not in decision.shown
    assert decision.verdicts["convert_currency"].reason == "writes"
    assert decision.shown == new_gate().decide(state, tools).shown


def test_the_gate_keeps_candidate_order_for_writes_and_shown_tools() -> None:
    tools = gate_tools()
    for tool in tools[:4]:
        tool.metadata = {"risk": "write"}
    state = {"messages": [HumanMessage("weather and currency")], "vip": True}
    decision = new_gate().decide(state, list(reversed(tools)))
    rows = decision.as_trace()["verdicts"]  # fixed verdicts in the order they were decided
    writes = [row["name"] for row in rows if row["reason"] == "writes"]
    expected = [t.name for t in reversed(tools) if (t.metadata or {}).get("risk") != "read"]
    assert writes == [n for n in expected if n != "shared_search"]  # pinned: shown
    assert len(writes) == 5
    order = [t.name for t in reversed(tools)]
    assert list(decision.shown) == sorted(decision.shown, key=order.index)


def test_a_new_tool_list_replaces_the_gates_tool_objects() -> None:
    """The gate reads a list's tool objects once; a new list with a replaced tool (now a write,
    or unclassified) is read again, and the next decision holds it back."""
    tools = gate_tools()
    gate = new_gate()
    state = {"messages": [HumanMessage("convert 10 dollars to euros")], "vip": True}
    assert "convert_currency" in gate.decide(state, tools).shown
    assert "convert_currency" in gate.decide(state, tools).shown  # same list, nothing re-read

    def convert(text: str) -> str:
        return text

    replaced = StructuredTool.from_function(
        convert,
        name="convert_currency",
        description=tools[2].description,
        metadata={"risk": "write"},
    )
    second = [*tools[:2], replaced, *tools[3:]]
    decision = gate.decide(state, second)
    assert decision.verdicts["convert_currency"].reason == "writes"
    assert "convert_currency" in gate.decide(state, tools).shown  # back to the first list
    unclassified = StructuredTool.from_function(
        convert, name="convert_currency", description=tools[2].description
    )
    third = gate.decide(state, [*tools[:2], unclassified, *tools[3:]])
    assert third.verdicts["convert_currency"].reason == "writes"  # nobody said it reads


def test_the_write_verdicts_are_built_once_per_writes_and_candidates() -> None:
    where = positions(("a", "w1", "b", "w2"))
    first = withheld_writes(frozenset({"w2", "w1", "elsewhere"}), where)
    assert list(first) == ["w1", "w2"]
    assert {v.reason for v in first.values()} == {"writes"}
    assert withheld_writes(frozenset({"w1", "w2", "elsewhere"}), where) is first  # equal sets
    assert list(withheld_writes(frozenset({"w2"}), where)) == ["w2"]
    assert list(withheld_writes(frozenset({"w2", "a"}), positions(("w2", "x", "a")))) == [
        "w2",
        "a",
    ]


def test_dense_scores_gather_the_candidate_rows_once_with_the_same_result(
    tmp_path: Path,
) -> None:
    dense = DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path))
    specs = specs_from_tools(make_tools())
    dense.fit(specs)
    assert dense._matrix is not None
    rows = np.asarray([4, 0, 2], dtype=np.int64)
    vectors = dense.query_vectors(["weather in Paris", "send an email"])
    first = dense.similarities(vectors, rows)
    held = dense._gathered
    np.testing.assert_array_equal(first, vectors @ dense._matrix[rows].T)
    np.testing.assert_array_equal(dense.similarities(vectors, rows), first)
    assert dense._gathered is held  # the same rows array: no second copy
    other = np.asarray([1, 3], dtype=np.int64)
    np.testing.assert_array_equal(
        dense.similarities(vectors, other), vectors @ dense._matrix[other].T
    )
    dense.fit(specs[:3])  # a new catalog drops the copy
    assert dense._gathered is None
    np.testing.assert_array_equal(
        dense.similarities(vectors, rows[1:]), vectors @ dense._matrix[rows[1:]].T
    )
