"""The eval's disclosure-mode strategies (issue 27): registered, and skipped with a reason that
names the mode where the install has no `disclosure=` option or the endpoint cannot carry it."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from attention_scoping_lab.eval.strategies import (
    STRATEGIES,
    StrategyOptions,
    check_endpoint_mode,
)
from tests.eval_support import calc, run
from tests.openai_stub import OpenAIStub

MODES = {
    "scoped-anthropic": "anthropic",
    "gated-anthropic": "anthropic",
    "scoped-openai": "openai",
    "gated-openai": "openai",
    "gated-allowed-tools": "allowed_tools",
}


def test_disclosure_strategies_are_registered() -> None:
    assert set(MODES) <= set(STRATEGIES)
    assert all(STRATEGIES[n].needs_scopes == n.startswith("scoped") for n in MODES)


def test_disclosure_strategies_skip_on_a_chat_completions_stub() -> None:
    """Against the scripted Chat Completions server every mode is skipped with its reason
    (ChatOpenAI cannot carry anthropic, nor the gate's openai mode on Chat Completions, and a
    local endpoint is not known to enforce allowed_tools, which scoped's `OpenAI()` is), while
    eager runs."""
    with OpenAIStub([calc("47*83"), {"content": "3901"}]) as stub:
        result = run(stub, ["math-multiply"], ["eager", *MODES])
    assert [r.strategy for r in result.results] == ["eager"]
    for name, mode in MODES.items():
        reason = result.skipped[name]
        assert reason.startswith(f"ValueError: disclosure={mode!r}"), reason
        assert "Traceback" not in reason


def _model(base_url: str | None) -> object:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="m", api_key=SecretStr("k"), base_url=base_url)


def test_allowed_tools_runs_only_where_the_endpoint_enforces_it() -> None:
    check_endpoint_mode("allowed_tools", _model(None), StrategyOptions())
    check_endpoint_mode("allowed_tools", _model("https://api.openai.com/v1"), StrategyOptions())
    local = _model("http://127.0.0.1:8080/v1")
    with pytest.raises(ValueError, match="enforces tool_choice allowed_tools"):
        check_endpoint_mode("allowed_tools", local, StrategyOptions())
    check_endpoint_mode("allowed_tools", local, StrategyOptions(extra={"native_endpoint": True}))
    check_endpoint_mode("anthropic", local, StrategyOptions())  # the model class decides there


def test_a_native_mode_with_digest_turns_is_skipped_with_the_reason() -> None:
    from attention_scoping.history import TurnDigestMiddleware
    from attention_scoping_lab.eval.strategies import check_no_digest

    check_no_digest("anthropic", [])
    check_no_digest("rewrite", [TurnDigestMiddleware()])
    check_no_digest("allowed_tools", [TurnDigestMiddleware()])
    for mode in ("anthropic", "openai"):
        with pytest.raises(ValueError, match=f"disclosure='{mode}'.*--digest-turns"):
            check_no_digest(mode, [TurnDigestMiddleware()])


def test_scoped_openai_sends_every_tool_and_allows_the_scope_in_tool_choice() -> None:
    """`scoped-openai` is `scoped` with `OpenAI()`: on an endpoint vouched for, every request
    carries the whole tools array and `tool_choice` allows what the reply may call."""
    from attention_scoping_lab.eval import EvalOptions, run_eval
    from attention_scoping_lab.eval.endpoint import Endpoint, chat_model
    from attention_scoping_lab.eval.suites import example_suite
    from tests.eval_support import NO_WAIT

    suite = example_suite().select(["math-mean-median"])
    stats = {"tool_calls": [{"name": "summary_statistics", "arguments": {"numbers": [3, 5, 7]}}]}
    with OpenAIStub([stats, {"content": "Mean 7, median 7."}]) as stub:
        options = EvalOptions(
            model_name="stub-model",
            base_url=stub.base_url,
            retry=NO_WAIT,
            strategy_options=StrategyOptions(ranker="bm25", extra={"native_endpoint": True}),
        )
        model = chat_model(Endpoint(stub.base_url, "k", None, 30.0), "stub-model")
        result = run_eval(suite, ["scoped-openai"], model, options)
        first = stub.requests[0]
    assert not result.skipped and [r.strategy for r in result.results] == ["scoped-openai"]
    sent = {t["function"]["name"] for t in first["tools"]}
    assert {t.name for t in suite.tools} <= sent
    allowed = {t["function"]["name"] for t in first["tool_choice"]["allowed_tools"]["tools"]}
    assert "summary_statistics" in allowed and allowed < sent
