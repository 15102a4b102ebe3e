"""The scoping variant of `benchmarks/eval_scoped_variants.py` does what its figures claim.

docs/scoping.md reports the experiment run through that script; this test pins what the
variant sends the model (scripted OpenAI-compatible server), so the figures stay meaningful.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from attention_scoping_lab.eval.strategies import STRATEGIES
from tests.eval_support import answer_after_tool, calc, offered, run
from tests.openai_stub import OpenAIStub
from tests.script_support import load_script


@pytest.fixture
def variants() -> Iterator[ModuleType]:
    """The benchmark module, imported (it registers its strategies), and unregistered after."""
    module = load_script("eval_scoped_variants")
    yield module
    STRATEGIES.pop("scoped-direct", None)


def test_direct_leaves_navigation_out_of_the_selected_call_only(variants: ModuleType) -> None:
    """The selector opens math for "Convert 5 miles to kilometres.": that call goes without
    `load_context`; the turn's next call has it again."""
    convert = {
        "name": "convert_units",
        "arguments": {"value": 5, "from_unit": "mi", "to_unit": "km"},
    }
    with OpenAIStub([answer_after_tool(lambda body: {"tool_calls": [convert]})] * 2) as stub:
        result = run(stub, ["math-miles"], ["scoped-direct"])
        first, second = stub.requests[0], stub.requests[1]
    assert "convert_units" in offered(first) and "load_context" not in offered(first)
    assert "load_context" in offered(second)
    [task] = result.results
    assert task.success and task.first_tool_right


def test_direct_keeps_navigation_when_nothing_was_selected(variants: ModuleType) -> None:
    """No selection ("What is 47 times 83?"): `load_context` is sent, as in scoped-compact."""
    load = {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]}
    with OpenAIStub([load, calc("47*83"), {"content": "3901"}]) as stub:
        result = run(stub, ["math-multiply"], ["scoped-direct"])
        assert offered(stub.requests[0]) == ["load_context"]
    assert result.results[0].success
