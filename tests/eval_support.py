"""Helpers for the eval tests: a run of the example suite against the scripted server, and
scripted replies (used by test_eval.py and test_eval_variants.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attention_scoping_lab.eval import EvalOptions, run_eval
from attention_scoping_lab.eval.endpoint import Endpoint, chat_model
from attention_scoping_lab.eval.results import EvalResult
from attention_scoping_lab.eval.retry import RetryPolicy
from attention_scoping_lab.eval.strategies import StrategyOptions
from attention_scoping_lab.eval.suites import example_suite
from tests.openai_stub import OpenAIStub

Body = dict[str, Any]
NO_WAIT = RetryPolicy(retries=2, base=0.0)
FENCED_CALC = '```json\n{{"name": "calculate", "arguments": {"expression": "47*83"}}}\n```'


def last_role(body: Body) -> str:
    return str(body["messages"][-1]["role"])


def user_text(body: Body) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def offered(body: Body) -> list[str]:
    """The tool names a request sent the model."""
    return [t["function"]["name"] for t in body.get("tools") or []]


def calc(expression: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "calculate", "arguments": {"expression": expression}}]}


def tool_result(body: Body) -> str:
    """The content of the last tool message a request carries."""
    return str([m for m in body["messages"] if m["role"] == "tool"][-1]["content"])


def answer_after_tool(first: Callable[[Body], dict[str, Any]]) -> Callable[[Body], Any]:
    """A model that makes `first(body)` on a user turn and, once a tool result is in, answers
    with it (as a real answer carries what the tool found)."""

    def reply(body: Body) -> dict[str, Any]:
        if last_role(body) == "tool":
            return {"content": f"Here it is: {tool_result(body)}"}
        return first(body)

    return reply


def run(
    stub: OpenAIStub,
    tasks: list[str],
    strategies: list[str] | None = None,
    **options: Any,
) -> EvalResult:
    """The example suite's `tasks` under `strategies` (default eager) against `stub`."""
    suite = example_suite().select(tasks)
    timeout = options.pop("timeout", 30.0)
    endpoint = Endpoint(stub.base_url, "test-key", None, timeout)
    opts = EvalOptions(
        model_name="stub-model",
        base_url=stub.base_url,
        retry=options.pop("retry", NO_WAIT),
        strategy_options=StrategyOptions(ranker="bm25"),
        **options,
    )
    return run_eval(suite, strategies or ["eager"], chat_model(endpoint, "stub-model"), opts)
