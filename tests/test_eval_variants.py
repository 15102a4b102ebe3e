"""The scoping variants of `benchmarks/eval_scoped_variants.py` do what their figures claim.

docs/scoping.md reports two experiments run through that script; these tests pin what each
variant sends the model (scripted OpenAI-compatible server), so the figures stay meaningful.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from attention_scoping_lab.eval.strategies import STRATEGIES
from tests.eval_support import answer_after_tool, calc, offered, run
from tests.openai_stub import OpenAIStub
from tests.script_support import load_script


@pytest.fixture
def variants() -> Iterator[ModuleType]:
    """The benchmark module, imported (it registers its strategies), and unregistered after."""
    pytest.importorskip("onnxruntime")  # the variants pre-select with the default dense ranker
    module = load_script("eval_scoped_variants")
    yield module
    for name in ("scoped-direct", "scoped-neighbours"):
        STRATEGIES.pop(name, None)


def test_direct_leaves_navigation_out_of_the_preselected_call_only(variants: ModuleType) -> None:
    with OpenAIStub([answer_after_tool(lambda body: calc("47*83"))] * 2) as stub:
        result = run(stub, ["math-multiply"], ["scoped-direct"])
        first, second = stub.requests[0], stub.requests[1]
    assert "calculate" in offered(first) and "load_context" not in offered(first)
    assert "load_context" in offered(second)
    [task] = result.results
    assert task.success and task.first_tool_right


def weather_and(*extra: dict[str, Any]) -> Any:
    """A model that asks for Lisbon's weather (and `extra` calls) at once, then answers."""
    call = {"name": "get_current_weather", "arguments": {"city": "Lisbon"}}
    return answer_after_tool(lambda body: {"tool_calls": [call, *extra]})


def test_neighbours_offers_other_scopes_tools_for_the_whole_turn(variants: ModuleType) -> None:
    with OpenAIStub([weather_and()] * 2) as stub:
        result = run(stub, ["wx-current-lisbon"], ["scoped-neighbours"])
        first, second = offered(stub.requests[0]), offered(stub.requests[1])
    weather = {"get_current_weather", "get_forecast"}
    neighbours = set(first) - weather - {"load_context"}
    assert weather <= set(first)
    assert 0 < len(neighbours) <= variants.NEIGHBOURS
    assert second == first  # kept for the turn: the same tools on its next call
    assert result.results[0].success


@pytest.mark.parametrize(
    ("strategy", "runs"), [("scoped-neighbours", True), ("scoped-compact", False)]
)
def test_a_called_neighbour_runs_where_compact_scoping_refuses_it(
    variants: ModuleType, strategy: str, runs: bool
) -> None:
    convert = {
        "name": "convert_units",
        "arguments": {"value": 20, "from_unit": "C", "to_unit": "F"},
    }
    with OpenAIStub([weather_and(convert)] * 2) as stub:
        result = run(stub, ["wx-current-lisbon"], [strategy])
        assert ("convert_units" in offered(stub.requests[0])) is runs
    ran = {name: ok for name, _, ok in result.results[0].calls}
    assert ran["get_current_weather"] is True
    assert ran.get("convert_units") is (True if runs else None)  # refused: never ran
