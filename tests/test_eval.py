"""`attention-scoping eval` mechanics against the scripted OpenAI-compatible server.

The real `ChatOpenAI` client talks HTTP to `tests/openai_stub.py`; the stub plays the model, so
these tests check what the eval records and how it reacts (native and text tool calls, cached
tokens, 429, 500, a timeout, a malformed body, a bad key, resume, budget), not any model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from attention_scoping_lab.cli import main
from attention_scoping_lab.eval import EvalOptions, TokenPrices, run_eval
from attention_scoping_lab.eval.endpoint import Endpoint, chat_model
from attention_scoping_lab.eval.recorder import EvalRecorder, schemas_of
from attention_scoping_lab.eval.results import (
    TaskResult,
    figures,
    finished_results,
    stored_results,
    task_result,
)
from attention_scoping_lab.eval.retry import EndpointRejected, RetryPolicy
from attention_scoping_lab.eval.strategies import (
    STRATEGIES,
    StrategyOptions,
    register_strategy,
    scoped_builder,
)
from attention_scoping_lab.eval.suites import example_suite
from attention_scoping_lab.eval.tasks import EvalTask, Expect, ToolCallMade
from attention_scoping_lab.eval.transcript import Transcript
from tests.eval_support import (
    FENCED_CALC,
    NO_WAIT,
    Body,
    answer_after_tool,
    calc,
    offered,
    run,
    tool_result,
    user_text,
)
from tests.openai_stub import OpenAIStub, auth_error


def test_native_tool_call_succeeds_and_is_measured() -> None:
    usage = {"prompt_tokens": 900, "completion_tokens": 12}
    with OpenAIStub(
        [{**calc("47*83"), "usage": usage}, {"content": "3901.", "usage": usage}]
    ) as stub:
        result = run(stub, ["math-multiply"])
        assert sorted(stub.tool_names(0)) == sorted(example_suite().tool_names())
    [task] = result.results
    assert task.success and task.first_tool_right and task.first_tool == "calculate"
    assert task.calls == (("calculate", {"expression": "47*83"}, True),)
    assert (task.steps, task.input_tokens, task.output_tokens) == (2, 1800, 24)
    assert task.hallucinated == task.invalid_args == task.text_call_replies == 0
    assert len(task.call_seconds) == 2


def test_tool_call_in_text_is_reported_and_not_run_by_default() -> None:
    with OpenAIStub([{"content": FENCED_CALC}]) as stub:
        result = run(stub, ["math-multiply"])
    [task] = result.results
    assert not task.success and task.first_tool is None
    assert task.text_call_replies == 1 and task.converted == 0


def test_parse_text_tool_calls_converts_an_offered_tool() -> None:
    with OpenAIStub([{"content": FENCED_CALC}, {"content": "3901"}]) as stub:
        result = run(stub, ["math-multiply"], parse_text_calls=True)
        tool_results = stub.tool_messages(1)
    [task] = result.results
    assert task.success and task.text_call_replies == 1 and task.converted == 1
    assert list(tool_results.values()) == ["3901"]


def test_self_heal_nudges_an_announced_call_and_counts_the_retry() -> None:
    """With `self_heal`, a reply that announces the call instead of making it is nudged and
    retried inside the same step; the retry is a model call the eval counts. Without it, the
    announcement is the task's answer."""
    announce = {"content": "I will call the `calculate` function with 47*83 now."}
    with OpenAIStub([announce, calc("47*83"), {"content": "3901."}]) as stub:
        result = run(stub, ["math-multiply"], self_heal=True)
        nudge = user_text(stub.requests[1])
    [task] = result.results
    assert result.self_heal and result.to_dict()["self_heal"] is True
    assert task.success and task.first_tool == "calculate"
    assert task.steps == 3  # the stalled reply, the nudged retry, the answer
    assert "calculate" in nudge
    with OpenAIStub([announce]) as stub:
        [plain] = run(stub, ["math-multiply"]).results
    assert not plain.success and plain.first_tool is None and plain.steps == 1


def test_self_heal_under_scoping_nudges_an_answer_from_memory() -> None:
    """Under scoping, a first reply that answers without the tool pre-selection matched is
    nudged once toward it; eager has no such expectation, so the same reply is its answer. (The
    core's selector opens math for the mean and median request, not for 'What is 47 times 83?',
    which the model loads itself.)"""
    memory = {"content": "The mean is 6 and the median 7."}
    stats = {
        "tool_calls": [{"name": "summary_statistics", "arguments": {"numbers": [3, 5, 7, 9, 11]}}]
    }
    with OpenAIStub([memory, stats, {"content": "Mean 7, median 7."}]) as stub:
        result = run(stub, ["math-mean-median"], ["scoped-compact"], self_heal=True)
        nudge = user_text(stub.requests[1])
    [task] = result.results
    assert task.success and task.first_tool == "summary_statistics" and task.steps == 3
    assert "answered without calling a tool" in nudge
    assert "`summary_statistics(numbers: [number])`" in nudge
    with OpenAIStub([memory]) as stub:
        [eager] = run(stub, ["math-mean-median"], self_heal=True).results
    assert not eager.success and eager.first_tool is None and eager.steps == 1


def test_self_heal_answers_a_repeated_call_with_its_earlier_result() -> None:
    """With `self_heal`, a call that repeats one already answered in the turn does not run
    again: the model reads the earlier result (with a note to answer from it) in the tool
    message. Without it, the tool runs twice."""
    script = [calc("47*83"), calc("47*83"), {"content": "3901."}]
    with OpenAIStub(script) as stub:
        [task] = run(stub, ["math-multiply"], self_heal=True).results
        repeated = stub.requests[2]["messages"][-1]
    assert task.success and task.steps == 3
    assert task.calls == (("calculate", {"expression": "47*83"}, True),)  # ran once
    assert repeated["content"].startswith("3901\n\n(Note: `calculate` already ran")
    with OpenAIStub(script) as stub:
        [plain] = run(stub, ["math-multiply"]).results
    assert len(plain.calls) == 2


def test_cached_tokens_are_read_from_usage_and_billed() -> None:
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 600},
    }
    with OpenAIStub(
        [{**calc("47*83"), "usage": usage}, {"content": "3901.", "usage": usage}]
    ) as stub:
        result = run(stub, ["math-multiply"], prices=TokenPrices(1.0, 2.0, 0.1))
    [task] = result.results
    assert task.cached_tokens == 1200
    assert task.cost == pytest.approx(2 * (400 * 1.0 + 600 * 0.1 + 10 * 2.0) / 1e6)


def test_429_then_success_is_retried() -> None:
    limited = {"status": 429, "error": {"message": "Rate limit reached", "type": "requests"}}
    with OpenAIStub([limited, calc("47*83"), {"content": "3901"}]) as stub:
        result = run(stub, ["math-multiply"])
        assert len(stub.accepted) == 3
    [task] = result.results
    assert task.success and task.retries == 1 and task.error is None


async def test_async_model_calls_are_retried_and_recorded() -> None:
    """`awrap_model_call`: the same retries and records as the sync path the runner uses."""
    limited = {"status": 429, "error": {"message": "Rate limit reached", "type": "requests"}}
    suite = example_suite().select(["math-multiply"])
    recorder: EvalRecorder[Any, Any] = EvalRecorder(schemas_of(suite.tools), retry=NO_WAIT)
    transcript = Transcript(suite.tasks[0])
    recorder.register("async-task", transcript)
    with OpenAIStub([limited, calc("47*83"), {"content": "3901"}]) as stub:
        model = chat_model(Endpoint(stub.base_url, "test-key", None, 30.0), "stub-model")
        agent = STRATEGIES["eager"].build(suite, model, [recorder], StrategyOptions())
        await agent.ainvoke(
            {"messages": [HumanMessage(suite.tasks[0].turns[0])]},
            config={"configurable": {"thread_id": "async-task"}},
        )
        assert len(stub.accepted) == 3
    assert [c.retries for c in transcript.calls] == [1, 0]
    assert transcript.first_choice == "calculate"
    assert [(t.name, t.ok) for t in transcript.tools] == [("calculate", True)]


async def test_async_refused_key_is_endpoint_rejected() -> None:
    class Refused(Exception):
        status_code = 401

    async def refuse() -> None:
        raise Refused("bad key")

    with pytest.raises(EndpointRejected, match="bad key"):
        await NO_WAIT.acall(refuse)


def test_500_after_the_retries_is_a_task_error_and_the_run_goes_on() -> None:
    down = {"status": 500, "error": {"message": "upstream exploded", "type": "server_error"}}
    script: list[Any] = [down, down, down, calc("0.15*240"), {"content": "36"}]
    with OpenAIStub(script) as stub:
        result = run(stub, ["math-multiply", "math-percent"])
    first, second = result.results
    assert first.error is not None and "500" in first.error
    assert "upstream exploded" in first.error and not first.success
    assert second.success and second.error is None


def test_timeout_is_retried() -> None:
    with OpenAIStub([{**calc("47*83"), "delay": 1.5}, calc("47*83"), {"content": "3901."}]) as stub:
        result = run(stub, ["math-multiply"], timeout=0.5)
    [task] = result.results
    assert task.success and task.retries == 1


def test_malformed_body_is_a_one_line_task_error() -> None:
    with OpenAIStub([{"raw": "<html>bad gateway</html"}]) as stub:
        result = run(stub, ["math-multiply"], retry=RetryPolicy(retries=0))
    [task] = result.results
    assert task.error is not None and "\n" not in task.error and not task.success


def test_a_refused_key_stops_the_run() -> None:
    with OpenAIStub([auth_error("sk-wrong-key")]) as stub, pytest.raises(EndpointRejected):
        run(stub, ["math-multiply", "math-percent"])


def test_hallucinated_names_and_invalid_arguments_are_counted() -> None:
    script = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "47*83"}}]},
        {"tool_calls": [{"name": "calculate", "arguments": {"expr": "47*83"}}]},
        calc("47*83"),
        {"content": "3901"},
    ]
    with OpenAIStub(script) as stub:
        result = run(stub, ["math-multiply"])
    [task] = result.results
    assert task.hallucinated == 1 and task.invalid_args == 1
    assert task.first_tool == "calculator" and not task.first_tool_right
    assert task.success  # it recovered: the check is on the calls that ran


def load_math_then_convert(body: Body) -> dict[str, Any]:
    """A model that loads the math scope, converts 5 miles to kilometres, then answers."""
    tool_results = [m for m in body["messages"] if m["role"] == "tool"]
    if not tool_results:
        return {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]}
    if len(tool_results) == 1:
        arguments = {"value": 5, "from_unit": "mi", "to_unit": "km"}
        return {"tool_calls": [{"name": "convert_units", "arguments": arguments}]}
    return {"content": f"That is {tool_result(body)}"}


def load_math_then_calculate(body: Body) -> dict[str, Any]:
    """A model that loads the math scope, calls `calculate`, then answers."""
    tool_results = [m for m in body["messages"] if m["role"] == "tool"]
    if not tool_results:
        return {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]}
    if len(tool_results) == 1:
        return calc("47*83")
    return {"content": "3901"}


def test_scoped_strategy_skips_navigation_when_judging_the_first_tool() -> None:
    with OpenAIStub([load_math_then_calculate] * 3) as stub:
        result = run(stub, ["math-multiply"], ["scoped"])
        assert "load_context" in offered(stub.requests[0])
        assert "calculate" in offered(stub.requests[1])
    [task] = result.results
    assert task.success and task.first_tool_right and task.steps == 3
    assert [c[0] for c in task.calls] == ["calculate"]


def test_scoped_compact_sends_the_suite_prompt_alone() -> None:
    """The compact layout: the suite's system prompt unchanged, the selected scope's declared
    reads, and a `load_context` whose schema describes every scope."""
    convert = {
        "tool_calls": [
            {
                "name": "convert_units",
                "arguments": {"value": 5, "from_unit": "mi", "to_unit": "km"},
            }
        ]
    }
    with OpenAIStub([answer_after_tool(lambda body: convert)] * 2) as stub:
        result = run(stub, ["math-miles"], ["scoped-compact"])
        first = stub.requests[0]
        system = first["messages"][0]["content"]
        assert system == example_suite().system_prompt
        assert {"load_context", "convert_units", "calculate"} <= set(offered(first))
        (load_context,) = [t for t in first["tools"] if t["function"]["name"] == "load_context"]
        assert "weather (" in json.dumps(load_context)
    [task] = result.results
    assert task.success and task.first_tool_right


def test_scoped_compact_without_a_selection_offers_load_context_alone() -> None:
    """A message the selector matches no scope for ("What is 47 times 83?"): the first call
    offers `load_context` alone; the model's own load opens math, whose tools then follow."""
    with OpenAIStub([load_math_then_calculate] * 3) as stub:
        result = run(stub, ["math-multiply"], ["scoped-compact"])
        assert offered(stub.requests[0]) == ["load_context"]
        assert "calculate" in offered(stub.requests[1])
    [task] = result.results
    assert task.success and task.first_tool_right


@pytest.mark.parametrize("strategy", ["scoped-model", "scoped-compact-model"])
def test_model_navigation_strategies_open_no_scope_for_the_model(strategy: str) -> None:
    """`selector=None`: the first call offers `load_context` alone even where the selector
    would have chosen math; the model's own `load_context` opens the scope, whose tools follow."""
    with OpenAIStub([load_math_then_convert] * 3) as stub:
        result = run(stub, ["math-miles"], [strategy])
        assert offered(stub.requests[0]) == ["load_context"]
        assert "convert_units" in offered(stub.requests[1])
    [task] = result.results
    assert task.success and task.first_tool_right


def test_scoped_builder_hands_its_options_to_the_scoping_middleware() -> None:
    register_strategy(
        "scoped-test-core",
        scoped_builder(layout="stable", selector=None),
        "scoped with the stable layout, navigated by the model",
        needs_scopes=True,
    )
    try:
        with OpenAIStub([load_math_then_convert] * 3) as stub:
            result = run(stub, ["math-miles"], ["scoped-test-core"])
            system = stub.requests[0]["messages"][0]["content"]
            assert system.startswith("# Capabilities") and "# Active context: none" in system
            assert stub.requests[1]["messages"][0]["content"] == system  # stable: unchanged
            assert offered(stub.requests[0]) == ["load_context"]  # selector=None
    finally:
        del STRATEGIES["scoped-test-core"]
    assert result.results[0].success


def test_gateway_calls_are_unwrapped() -> None:
    def first(body: Body) -> dict[str, Any]:
        return {
            "tool_calls": [
                {
                    "name": "execute_tool",
                    "arguments": {
                        "tool_name": "get_current_weather",
                        "arguments": {"city": "Lisbon"},
                    },
                }
            ]
        }

    with OpenAIStub([answer_after_tool(first)] * 4) as stub:
        result = run(stub, ["wx-current-lisbon"], ["gateway", "gateway-pool"])
        for request in (stub.requests[0], stub.requests[2]):
            assert set(offered(request)) == {
                "search_tool_catalog",
                "get_tool_schema",
                "execute_tool",
            }
        plain, pooled = (str(stub.requests[i]["messages"][0]["content"]) for i in (0, 2))
    assert "- get_current_weather(city" not in plain
    assert "- get_current_weather(city" in pooled  # the signature pool
    assert [(r.strategy, r.success, r.first_tool, r.steps) for r in result.results] == [
        ("gateway", True, "get_current_weather", 2),
        ("gateway-pool", True, "get_current_weather", 2),
    ]


def test_gateway_pool_routes_a_call_by_the_tool_name() -> None:
    """Under gateway-pool, a model that calls the catalog tool itself (natively, or as text
    with --parse-text-tool-calls) has the call run through execute_tool; the eval judges the
    catalog tool as the first tool and counts the text call as converted."""
    native: dict[str, Any] = {
        "tool_calls": [{"name": "get_current_weather", "arguments": {"city": "Lisbon"}}]
    }
    fenced = '{"name": "get_current_weather", "arguments": {"city": "Lisbon"}}'
    text: dict[str, Any] = {"content": f"```json\n{fenced}\n```"}

    def replying(reply: dict[str, Any]) -> Callable[[Body], dict[str, Any]]:
        return lambda body: reply

    for reply, parse in ((native, False), (text, True)):
        with OpenAIStub([answer_after_tool(replying(reply))] * 2) as stub:
            result = run(stub, ["wx-current-lisbon"], ["gateway-pool"], parse_text_calls=parse)
            sent = stub.requests[1]["messages"]
        [task] = result.results
        assert task.success and task.first_tool == "get_current_weather", reply
        assert task.hallucinated == 0 and task.converted == int(parse)
        call = next(m for m in sent if m["role"] == "assistant")["tool_calls"][0]["function"]
        assert call["name"] == "execute_tool"


def test_concurrent_tasks_keep_their_own_transcripts() -> None:
    def first(body: Body) -> dict[str, Any]:
        return calc("47*83") if "47" in user_text(body) else calc("15/100*240")

    with OpenAIStub([answer_after_tool(first)] * 4) as stub:
        result = run(stub, ["math-multiply", "math-percent"], concurrency=2)
    assert [(r.task, r.success, r.steps) for r in result.results] == [
        ("math-multiply", True, 2),
        ("math-percent", True, 2),
    ]


def test_resume_skips_finished_tasks(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    down = {"status": 500, "error": {"message": "down", "type": "server_error"}}
    with OpenAIStub([calc("47*83"), {"content": "3901."}, down]) as stub:
        run(
            stub, ["math-multiply", "math-percent"], results_path=path, retry=RetryPolicy(retries=0)
        )
    with OpenAIStub([calc("15/100*240"), {"content": "36"}]) as stub:
        result = run(stub, ["math-multiply", "math-percent"], results_path=path, resume=True)
        assert len(stub.accepted) == 2  # only the task that errored ran again
    assert [(r.task, r.success) for r in result.results] == [
        ("math-multiply", True),
        ("math-percent", True),
    ]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["calls"] == [["calculate", {"expression": "47*83"}, True]]
    assert [(d["task"], d["error"]) for d in lines] == [
        ("math-multiply", None),
        ("math-percent", None),
    ]


def test_a_run_keeps_other_strategies_and_models_in_the_results_file(tmp_path: Path) -> None:
    """Runs made one strategy at a time fill one file: a run replaces only its own model's
    results of the tasks it runs, and a `--resume` run over every strategy reports them all
    without calling the model."""
    path = tmp_path / "results.jsonl"
    other_model = TaskResult("eager", "math-multiply", "other-model", success=False)
    path.write_text(other_model.to_json() + "\n", encoding="utf-8")
    script = [calc("47*83"), {"content": "3901."}]
    with OpenAIStub(script) as stub:
        run(stub, ["math-multiply"], ["eager"], results_path=path)
    load = {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]}
    with OpenAIStub([load, *script]) as stub:  # no scope selected: the model loads math
        run(stub, ["math-multiply"], ["scoped-compact"], results_path=path)
    with OpenAIStub([load, calc("83*47"), {"content": "3901."}]) as stub:  # again: replaced
        run(stub, ["math-multiply"], ["scoped-compact"], results_path=path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(d["model"], d["strategy"]) for d in lines] == [
        ("other-model", "eager"),
        ("stub-model", "eager"),
        ("stub-model", "scoped-compact"),
    ]
    assert lines[2]["calls"] == [["calculate", {"expression": "83*47"}, True]]
    with OpenAIStub([]) as stub:
        both = run(
            stub, ["math-multiply"], ["eager", "scoped-compact"], results_path=path, resume=True
        )
        assert stub.accepted == []
    assert [(r.strategy, r.success) for r in both.results] == [
        ("eager", True),
        ("scoped-compact", True),
    ]
    assert both.shared_tasks() == frozenset({"math-multiply"})


def test_max_cost_stops_before_the_budget_is_exceeded() -> None:
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 0}
    script = [{**calc("47*83"), "usage": usage}, {"content": "3901.", "usage": usage}]
    with OpenAIStub(script * 3) as stub:
        result = run(
            stub,
            ["math-multiply", "math-percent", "math-miles"],
            prices=TokenPrices(1.0),
            max_cost=3.0,
        )
        assert len(stub.accepted) == 2
    assert len(result.results) == 1 and result.results[0].cost == pytest.approx(2.0)
    assert result.stopped is not None and "2 task runs not started" in result.stopped


def test_step_budget_ends_a_looping_task() -> None:
    with OpenAIStub([calc("47*83")] * 5) as stub:
        result = run(stub, ["math-multiply"], max_steps=3)
        assert len(stub.accepted) == 3
    assert result.results[0].steps == 3


# -- the command ---------------------------------------------------------------------------


@pytest.mark.usefixtures("no_model_keys")
def test_cli_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "eval.json"
    with OpenAIStub([answer_after_tool(lambda b: calc("47*83"))] * 2) as stub:
        code = main(
            [
                "eval",
                "--suite",
                "example",
                "--task",
                "math-multiply",
                "--base-url",
                stub.base_url,
                "--model",
                "stub-model",
                "--strategies",
                "eager",
                "--results",
                str(tmp_path / "r.jsonl"),
                "--json",
                str(out),
                "--quiet",
            ]
        )
        assert stub.headers[0]["authorization"] == "Bearer not-needed"
    assert code == 0
    printed = capsys.readouterr().out
    assert "eager" in printed and "100 %" in printed
    assert "figures written to" in printed and "plot written" not in printed
    figures = json.loads(out.read_text())
    assert figures["strategies"][0]["success"] == 1.0
    assert figures["tasks"][0]["task"] == "math-multiply"


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err
    return err


def test_cli_bad_key_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-1234")
    with OpenAIStub(api_key="sk-right-key-5678") as stub:
        err = _cli_error(["eval", "--base-url", stub.base_url, "--model", "m", "--quiet"], capsys)
    assert "rejected the API key (from $OPENAI_API_KEY) with HTTP 401" in err


def test_cli_unreachable_host_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = _cli_error(["eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], capsys)
    assert "cannot reach http://127.0.0.1:9/v1" in err


def test_cli_missing_openrouter_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    err = _cli_error(["eval", "--model", "m"], capsys)
    assert "$OPENROUTER_API_KEY is not set" in err


def test_cli_unknown_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    err = _cli_error(["eval", "--strategies", "eager,psychic", "--base-url", "http://x/v1"], capsys)
    assert "unknown strategy 'psychic'" in err


def test_single_call_task_stops_after_the_choice_and_scopeless_suites_skip_scoping(
    tmp_path: Path,
) -> None:
    from attention_scoping_lab.eval.suites import catalog_suite

    catalog, queries = tmp_path / "c.jsonl", tmp_path / "q.jsonl"
    catalog.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"t.{i}",
                    "name": f"t.{i}",
                    "description": f"tool {i}",
                    "parameters": {"type": "object", "properties": {}},
                }
            )
            for i in range(4)
        )
    )
    queries.write_text(json.dumps({"id": "q", "query": "use tool 2", "gold_ids": ["t.2"]}))
    suite = catalog_suite(catalog, queries)
    with OpenAIStub([{"tool_calls": [{"name": "t_2", "arguments": {}}]}]) as stub:
        endpoint = Endpoint(stub.base_url, "k", None)
        result = run_eval(
            suite,
            ["eager", "scoped"],
            chat_model(endpoint, "m"),
            EvalOptions(model_name="m", retry=NO_WAIT),
        )
        assert len(stub.accepted) == 1
    [task] = result.results
    assert task.success and task.steps == 1
    assert "no scopes" in result.skipped["scoped"]


def test_the_last_reply_is_kept_for_reading_failures() -> None:
    with OpenAIStub([{"content": "47 times 83 is 3901."}]) as stub:
        result = run(stub, ["math-multiply"])
    [task] = result.results
    assert not task.success and task.first_tool is None
    assert task.last_text == "47 times 83 is 3901."


# -- judging and aggregation (no model) ----------------------------------------------------

TWO_STEP = EvalTask(
    "two-step",
    ("q",),
    (Expect(("calculate",)), Expect(("format_number",))),
)


def _transcript(first: str | None, calls: list[ToolCallMade]) -> Transcript:
    transcript = Transcript(TWO_STEP)
    if first is not None:
        transcript.note_choice(first, known=True, valid=True)
    for made in calls:
        transcript.add_tool(made)
    return transcript


def test_first_tool_is_judged_against_the_first_expectation_only() -> None:
    both = [ToolCallMade("calculate", {}, True), ToolCallMade("format_number", {}, True)]
    right = task_result("eager", "m", _transcript("calculate", both), TokenPrices())
    assert right.success and right.first_tool_right
    # The second step's tool first is a wrong first choice, even though it is expected later.
    late = task_result("eager", "m", _transcript("format_number", both[::-1]), TokenPrices())
    assert not late.success and not late.first_tool_right
    assert late.first_tool == "format_number"
    # A run that errored is never a success, whatever calls it made.
    errored = task_result("eager", "m", _transcript("calculate", both), TokenPrices(), "boom")
    assert not errored.success and errored.error == "boom"


def test_figures_split_right_wrong_and_no_first_tool() -> None:
    both = [ToolCallMade("calculate", {}, True), ToolCallMade("format_number", {}, True)]
    rows = [
        task_result("eager", "m", _transcript("calculate", both), TokenPrices()),
        task_result("eager", "m", _transcript("format_number", []), TokenPrices()),
        task_result("eager", "m", _transcript(None, []), TokenPrices(), "boom"),
    ]
    row = figures("eager", rows)
    assert row.tasks == 3 and row.errors == 1
    assert row.success == pytest.approx(1 / 3)
    assert row.first_tool_right == row.wrong_first_tool == row.no_tool == pytest.approx(1 / 3)


def test_resume_keeps_only_finished_results_of_the_same_model(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    done = TaskResult("eager", "a", "m", success=True)
    lines = [
        done.to_json(),
        TaskResult("eager", "b", "m", success=False, error="boom").to_json(),
        TaskResult("eager", "c", "other-model", success=True).to_json(),
        '{"strategy": "eager", "task": "d", "mo',  # cut short by an interrupted run
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert finished_results(stored_results(path), "m") == [done]
    assert finished_results(stored_results(tmp_path / "missing.jsonl"), "m") == []
