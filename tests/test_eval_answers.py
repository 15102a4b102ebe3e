"""The judge reads each turn's answer against what the tools returned (issue 38, item 7).

Each transcript below is what a small model really does: the right tool, then an answer that
never gives the result, contradicts it, states another city's weather, invents a value after the
tool failed, or writes the call as code instead of answering. The tool results are the real
tools' (weather through the offline fake); the judge before this change passed every one of the
unusable answers here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_scoping_lab.eval.answers import (
    Fact,
    TemplateError,
    code_call,
    compile_template,
    required_facts,
    result_value,
    unaccounted_numbers,
)
from attention_scoping_lab.eval.suites import example_suite
from attention_scoping_lab.eval.suites.example import HELDOUT_FILE
from attention_scoping_lab.eval.suites.offline_weather import offline_weather
from attention_scoping_lab.eval.tasks import (
    EvalTask,
    Expect,
    TaskFileError,
    ToolCallMade,
    load_tasks,
    verdict,
)

TASKS = {t.id: t for t in [*example_suite().tasks, *load_tasks(HELDOUT_FILE)]}
TOOLS = {t.name: t for t in example_suite().tools}


@pytest.fixture(autouse=True)
def _offline() -> Iterator[None]:
    with offline_weather():
        yield


def ran(name: str, turn: int | None = None, **args: Any) -> ToolCallMade:
    """A call of the example agent's real tool `name`, with what it returned."""
    result = TOOLS[name].invoke(args)
    ok = not result.startswith(("cannot evaluate", "days must be", "no place named"))
    return ToolCallMade(name, args, ok, str(result), turn)


def failures(task: EvalTask, calls: list[ToolCallMade], answers: list[str]) -> tuple[str, ...]:
    return verdict(task, calls, answers).failures


# -- unusable answers the old judge passed ------------------------------------------------------


def test_an_answer_that_contradicts_the_result_fails() -> None:
    """The model called `calculate`, got 3901, and "double-checked" it into 3,801."""
    task = TASKS["math-multiply"]
    calls = [ran("calculate", expression="47*83")]
    good = "47 × 83 = 3,901."
    assert failures(task, calls, [good]) == ()
    bad = "47 × 83 = 3,901. Double-checking by hand: 47 × 83 = 3,801."
    assert failures(task, calls, [bad]) == (
        "turn 1: states 3,801, which no tool returned and no message gave",
    )
    by_hand = "47 × 83 = 3,901. Check: 47 × 80 = 3,760 and 47 × 3 = 141, so 3,801."
    assert "states 80, 3,760, 141, 3,801" in failures(task, calls, [by_hand])[0]


def test_an_answer_that_never_gives_the_result_fails() -> None:
    """`math-stdev` and `wx-rain-berlin` asked for no answer snippet: "I checked" passed."""
    stdev = TASKS["math-stdev"]
    stats = [ran("summary_statistics", numbers=[2, 4, 4, 4, 5, 5, 7, 9])]
    assert failures(stdev, stats, ["The population standard deviation is 2."]) == ()
    assert failures(stdev, stats, ["The sample standard deviation is about 2.14."]) == ()
    assert "does not give" in failures(stdev, stats, ["I computed the statistics for you."])[0]
    rain = TASKS["wx-rain-berlin"]
    forecast = [ran("get_forecast", city="Berlin", days=3)]
    day_one = forecast[0].result.splitlines()[1]  # "2026-06-01 Mon: <conditions>, ..."
    conditions = day_one.split(": ", 1)[1].split(",")[0]
    assert failures(rain, forecast, [f"Berlin: {conditions.lower()} today."]) == ()
    lazy = failures(rain, forecast, ["I have checked the forecast for Berlin for you."])
    assert lazy and "does not give" in lazy[0]


def test_an_answer_that_invents_numbers_beside_the_result_fails() -> None:
    """A 5-day forecast "summarised" with temperatures the tool never returned."""
    task = TASKS["wx-forecast-oslo"]
    calls = [ran("get_forecast", city="Oslo", days=5)]
    highs = [line.split(" to ")[1].split(" °C")[0] for line in calls[0].result.splitlines()[1:]]
    faithful = f"Oslo, next 5 days: highs between {min(highs)} and {max(highs)} °C."
    assert failures(task, calls, [faithful]) == ()
    invented = f"Oslo, next 5 days: highs of {max(highs)} °C, and 31 °C on the weekend."
    assert "states 31" in failures(task, calls, [invented])[0]


def test_a_converted_temperature_the_model_computed_itself_is_not_a_tool_result() -> None:
    """The agent's prompt: numbers come from tools. "22 °C (71.6 °F)" says more than 72 %."""
    task = TASKS["wx-current-lisbon"]
    calls = [ran("get_current_weather", city="Lisbon")]
    assert "temperature: 22 °C" in calls[0].result and "humidity: 72 %" in calls[0].result
    assert failures(task, calls, ["Lisbon: 22 °C, partly cloudy, humidity 72 %."]) == ()
    found = failures(task, calls, ["Lisbon: 22 °C (71.6 °F), partly cloudy."])
    assert found and "71.6" in found[0]


def test_another_citys_weather_fails_the_turn_that_asked() -> None:
    """Turn two asks for Lisbon; the model repeats Madrid's reading from turn one."""
    task = EvalTask(
        "two-cities",
        ("What's the weather in Madrid right now?", "And in Lisbon?"),
        (
            Expect(("get_current_weather",), mentions=("Madrid",), gives=(("temperature: {}",),)),
            Expect(("get_current_weather",), mentions=("Lisbon",), gives=(("temperature: {}",),)),
        ),
        answer_contains=("Madrid", "Lisbon"),
    )
    calls = [
        ran("get_current_weather", 0, city="Madrid"),
        ran("get_current_weather", 1, city="Lisbon"),
    ]
    madrid = calls[0].result.split("temperature: ")[1].split(" ")[0]
    lisbon = calls[1].result.split("temperature: ")[1].split(" ")[0]
    assert madrid != lisbon
    first = f"It is {madrid} °C in Madrid."
    assert failures(task, calls, [first, f"It is {lisbon} °C in Lisbon."]) == ()
    found = failures(task, calls, [first, f"In Lisbon it is {madrid} °C as well."])
    source = "temperature: {}, from get_current_weather"
    assert found == (f"turn 2: the answer does not give '{lisbon}' ({source})",)


def test_a_turn_must_give_its_own_result_not_a_later_one() -> None:
    """Answers checked per turn: the glossary term arriving only in turn two's answer is a turn
    one that told the user nothing (the old judge read all answers together)."""
    task = TASKS["switch-glossary-vat"]
    calls = [
        ran("glossary_lookup", 0, term="sign in", target_language="German"),
        ran("calculate", 1, expression="1499 * 0.19"),
    ]
    good = ["The approved German term is 'Anmelden'.", "19 % of 1499 is 284.81."]
    assert failures(task, calls, good) == ()
    lagged = ["I looked it up in the glossary.", "It is 'Anmelden'; and 19 % of 1499 is 284.81."]
    assert failures(task, calls, lagged) == (
        "turn 1: the answer does not give 'Anmelden' (the result, from glossary_lookup)",
    )


def test_a_value_made_up_after_the_tool_failed_fails() -> None:
    """The forecast tool refused 20 days; an honest answer says so, an invented one fails."""
    task = EvalTask(
        "rome-20",
        ("What's the forecast for Rome for the next 20 days?",),
        (Expect(("get_forecast",), mentions=("Rome",), fails=True),),
    )
    calls = [ran("get_forecast", city="Rome", days=20)]
    assert not calls[0].ok and "between 1 and 16" in calls[0].result
    honest = "I can only forecast up to 16 days ahead; shall I get the 16-day forecast for Rome?"
    assert failures(task, calls, [honest]) == ()
    invented = "Rome will be sunny for the next 20 days, around 27 °C."
    assert failures(task, calls, [invented]) == ("turn 1: states 27 though its tool call failed",)
    # A task that needs the call to succeed is not met by the refusal.
    assert "not all made" in failures(TASKS["wx-forecast-oslo"], calls, [honest])[0]


def test_a_call_written_as_code_is_no_answer() -> None:
    """ "Thanks, ..." drew `get_current_weather("Paris")`: as a real call it fails the task; as
    code in the answer it is no answer either."""
    thanks = EvalTask("thanks", ("Thanks, have a nice evening!",), ())
    assert failures(thanks, [], ["You too, have a lovely evening!"]) == ()
    for written in (
        'get_current_weather("Paris")',
        '```python\nget_current_weather(city="Paris")\n```',
        "Sure! Let me check the weather for you: get_current_weather(city='Paris')",
    ):
        found = failures(thanks, [], [written])
        assert found and "an unanswered call written as code" in found[0], written


# -- usable answers still pass -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "call", "answer"),
    [
        ("ho-math-tip", ("calculate", {"expression": "86.40 * 0.18"}), "An 18% tip is €15.55."),
        ("math-fahrenheit", ("convert_units", {"value": 100, "from_unit": "F", "to_unit": "C"}),
         "100 °F is about 38 °C (37.78 °C)."),
        ("math-miles", ("convert_units", {"value": 5, "from_unit": "mi", "to_unit": "km"}),
         "5 miles is 8.05 km (8.04672 km)."),
        ("ho-tr-format-french", ("format_number", {"value": 2500000.5, "language": "fr"}),
         "A French reader writes 2 500 000,5."),
        ("ho-tr-arabic-direction", ("language_info", {"language": "Arabic"}),
         "Arabic is written right to left."),
        ("tr-detect-french", ("detect_language", {"text": "Où est la gare, s'il vous plaît ?"}),
         "That's French."),
        ("ho-tr-glossary-cart",
         ("glossary_lookup", {"term": "shopping cart", "target_language": "es"}),
         "Our glossary says «carrito»."),
        ("ho-wx-reykjavik-wind", ("get_current_weather", {"city": "Reykjavik"}), None),
    ],
)  # fmt: skip
def test_faithful_answers_pass_however_they_are_worded(
    task_id: str, call: tuple[str, dict[str, Any]], answer: str | None
) -> None:
    made = ran(call[0], **call[1])
    if answer is None:  # read the wind off the result, as the model does
        wind = made.result.split("wind: ")[1].split(" km/h")[0]
        answer = f"Yes, fairly: wind at {wind} km/h in Reykjavik right now."
    assert failures(TASKS[task_id], [made], [answer]) == ()


def test_numbers_from_the_conversation_and_small_counts_are_not_invented() -> None:
    task = TASKS["ho-math-split"]
    calls = [ran("calculate", expression="237.60 / 4")]
    answer = "Split 4 ways, 237.60 is 59.40 each, so 1 share is 59.4."
    assert failures(task, calls, [answer]) == ()


# -- the pieces --------------------------------------------------------------------------------


def test_templates_read_numbers_then_text_and_skip_within_a_line() -> None:
    weather = (
        "Oslo, Norway (1.00°N, 2.00°E)\nconditions: Overcast\ntemperature: 12 °C (feels like 11 °C)"
    )
    assert [
        f.number and f.number.value for f in compile_template("temperature: {}").values(weather)
    ] == [12]
    assert [f.text for f in compile_template("conditions: {}").values(weather)] == ["Overcast"]
    detected = "language: nl (Dutch)\nconfidence: 0.90"
    assert [f.text for f in compile_template("language: ... ({})").values(detected)] == ["Dutch"]
    days = "2026-06-01 Mon: Clear sky, 5 to 15 °C\n2026-06-02 Tue: Overcast, 7 to 18 °C"
    assert [f.text for f in compile_template(": {}, ").values(days)] == ["Clear sky", "Overcast"]
    assert [f.text for f in compile_template("Tue: {},").values(days)] == ["Overcast"]
    assert compile_template("humidity: {}").values(weather) == []
    for bad in ("temperature", "{} to {}"):
        with pytest.raises(TemplateError, match="exactly one"):
            compile_template(bad)


def test_a_one_line_result_gives_its_value() -> None:
    assert [f.text for f in result_value("3901")] == ["3901"]
    assert [f.text for f in result_value("5 mi = 8.04672 km")] == ["8.04672"]
    assert [f.text for f in result_value("sign in -> Dutch: Inloggen [note: button label]")] == [
        "Inloggen"
    ]
    assert [f.text for f in result_value("1.234.567,89")] == ["1.234.567,89"]
    assert result_value("'x' is not in the glossary, so there is no approved translation.") == []
    assert result_value("count: 3\nmean: 2") == []
    stats = "count: 3\nmean: 16\nmedian: 15"
    [either] = required_facts((("mean: {}", "{}"),), stats)  # stats or a bare calculate result
    assert [f.text for f in either.values] == ["16"]
    [bare] = required_facts((("mean: {}", "{}"),), "16")
    assert [f.text for f in bare.values] == ["16"]
    assert required_facts((), stats) == []  # "gives": [] asks for nothing


def test_facts_match_as_numbers_or_normalised_text() -> None:
    assert Fact("15.552", result_value("15.552")[0].number).given_in("a tip of 15.55")
    assert not Fact("3901", result_value("3901")[0].number).given_in("3,801")
    assert Fact("right-to-left").given_in("Arabic runs Right to Left.")
    assert Fact("2\u202f500\u202f000,5").given_in("2 500 000,5")
    assert Fact("パスワード").given_in("承認された訳語はパスワードです")
    assert not Fact("Iniciar sesión").given_in("Iniciar sesion")  # accents are the term
    assert not Fact("fr").given_in("from the glossary")


def test_numbers_count_as_said_when_a_source_rounds_to_them() -> None:
    sources = ["What is 15% of 240?", '{"expression": "0.15*240"}', "36", "37.7777777777778"]
    assert unaccounted_numbers("15 % of 240 is 36, about 38 and 37.78.", sources) == []
    assert unaccounted_numbers("It is 3 600, or 0.15 of 240.", sources) == ["3 600"]
    assert unaccounted_numbers("It is 37.8, not 37.9.", sources) == ["37.9"]
    assert unaccounted_numbers("Day 2 of 3, step 10.", []) == []  # counts are free
    assert unaccounted_numbers("about 1 million", ["1036800"]) == ["1 million"]
    flight = ["2450 mi = 3942.8928 km"]
    assert unaccounted_numbers("about 3,900 km, or 3,943 km", flight) == []  # round numbers
    assert unaccounted_numbers("about 3,800 km", flight) == ["3,800"]
    assert unaccounted_numbers("3,901 km", flight) == ["3,901"]
    assert unaccounted_numbers("about 4,000 km", flight) == []  # 1.4 % off: a rounding
    assert unaccounted_numbers("about 4,100 km", flight) == ["4,100"]  # 4 % off
    assert unaccounted_numbers("minus 3 degrees", ["-3 °C"]) == []


def test_the_tools_work_shown_in_one_step_is_not_invented() -> None:
    work = ['{"expression": "sqrt(144) + 2**10"}']
    said = "√144 + 2^10 = 12 + 1024 = 1036"
    assert unaccounted_numbers(said, ["1036", "sqrt(144) + 2**10"], work) == []
    assert unaccounted_numbers(said, ["1036", "sqrt(144) + 2**10"]) == ["12", "1024"]
    product = ['{"expression": "47*83"}']
    assert unaccounted_numbers("47 × 83 = 3,801", [*product, "3901"], product) == ["3,801"]
    task = TASKS["math-expression"]
    [call] = [ran("calculate", expression="sqrt(144) + 2**10")]
    assert failures(task, [call], [said + "."]) == ()


def test_code_calls_are_found_only_where_they_are_the_answer() -> None:
    assert code_call('get_forecast(city="Oslo", days=3)') == 'get_forecast(city="Oslo", days=3)'
    assert code_call("I will call load_context('weather') now.") == "load_context('weather')"
    long_prose = (
        "summary_statistics([1, 2, 3]) gave a mean of 2 and a median of 2, so the numbers are "
        "spread evenly around their centre."
    )
    assert code_call(long_prose) is None
    assert code_call("sqrt(144) + 2**10 = 1036") is None  # no tool-like name


# -- the task format ---------------------------------------------------------------------------


def test_task_files_express_gives_fails_kind_split_and_any_order(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    raw = {
        "id": "two",
        "turns": ["Convert 3 gallons to litres and give me the median of 3, 9, 4."],
        "expect": [
            {"tool": "convert_units", "result_contains": "11.356"},
            {"tool": "summary_statistics", "gives": ["median: {}", ["mean: {}", "{}"]]},
        ],
        "kind": "two-tools",
        "split": "report",
        "any_order": True,
    }
    path.write_text(json.dumps({"tasks": [raw, {"id": "e", "turns": ["x"], "expect": [
        {"tool": "calculate", "fails": True, "gives": []}]}]}))  # fmt: skip
    task, failing = load_tasks(path)
    assert task.kind == "two-tools" and task.split == "report" and task.any_order
    assert task.expect[0].gives is None
    assert task.expect[1].gives == (("median: {}",), ("mean: {}", "{}"))
    assert failing.expect[0].fails and failing.expect[0].gives == () and failing.kind == "tool"
    median = ran("summary_statistics", numbers=[3, 9, 4])
    gallons = ran("convert_units", value=3, from_unit="gal", to_unit="l")
    answer = ["Median 4 (mean 5.33); 3 gallons are 11.356 litres."]
    assert verdict(task, [median, gallons], answer).success  # any order
    in_order = EvalTask(task.id, task.turns, task.expect)
    assert not verdict(in_order, [median, gallons], answer).success


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ({"tool": "x", "gives": "temperature: {}"}, "expected a list of templates"),
        ({"tool": "x", "gives": ["temperature"]}, "needs exactly one {}"),
        ({"tool": "x", "gives": [[]]}, "an empty list of templates"),
        ({"tool": "x", "fails": "yes"}, "'fails' must be true or false"),
    ],
)
def test_bad_gives_and_fails_name_the_problem(
    tmp_path: Path, expect: dict[str, Any], message: str
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{"id": "a", "turns": ["q"], "expect": [expect]}]}))
    with pytest.raises(TaskFileError, match=r"tasks\.json 'a'\.expect\[0\]") as info:
        load_tasks(path)
    assert message in str(info.value)


def test_an_unknown_kind_names_the_valid_ones(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "a", "turns": ["q"], "expect": [], "kind": "chat"}]))
    with pytest.raises(TaskFileError, match="unknown kind 'chat'; choose from tool, no-tool"):
        load_tasks(path)


def test_kinds_are_read_from_the_task_shape() -> None:
    kinds = {t.id: t.kind for t in TASKS.values()}
    assert kinds["math-multiply"] == "tool"
    assert kinds["ho-none-thanks"] == "no-tool"
    assert kinds["switch-multiply-format"] == "switch"
    assert kinds["switch-one-turn"] == "two-tools"  # two tools in one request
