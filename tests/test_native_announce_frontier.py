"""`benchmarks/native_announce_frontier.py`: its announcement rules on the simulator's sessions
(bm25 ranker: offline and deterministic)."""

from __future__ import annotations

from types import ModuleType

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.simulate.billing import build_strategies
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.native_strategies import NativeGate
from attention_scoping_lab.simulate.sessions import Session, build_sessions
from tests.script_support import load_script


@pytest.fixture(scope="module")
def frontier() -> ModuleType:
    return load_script("native_announce_frontier")


@pytest.fixture(scope="module")
def built() -> NativeGate:
    counter = get_counter()
    strategies = build_strategies(build_catalog(0, counter), counter, "bm25", None)
    gate = next(s for s in strategies if s.name == "gate_anthropic_announced")
    assert isinstance(gate, NativeGate)
    return gate


SESSIONS: list[Session] = build_sessions(0, 3, 6)


def test_the_built_rule_bills_what_the_simulator_bills(
    frontier: ModuleType, built: NativeGate
) -> None:
    """Top 5 with the search as built is the gate as built: the same bill, call for call."""
    reference = frontier.play(built, SESSIONS)
    again = frontier.play(frontier.AnnouncingGate(built, frontier.top(5), None), SESSIONS)
    assert again.billed_per_task == reference.billed_per_task
    assert again.exposure == reference.exposure
    assert again.exposed_at_once == reference.exposed_at_once


@pytest.mark.parametrize("size", [None, 2])
def test_announcing_fewer_discloses_less_and_still_finds_every_tool(
    frontier: ModuleType, built: NativeGate, size: int | None
) -> None:
    whole = frontier.AnnouncingGate(built, frontier.top(5), size)
    one = frontier.AnnouncingGate(built, frontier.top(1), size)
    bills = [frontier.play(g, SESSIONS) for g in (whole, one)]
    assert one.counters["tools disclosed"] < whole.counters["tools disclosed"]
    assert one.counters["disclosure calls"] > whole.counters.get("disclosure calls", 0)
    assert bills[1].exposed_at_once < bills[0].exposed_at_once
    assert bills[1].exposure == bills[0].exposure == 1.0


def test_seeds_are_a_list_or_a_range(frontier: ModuleType) -> None:
    assert frontier.seed_list("0,2") == [0, 2]
    assert frontier.seed_list("3-5") == [3, 4, 5]
