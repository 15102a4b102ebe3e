"""The eval judges what the user gets: numbers as numbers, the answer of every turn, tasks that
need no tool, and write calls nobody asked for (no model involved, except the end-to-end runs
against the scripted OpenAI-compatible server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from attention_scoping_lab.eval import EvalOptions, run_eval
from attention_scoping_lab.eval.endpoint import Endpoint, chat_model
from attention_scoping_lab.eval.judging import (
    judged,
    unrequested_by_strategy,
    write_tools,
)
from attention_scoping_lab.eval.numbers import numbers_in, same_number, snippet_in
from attention_scoping_lab.eval.report import render, write_json
from attention_scoping_lab.eval.results import EvalResult, TaskResult
from attention_scoping_lab.eval.suite import Suite
from attention_scoping_lab.eval.suites import example_suite
from attention_scoping_lab.eval.tasks import (
    EvalTask,
    Expect,
    ToolCallMade,
    load_tasks,
    unusable_answer,
    verdict,
)
from attention_scoping_lab.eval.transcript import Transcript
from tests.eval_support import FENCED_CALC, NO_WAIT, calc, run
from tests.openai_stub import OpenAIStub

# -- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "text"),
    [
        ("1036800", "10368"),  # a substring of the digits is another number
        ("36", "3600"),
        ("36", "0.36"),
        ("16", "160"),
        ("37.77", "37.7777777777778"),  # 37.7777… rounds to 37.78, not 37.77
        ("mean: 7", "mean: 7.5"),
        ("1036800", "about 1 million"),  # rounded beyond 1 %
        ("-3", "it is 3 degrees"),
        ("3901", "3,900"),
    ],
)
def test_a_different_number_does_not_match(snippet: str, text: str) -> None:
    assert not snippet_in(snippet, text)


@pytest.mark.parametrize(
    ("snippet", "text"),
    [
        ("1036800", "That is 1,036,800."),
        ("1036800", "1 036 800"),
        ("1036800", "1\u202f036\u202f800"),
        ("1036800", "1.0368e6"),
        ("1036800", "1.0368 × 10^6"),
        ("1036800", "1.0368×10⁶"),
        ("1036800", "about 1.04 million"),
        ("37.78", "37.7777777777778"),
        ("37.78", "about 38 °C"),
        ("3901", "47 times 83 is 3901."),
        ("-3", "it is −3 degrees"),
        ("25%", "a share of 0.25"),
        ("0.25", "25 %"),
        ("36", "15% of 240 is 36"),
        ("mean: 7", "count: 5\nmean: 7\nmedian: 7"),
        ("5-day forecast", "Oslo: 5-day forecast (UTC)"),
        ("1.234.567,89", "German: 1.234.567,89"),  # a locale's format: matched as written
        ("Anmelden", "sign in -> German: Anmelden"),
    ],
)
def test_the_same_number_matches_however_written(snippet: str, text: str) -> None:
    assert snippet_in(snippet, text)


def test_numbers_in_reads_lists_ranges_and_space_groups_both_ways() -> None:
    assert [n.value for n in numbers_in("3, 5, 7 and 5-10")] == [3, 5, 7, 10]
    assert {n.value for n in numbers_in("12 345")} == {12345, 12, 345}
    assert numbers_in("1.234.567,89") == []
    [pct] = numbers_in("36 %")
    assert pct.percent and same_number(pct, numbers_in("0.36")[0])


# -- answers and verdicts ----------------------------------------------------------------------

CALC = EvalTask(
    "m", ("What is 47 times 83?",), (Expect(("calculate",), result_contains=("3901",)),)
)
RAN = [ToolCallMade("calculate", {"expression": "47*83"}, True, "3901")]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        ("   ", "empty answer"),
        ("(eval: step budget spent)", "stopped"),
        (FENCED_CALC.replace("{{", "{"), "unanswered call of 'calculate'"),
        ('{"name": "get_forecast", "arguments": {"city": "Oslo"}}', "unanswered call"),
    ],
)
def test_an_answer_without_usable_content_is_named(answer: str, reason: str) -> None:
    found = unusable_answer(answer)
    assert found is not None and reason in found
    assert not verdict(CALC, RAN, [answer]).success


def test_the_answer_must_hold_what_the_task_asks_for() -> None:
    task = EvalTask("m", CALC.turns, CALC.expect, answer_contains=("3901",))
    assert verdict(task, RAN, ["47 × 83 = 3,901."]).success
    lacking = verdict(task, RAN, ["Done."])
    assert not lacking.success and lacking.failures == (
        "the answer lacks '3901'",
        "turn 1: the answer does not give '3901' (the result, from calculate)",
    )
    assert not verdict(task, RAN, []).success  # the turn got no answer at all
    assert verdict(task, RAN).success  # without answers: the tool calls alone (old callers)


def test_a_task_that_needs_no_tool_fails_when_one_is_called() -> None:
    thanks = EvalTask("thanks", ("Thanks, have a nice evening!",), ())
    assert verdict(thanks, [], ["You too!"]).success
    ran = verdict(thanks, [ToolCallMade("get_current_weather", {"city": "Paris"}, True)], ["x"])
    assert not ran.success and "get_current_weather" in ran.failures[0]
    # Asked for but refused (never ran) is still a call the message did not need.
    assert not verdict(thanks, [], ["You too!"], requested=["get_forecast"]).success
    assert not verdict(thanks, [], [""]).success  # and the user still gets an answer


def test_unrequested_writes_fail_the_task_and_are_counted() -> None:
    task = EvalTask(
        "summary", ("Summarise this mail",), (Expect(("read_mail",)),), must_not_call=("archive",)
    )
    read = ToolCallMade("read_mail", {}, True, "text")
    send = ToolCallMade("send_email", {"to": "x"}, True)
    archive = ToolCallMade("archive", {}, False)
    writes = frozenset({"send_email", "reply"})
    assert verdict(task, [read], ["a summary"], write_tools=writes).success
    found = verdict(task, [read, send, archive], ["a summary"], write_tools=writes)
    assert not found.success and found.unrequested_writes == ("send_email", "archive")
    # A write the task expects is requested, not unrequested.
    asked = EvalTask("send", ("Send it",), (Expect(("send_email",)),))
    assert verdict(asked, [send], ["Sent."], write_tools=writes).success


def test_task_files_express_answers_no_tool_history_and_forbidden_tools(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    raw = [
        {"id": "hi", "turns": ["Hi there!"], "expect": []},
        {
            "id": "recall",
            "history": [
                {"role": "user", "content": "What's 47 times 83?"},
                {"role": "assistant", "content": "47 × 83 = 3901."},
            ],
            "turns": ["Which two numbers did I multiply?"],
            "expect": [],
            "answer_contains": [47, 83],
            "must_not_call": "calculate",
        },
    ]
    path.write_text(json.dumps({"tasks": raw}))
    hi, recall = load_tasks(path)
    assert not hi.needs_tool and hi.expect == ()
    assert recall.history[1] == ("assistant", "47 × 83 = 3901.")
    assert recall.answer_contains == ("47", "83") and recall.must_not_call == ("calculate",)


def test_judged_marks_a_no_tool_task_right_when_no_tool_was_chosen() -> None:
    task = EvalTask("hi", ("Hi!",), ())
    quiet = Transcript(task)
    quiet.add_answer("Hello! How can I help?")
    base = TaskResult("eager", "hi", "m", success=False)
    done = judged(base, quiet)
    assert done.success and done.first_tool_right
    eager = Transcript(task)
    eager.note_choice("get_current_weather", known=True, valid=True)
    eager.add_answer("It is sunny.")
    done = judged(base, eager)
    assert not done.success and not done.first_tool_right


# -- end to end (scripted OpenAI-compatible server) -------------------------------------------


def test_a_right_call_without_a_usable_answer_fails() -> None:
    with OpenAIStub([calc("47*83"), {"content": "Done."}]) as stub:
        lazy = run(stub, ["math-multiply"]).results[0]
    assert lazy.first_tool_right and not lazy.success
    with OpenAIStub([calc("47*83"), {"content": "47 × 83 = 3,901."}]) as stub:
        assert run(stub, ["math-multiply"]).results[0].success


def test_a_call_written_as_text_and_left_unanswered_fails() -> None:
    with OpenAIStub([{"content": FENCED_CALC.replace("{{", "{")}]) as stub:
        [task] = run(stub, ["math-multiply"]).results
    assert not task.success and task.text_call_replies == 1


def _suite(tasks: list[EvalTask]) -> Suite:
    base = example_suite()
    return Suite("mini", base.tools, tasks, base.scopes, base.system_prompt, base.environment)


def test_a_no_tool_message_with_history_is_judged_on_the_call_and_the_answer() -> None:
    recall = EvalTask(
        "recall",
        ("Thanks! Which two numbers did I multiply?",),
        (),
        answer_contains=("47", "83"),
        history=(("user", "What is 47 times 83?"), ("assistant", "47 × 83 = 3901.")),
    )
    script = [{"content": "You multiplied 47 by 83."}, calc("47*83"), {"content": "47 and 83."}]
    with OpenAIStub(script) as stub:
        endpoint = Endpoint(stub.base_url, "k", None, 30.0)
        result = run_eval(
            _suite([recall]),
            ["eager", "scoped"],
            chat_model(endpoint, "m"),
            EvalOptions(model_name="m", retry=NO_WAIT),
        )
        sent = [m["role"] for m in stub.requests[0]["messages"]]
    assert sent[-3:] == ["user", "assistant", "user"]  # the history came first
    quiet, busy = result.results
    assert quiet.success and quiet.first_tool_right and quiet.first_tool is None
    assert not busy.success and not busy.first_tool_right and busy.first_tool == "calculate"


def test_unrequested_write_calls_are_reported_per_strategy(tmp_path: Path) -> None:
    noisy = example_suite(distractors=30)
    writing = write_tools(noisy.tools)
    assert "slack_post_message" in writing and "calculate" not in writing
    task = next(t for t in noisy.tasks if t.id == "math-multiply")
    rows = [
        TaskResult("eager", task.id, "m", True, calls=(("slack_post_message", {}, True),) * 2),
        TaskResult("scoped", task.id, "m", True, calls=(("calculate", {}, True),)),
    ]
    result = EvalResult("example", "m", "", ["eager", "scoped"], rows)
    counts = unrequested_by_strategy(result, noisy.tasks, writing)
    assert counts == {"eager": 2, "scoped": 0}
    console = Console(record=True, width=260)
    render(result, console, counts)
    text = console.export_text()
    assert "unreq. writes" in text and "calls of write tools no task asked for" in text
    out = tmp_path / "e.json"
    write_json(result, out, counts)
    assert json.loads(out.read_text())["unrequested_write_calls"] == counts


def test_cli_selects_the_heldout_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from attention_scoping_lab.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "e.json"
    with OpenAIStub([{"content": "Good morning! How can I help?"}]) as stub:
        argv = ["eval", "--suite", "example-heldout", "--task", "ho-none-greeting"]
        argv += ["--base-url", stub.base_url, "--model", "stub", "--strategies", "eager"]
        assert main([*argv, "--json", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "suite example-heldout" in printed and "100 %" in printed
    assert (tmp_path / ".attention-scoping/eval/example-heldout-stub.jsonl").exists()
    figures = json.loads(out.read_text())
    assert figures["suite"] == "example-heldout" and figures["unrequested_write_calls"] == {
        "eager": 0
    }


# -- the answer of each turn, end to end ------------------------------------------------------


def _call(name: str, **args: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def test_each_turn_is_judged_on_its_own_calls_and_the_reasons_are_kept(tmp_path: Path) -> None:
    """Through the runner: tool calls are stamped with their turn, so a turn-one answer that
    gives nothing fails even when turn two says it all; the reasons and answers are stored."""
    glossary = _call("glossary_lookup", term="sign in", target_language="German")
    vat = calc("1499 * 0.19")
    said = "It is 'Anmelden'; and 19 % of 1499 is 284.81."
    lagged = [glossary, {"content": "I looked it up in the glossary."}, vat, {"content": said}]
    path = tmp_path / "r.jsonl"
    with OpenAIStub(lagged) as stub:
        [bad] = run(stub, ["switch-glossary-vat"], results_path=path).results
    assert not bad.success and bad.kind == "switch"
    assert bad.failures == (
        "turn 1: the answer does not give 'Anmelden' (the result, from glossary_lookup)",
    )
    assert bad.answers == ("I looked it up in the glossary.", said)
    stored = json.loads(path.read_text())
    assert stored["failures"] == list(bad.failures) and stored["judge"] == 2
    good = [glossary, {"content": "The approved German term is 'Anmelden'."}, vat]
    good += [{"content": "19 % of 1499 is 284.81."}]
    with OpenAIStub(good) as stub:
        [ok] = run(stub, ["switch-glossary-vat"]).results
    assert ok.success and ok.failures == ()


def test_a_contradicted_result_fails_end_to_end() -> None:
    with OpenAIStub([calc("47*83"), {"content": "47 × 83 = 3,901 (3,801 by hand)."}]) as stub:
        [task] = run(stub, ["math-multiply"]).results
    assert task.first_tool_right and not task.success
    assert task.failures == ("turn 1: states 3,801, which no tool returned and no message gave",)


def test_results_of_an_older_judge_are_run_again_on_resume(tmp_path: Path) -> None:
    """A result judged before the answers were read (no `judge` field) is not finished."""
    path = tmp_path / "r.jsonl"
    old = json.loads(TaskResult("eager", "math-multiply", "stub-model", success=True).to_json())
    del old["judge"]
    path.write_text(json.dumps(old) + "\n")
    with OpenAIStub([calc("47*83"), {"content": "3,901."}]) as stub:
        result = run(stub, ["math-multiply"], results_path=path, resume=True)
        assert len(stub.accepted) == 2  # judged again: run again
    [task] = result.results
    assert task.success and task.judge == 2


def test_a_locale_snippet_matches_whichever_space_groups_it() -> None:
    assert snippet_in("250 000,75", "1\u00a0250\u00a0000,75")
    assert snippet_in("2\u202f500\u202f000,5", "2 500 000,5")
    assert not snippet_in("250 000,75", "1.250.000,75")


def test_calls_of_one_reply_are_kept_in_the_order_the_model_made_them() -> None:
    """Two calls of one reply run at once and may finish in either order: the transcript keeps
    the model's order, so in-order expectations do not depend on which finished first."""
    task = EvalTask(
        "two",
        ("Convert 10 km to miles, then the weather in Dublin.",),
        (Expect(("convert_units",)), Expect(("get_current_weather",))),
    )
    transcript = Transcript(task)
    transcript.note_choice("convert_units", known=True, valid=True, call_id="c1")
    transcript.note_choice("get_current_weather", known=True, valid=True, call_id="c2")
    transcript.add_tool(ToolCallMade("get_current_weather", {}, True, "Dublin"), "c2")
    transcript.add_tool(ToolCallMade("convert_units", {}, True, "6.21"), "c1")
    transcript.add_tool(ToolCallMade("calculate", {}, True, "1"))  # made by no noted reply
    assert [c.name for c in transcript.tools] == [
        "convert_units",
        "get_current_weather",
        "calculate",
    ]
    assert verdict(task, transcript.tools).success
