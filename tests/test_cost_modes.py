"""The provider-native disclosure modes in the billed-cost session benchmark (issue 27): what
each mode's requests carry, that the search / load_context round trips are billed, and the
issue's cost bounds on the simulator's own output (bm25 ranker: offline and deterministic)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.cli import main
from attention_scoping_lab.cost import PRICE_MODELS, Request, memo_count, price_model
from attention_scoping_lab.simulate.billing import (
    SessionBenchmark,
    StrategyBill,
    build_strategies,
    run_sessions,
)
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.native_strategies import OPENAI_TOOL_SEARCH, is_mode_strategy
from attention_scoping_lab.simulate.session_strategies import SessionStrategy
from attention_scoping_lab.simulate.sessions import build_sessions

SESSIONS = build_sessions(0, 3, 6)
NATIVE = (
    "gate_anthropic",
    "gate_anthropic_announced",
    "scoping_anthropic_whole",
    "scoping_anthropic_again",
    "gate_openai",
    "gate_openai_announced",
)
BOUNDED = {  # the modes as built -> (price model, bound on billed input vs eager after 10 turns)
    "gate_anthropic_announced": ("anthropic", 0.30),
    "scoping_anthropic_whole": ("anthropic", 0.35),
    "gate_openai_announced": ("openai", 0.30),
}


@pytest.fixture(scope="module")
def strategies() -> dict[str, SessionStrategy]:
    counter = get_counter()
    specs = build_catalog(0, counter)
    return {s.name: s for s in build_strategies(specs, counter, "bm25", None)}


def _play(strategy: SessionStrategy) -> Iterator[Conversation]:
    """Play the small sessions keeping every request."""
    count = memo_count(get_counter().count)
    for session in SESSIONS:
        conv = Conversation(list(PRICE_MODELS.values()), count, keep_requests=True)
        strategy.play(session, conv)
        yield conv


def _tool_names(request: Request) -> list[str]:
    """Names of the tools a request renders (namespaces and tool search by their type)."""
    out = []
    for block in request.blocks:
        if block.kind == "tool":
            tool = json.loads(block.text)
            out.append(tool.get("function", tool).get("name") or tool["type"])
    return out


def _definitions(content: str) -> list[str]:
    """Names of the tool definitions a tool result expands (its last line, a JSON list)."""
    last = json.loads(content.rsplit("\n", 1)[-1])
    return (
        [d["name"] for d in last] if isinstance(last, list) and last and "name" in last[0] else []
    )


def _same_prefix(before: Request, after: Request) -> bool:
    n = len(before.blocks)
    return len(after.blocks) >= n and after.prefix_hash(n - 1) == before.prefix_hash(n - 1)


def test_mode_strategies_are_registered(strategies: dict[str, SessionStrategy]) -> None:
    modes = [n for n in strategies if is_mode_strategy(n)]
    assert set(modes) == {*NATIVE, "gate_allowed_tools", "scoping_allowed_tools"}
    assert len(modes) == len(set(modes))
    assert not is_mode_strategy("per_call_gate") and not is_mode_strategy("scoping_deferral")


@pytest.mark.parametrize("name", NATIVE)
def test_native_modes_keep_the_prefix_and_disclose_at_the_tail(
    strategies: dict[str, SessionStrategy], name: str
) -> None:
    """Tools and system prompt never change (every request extends the previous one); no
    deferred catalog tool is rendered in the tools block; definitions reach the conversation in
    tool results, before the tool is first called: once each, except that a scope loaded again
    (`scoping_<mode>_again`, the first build) expands all its tools again."""
    strategy = strategies[name]
    catalog = set(strategy.specs)
    again = name == "scoping_anthropic_again"
    server_of: dict[str, str] = getattr(strategy, "server_of", {})
    for conv in _play(strategy):
        for before, after in zip(conv.requests, conv.requests[1:], strict=False):
            assert _same_prefix(before, after), name
        assert len({tuple(_tool_names(r)) for r in conv.requests}) == 1
        assert not catalog & set(_tool_names(conv.requests[0]))
        disclosed: list[str] = []
        for message in conv.rendered:
            if message["role"] == "tool":
                expanded = _definitions(message["content"])
                if again and '"active_context"' in message["content"]:  # a load_context result
                    scope = server_of[expanded[0]]
                    assert set(expanded) == {n for n in catalog if server_of[n] == scope}
                disclosed.extend(expanded)
            for call in message.get("tool_calls") or ():
                if call["name"] in catalog:
                    assert call["name"] in disclosed, (name, call["name"])
        assert again or len(disclosed) == len(set(disclosed))
    assert strategy.exposure["missed"] == 0


def test_openai_mode_renders_namespaces_not_functions(
    strategies: dict[str, SessionStrategy],
) -> None:
    """OpenAI: the prompt carries each namespace's name and description (parts of at most 10
    functions per server) and the client-executed tool search, never a deferred function."""
    [conv, *_] = _play(strategies["gate_openai"])
    tools = [json.loads(b.text) for b in conv.requests[0].blocks if b.kind == "tool"]
    spaces = [t for t in tools if t["type"] == "namespace"]
    assert len(spaces) == 13 and {"jira_4", "github_3", "web"} <= {s["name"] for s in spaces}
    assert all(set(s) == {"type", "name", "description"} for s in spaces)
    assert tools[-1] == OPENAI_TOOL_SEARCH


@pytest.mark.parametrize("name", ["gate_allowed_tools", "scoping_allowed_tools"])
def test_allowed_tools_sends_every_schema_on_every_call(
    strategies: dict[str, SessionStrategy], name: str
) -> None:
    strategy = strategies[name]
    for conv in _play(strategy):
        names = {tuple(_tool_names(r)) for r in conv.requests}
        assert len(names) == 1
        assert set(strategy.specs) <= set(next(iter(names)))


@pytest.mark.parametrize("name", ["gate_anthropic", "scoping_anthropic_whole", "gate_openai"])
def test_every_disclosure_round_trip_is_a_billed_call(
    strategies: dict[str, SessionStrategy], name: str
) -> None:
    """One model call per needed tool and per closing answer, plus one per disclosure (a
    search or load_context call), each with its prompt billed and its output counted."""
    strategy = strategies[name]
    strategy.counters.clear()
    missed = strategy.exposure["missed"]
    convs = list(_play(strategy))
    base = sum(len(t.tools) + 1 for s in SESSIONS for t in s.turns)
    extra = strategy.counters["disclosure calls"]
    assert extra > 0
    missed = strategy.exposure["missed"] - missed  # a tool never found is never called
    assert sum(len(c.calls) for c in convs) == base + extra - missed
    if name.startswith("scoping"):  # a load_context call per switch, no search
        assert extra == strategy.counters["scope switches"]
    assert all(c.output_tokens > 0 for conv in convs for c in conv.calls)


def test_dropping_the_round_trips_would_be_cheaper(
    strategies: dict[str, SessionStrategy],
) -> None:
    """The same gate with its decisions announced (no model call) costs less under both
    providers: the round trips are in the bill, with their prompts and outputs."""
    for provider in ("anthropic", "openai"):
        with_calls = strategies[f"gate_{provider}"]
        announced = strategies[f"gate_{provider}_announced"]
        a, b = list(_play(with_calls)), list(_play(announced))
        assert sum(len(c.calls) for c in a) > sum(len(c.calls) for c in b)
        for model in ("anthropic", "openai"):
            billed = [
                sum(x.costs[model].billed for c in convs for x in c.calls) for convs in (a, b)
            ]
            assert billed[0] > billed[1], (provider, model)
        outputs = [sum(x.output_tokens for c in convs for x in c.calls) for convs in (a, b)]
        assert outputs[0] > outputs[1]


# -- the issue's bounds: 20 sessions of 10 turns, and of 30 turns for the curve --

AGAIN = {"scoping_anthropic_again": "anthropic"}
RE_REFERENCED = (
    "the first build: every load_context result references the whole scope again, and each "
    "expansion stays in the conversation: above eager from turn 14 (docs/cost.md)"
)


def _sessions(turns: int, only: list[str]) -> SessionBenchmark:
    """20 sessions of `turns` turns at Anthropic prices, bm25 ranker, the named strategies."""
    return run_sessions(
        price=price_model("anthropic"), n_sessions=20, turns=turns, ranker="bm25", only=only
    )


@pytest.fixture(scope="module")
def sweep() -> SessionBenchmark:
    return _sessions(30, ["per_call_gate", *BOUNDED, *AGAIN])


def _ratios(result: SessionBenchmark, s: StrategyBill, model: str) -> list[float]:
    eager = result.strategy("eager").curve[model]
    return [a / b for a, b in zip(s.curve[model], eager, strict=True)]


@pytest.mark.parametrize(
    "name",
    [
        *BOUNDED,
        *(
            pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=RE_REFERENCED))
            for n in AGAIN
        ),
    ],
)
def test_native_modes_never_cost_more_than_eager_from_1_to_30_turns(
    sweep: SessionBenchmark, name: str
) -> None:
    model = BOUNDED[name][0] if name in BOUNDED else AGAIN[name]
    assert max(_ratios(sweep, sweep.strategy(name), model)) < 1.0


@pytest.fixture(scope="module")
def ten() -> SessionBenchmark:
    """The issue's run: 20 sessions of 10 turns (exposure is counted over the whole run)."""
    return _sessions(10, ["per_call_gate", *BOUNDED])


@pytest.mark.parametrize("name", list(BOUNDED))
def test_native_modes_exposure_is_at_least_the_per_call_gates(
    ten: SessionBenchmark, name: str
) -> None:
    gate, native = ten.strategy("per_call_gate"), ten.strategy(name)
    assert native.exposure >= gate.exposure == 1.0
    assert native.exposed_at_once >= gate.exposed_at_once


MISSED = {
    "gate_anthropic_announced": "41.0 % here (bm25), 36.8 % with the default ranker",
    "gate_openai_announced": "41.9 % here at OpenAI prices (bm25), 37.7 % with the default ranker",
    "scoping_anthropic_whole": (
        "55.3 % here (bm25 or not: the model's load_context references the whole scope), at "
        "100 % exposure at once"
    ),
}
"""Why each bound is missed: billed input vs eager after 10 turns (20 sessions; the floor
without tools is 13.4 %). Disclosed definitions stay in the conversation and are re-read on
every later call; disclosing fewer drops the at-once exposure below the per-call gate's (see
docs/cost.md: the gate's k best at each new turn are 31.8 definitions for 6.8 tools used). Issue
27's ranked scope disclosure, which came closer (37.1 %), was not carried onto the core: it
measured 33 % success against rewrite's 61 % on the one real model (docs/disclosure.md)."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=f"missed: {MISSED[n]}"))
        for n in BOUNDED
    ],
)
def test_native_modes_meet_the_issue_bounds_after_10_turns(
    ten: SessionBenchmark, name: str
) -> None:
    """The issue's goal: the bound at an exposure at least the per-call gate's."""
    model, bound = BOUNDED[name]
    native, gate = ten.strategy(name), ten.strategy("per_call_gate")
    assert native.billed_per_task[model] <= bound * ten.strategy("eager").billed_per_task[model]
    assert native.exposed_at_once >= gate.exposed_at_once


def test_command_plays_the_chosen_strategies_and_reports_the_modes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--strategies` plays only those (and eager); the JSON carries the output tokens, the
    bill with output, the counters and a curve per price model; the modes table is printed."""
    path = tmp_path / "modes.json"
    args = ["simulate", "--sessions", "2", "--turns", "3", "--ranker", "bm25", "--quiet"]
    chosen = "gate_anthropic,scoping_allowed_tools"
    assert main([*args, "--strategies", chosen, "--json", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Disclosure modes (issue 27)" in out
    doc = json.loads(path.read_text())
    assert set(doc["strategies"]) == {"eager", "gate_anthropic", "scoping_allowed_tools"}
    gate = doc["strategies"]["gate_anthropic"]
    assert gate["counters_per_task"]["disclosure calls"] > 0
    assert gate["output_tokens_per_task"] > 0
    for model, billed in gate["billed_by_price_model"].items():
        output = gate["output_tokens_per_task"] * PRICE_MODELS[model].output
        assert gate["billed_with_output_by_price_model"][model] == pytest.approx(
            billed + output, abs=0.2
        )
        assert len(gate["cumulative_billed_by_turn_by_price_model"][model]) == 3
