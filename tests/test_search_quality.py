"""The search behind the gate, the gateway and scope pre-selection: exact names always come
back (preconditions still apply), and the vectorised ranking keeps the stable order."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping.common.tool import ToolSpec
from attention_scoping.gateway import ToolGateway
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.catalog_ranker import CatalogRanker
from attention_scoping.gating.encoders import HashingEncoder
from attention_scoping.gating.exact import ExactNames
from attention_scoping.gating.middleware import ToolAttentionMiddleware
from attention_scoping.gating.options import Promotion
from attention_scoping.gating.order import Ranking, top_rows
from attention_scoping.gating.ranking import DenseRanker, HybridRanker, minmax
from attention_scoping.gating.selectors import EncoderSelector
from attention_scoping.scopes import Scope, ScopeCatalog


def _hybrid() -> HybridRanker:
    return HybridRanker(DenseRanker(HashingEncoder(), cache=VectorCache(persist=False)))


@tool
def get_current_weather(city: str) -> str:
    """Station readings."""
    return city


get_current_weather.metadata = {"risk": "read"}


def _distractors() -> list[BaseTool]:
    """Tools whose descriptions match weather requests better than the named tool's does."""
    out: list[BaseTool] = []
    for i in range(12):

        @tool(
            f"forecast_tool_{i}", description=f"Current weather forecast for a city, variant {i}."
        )
        def forecast(city: str) -> str:
            return city

        forecast.metadata = {"risk": "read"}
        out.append(forecast)
    return out


REQUESTS = (
    "what is the current weather forecast? use get_current_weather",
    "what is the current weather forecast? use get current weather",
    "what is the current weather forecast? use getCurrentWeather",
)


@pytest.mark.parametrize("request_text", REQUESTS)
@pytest.mark.parametrize(("k", "threshold"), [(1, 1.0), (1, 0.0), (5, 0.99)])
def test_the_gate_shows_a_tool_named_exactly_whatever_k_and_threshold(
    request_text: str, k: int, threshold: float
) -> None:
    tools = [*_distractors(), get_current_weather]
    gate = ToolAttentionMiddleware(
        ranker=_hybrid(),
        k=k,
        promotion=Promotion(threshold=threshold, detect_names=False),
        summary_pool="off",
    )
    decision = gate.decide({"messages": [HumanMessage(request_text)]}, tools)
    assert "get_current_weather" in decision.shown
    assert len(decision.shown) <= k


def test_a_tool_named_exactly_stays_hidden_when_its_precondition_fails() -> None:
    tools = [*_distractors(), get_current_weather]
    gate = ToolAttentionMiddleware(
        ranker=_hybrid(),
        k=3,
        preconditions={"get_current_weather": {"located": True}},
        summary_pool="off",
    )
    state = {"messages": [HumanMessage(REQUESTS[1])]}
    assert "get_current_weather" not in gate.decide(state, tools).shown
    assert "get_current_weather" in gate.decide({**state, "located": True}, tools).shown


class _Inverted(HybridRanker):
    """A fusion that ranks lexical matches last: plainly not the default's order."""

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        return 1.0 - minmax(lexical)


def test_an_overridden_fusion_ranks_and_a_tool_named_exactly_stays_first() -> None:
    empty = {"type": "object", "properties": {}}
    specs = [
        ToolSpec(name, name, description, empty)
        for name, description in (
            ("forecast_tool", "Weather forecast for a city."),
            ("send_email", "Send an email message to a recipient."),
            ("get_current_weather", "Station readings."),
        )
    ]
    request = "email message for Ana"
    default = _hybrid()
    default.fit(specs)
    assert int(np.argmax(default.scores(request))) == 1
    inverted = _Inverted(DenseRanker(HashingEncoder(), cache=VectorCache(persist=False)))
    inverted.fit(specs)
    scores = inverted.scores(request)
    assert scores[1] == 0.0
    assert scores[0] == scores[2] > 0.0
    named = inverted.scores(f"{request}, use send_email")
    assert named[1] == 1.0
    assert max(named[0], named[2]) < 1.0


def test_short_names_count_only_when_written_as_identifiers() -> None:
    names = ExactNames(["search", "send_email", "weather.get", "get_current_weather"])
    assert names.rows("please search my mail").tolist() == []
    assert names.rows("Send email to Ana, then get the weather").tolist() == []
    assert names.rows("use send_email, or sendEmail").tolist() == [1]
    assert names.rows("call weather.get").tolist() == [2]
    assert names.rows("Get current weather for Ana").tolist() == [3]


def test_the_gateway_search_returns_a_tool_named_exactly_first() -> None:
    gateway = ToolGateway(
        [*_distractors(), get_current_weather], ranker=CatalogRanker(_hybrid()), limit=1
    )
    found = gateway.search(REQUESTS[1])
    assert [c["name"] for c in found["candidates"]] == ["get_current_weather"]


def test_the_gateway_search_keeps_a_named_tool_the_caller_may_not_see_hidden() -> None:
    gateway = ToolGateway(
        [*_distractors(), get_current_weather],
        ranker=CatalogRanker(_hybrid()),
        allow=lambda spec, state: spec.name != "get_current_weather",
    )
    found = gateway.search(REQUESTS[1], state={})
    assert "get_current_weather" not in [c["name"] for c in found["candidates"]]


def test_the_encoder_selector_picks_the_scope_of_a_tool_named_exactly() -> None:
    tools = [*_distractors(), get_current_weather]
    catalog = ScopeCatalog(
        [
            Scope("forecasts", "weather forecasts", tools=tools[:-1]),
            Scope("conditions", "live readings", tools=[get_current_weather]),
        ]
    )
    selector = EncoderSelector(encoder=HashingEncoder())
    choice = selector.select(REQUESTS[1], catalog)
    assert choice.scope == "conditions"
    assert choice.reads[0] == "get_current_weather"


@pytest.mark.parametrize("k", [1, 3, 10, 40, 200])
def test_top_rows_is_the_head_of_a_stable_descending_sort(k: int) -> None:
    scores = np.random.default_rng(7).integers(0, 20, size=200).astype(np.float64)
    expected = np.argsort(-scores, kind="stable")[:k]
    assert top_rows(scores, k).tolist() == expected.tolist()


def test_a_ranking_reads_like_the_full_sorted_list() -> None:
    scores = np.random.default_rng(3).integers(0, 9, size=500).astype(np.float64)
    names = [f"t{i}" for i in range(500)]
    order = np.argsort(-scores, kind="stable")
    full = [(names[i], float(scores[i])) for i in order]
    ranking = Ranking(names, scores)
    assert ranking[:5] == full[:5]
    assert ranking[3] == full[3]
    assert ranking[-1] == full[-1]
    assert ranking[:40] == full[:40]
    assert list(ranking) == full
    assert len(ranking) == 500
