"""The suite the default is chosen on (`defaults-tuning`, `defaults-report`; issue 38, item 7).

Every task is passable: its ideal transcript (the calls a good agent makes and the answer it
gives, written out below) passes through the real runner, the example agent's real tools, the
offline weather fake and the judge; generic wrong answers to the same calls fail.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_scoping_lab.eval import EvalOptions, run_eval
from attention_scoping_lab.eval.cli import SUITE_NAMES
from attention_scoping_lab.eval.endpoint import Endpoint, chat_model
from attention_scoping_lab.eval.suites import SUITES
from attention_scoping_lab.eval.suites.example import (
    DEFAULTS_FILE,
    HELDOUT_FILE,
    TASKS_FILE,
    named_suite,
)
from attention_scoping_lab.eval.suites.offline_weather import offline_weather
from attention_scoping_lab.eval.tasks import KINDS, EvalTask, ToolCallMade, load_tasks, verdict
from tests.eval_support import NO_WAIT
from tests.openai_stub import OpenAIStub

Call = tuple[str, dict[str, Any]]
Turn = tuple[list[Call], str]


def calc(expression: str) -> Call:
    return ("calculate", {"expression": expression})


def convert(value: float, source: str, target: str) -> Call:
    return ("convert_units", {"value": value, "from_unit": source, "to_unit": target})


def now(city: str) -> Call:
    return ("get_current_weather", {"city": city})


def forecast(city: str, days: int) -> Call:
    return ("get_forecast", {"city": city, "days": days})


def term(text: str, language: str) -> Call:
    return ("glossary_lookup", {"term": text, "target_language": language})


def detect(text: str) -> Call:
    return ("detect_language", {"text": text})


def fmt(value: float, language: str) -> Call:
    return ("format_number", {"value": value, "language": language})


def stats(*numbers: float) -> Call:
    return ("summary_statistics", {"numbers": list(numbers)})


def info(language: str) -> Call:
    return ("language_info", {"language": language})


IDEAL: dict[str, list[Turn]] = {
    # -- one request that needs a tool
    "d-tool-percent-368": [([calc("0.125 * 368")], "12.5% of 368 is 46.")],
    "d-tool-fuel": [([calc("23.8 / 340 * 100")], "That's 7 litres per 100 km.")],
    "d-tool-average-six": [([stats(14, 9, 22, 17, 11, 25)], "The average is about 16.33.")],
    "d-tool-kg-lb": [([convert(68, "kg", "lb")], "68 kg is about 149.91 pounds.")],
    "d-tool-flight-miles": [([convert(2450, "mi", "km")], "2,450 miles is about 3,942.89 km.")],
    "d-tool-floz": [
        ([convert(750, "ml", "fl oz")], "A 750 ml bottle holds about 25.36 US fluid ounces.")
    ],
    "d-tool-detect-dutch": [
        ([detect("Ik heb vandaag geen tijd, misschien morgen")], "That's Dutch.")
    ],
    "d-tool-persian-direction": [
        ([info("Persian")], "Persian is written right-to-left, so mirror the layout.")
    ],
    "d-tool-glossary-checkout": [([term("checkout", "Dutch")], "Our glossary says 'Afrekenen'.")],
    "d-tool-format-spanish": [([fmt(9876543.21, "Spanish")], "In Spanish: 9.876.543,21")],
    "d-tool-glossary-privacy": [
        ([term("privacy policy", "Chinese")], "The approved Chinese wording is 隐私政策.")
    ],
    "d-tool-montreal-cold": [
        ([now("Montreal")], "A bit: it's 11 °C in Montreal right now, mainly clear.")
    ],
    "d-tool-edinburgh-4days": [
        (
            [forecast("Edinburgh", 4)],
            "Edinburgh: partly cloudy today (8 to 26 °C), overcast on Tuesday, then slight "
            "rain on Wednesday and moderate rain on Thursday.",
        )
    ],
    "d-tool-capetown-today": [([now("Cape Town")], "It's overcast and 8 °C in Cape Town.")],
    "d-tool-singapore-humidity": [([now("Singapore")], "Humidity in Singapore is 68 % right now.")],
    "d-tool-amsterdam-rain": [
        (
            [forecast("Amsterdam", 6)],
            "Yes, pack it: rain is likely most days, up to an 84 % chance on Saturday.",
        )
    ],
    # -- messages that need no tool
    "d-none-thanks-bye": [([], "You're welcome, have a great day!")],
    "d-none-thanks-after-weather": [([], "You're welcome! Enjoy Bergen.")],
    "d-none-greeting-help": [
        (
            [],
            "Hi! I can do calculations and unit conversions, help with translation details, "
            "and check the weather.",
        )
    ],
    "d-none-greeting-evening": [([], "Good evening! It did, thank you. How can I help?")],
    "d-none-recall-result": [([], "The result was 441.")],
    "d-none-recall-word": [([], "It was 'Warenkorb'.")],
    "d-none-wait-cities": [([], "Sure, I'll wait for your list.")],
    "d-none-wait-recipe": [([], "Got it, just send them when you're ready.")],
    "d-none-opinion-city-break": [
        ([], "Both are lovely; I'd pick Lisbon for its light, Barcelona if you want beaches.")
    ],
    "d-none-opinion-rounding": [
        ([], "Yes, 26 miles is fine for a blog post; say 26.2 if you want to be precise.")
    ],
    "d-none-chitchat-tip": [([], "Ha, they will! Enjoy your dinner.")],
    "d-none-chitchat-umbrella": [([], "Sounds like a plan, enjoy Rome!")],
    # -- a later turn needs another scope
    "d-switch-divide-prague": [
        ([calc("64 / 2.5")], "64 divided by 2.5 is 25.6."),
        ([now("Prague")], "Prague: clear sky and 15 °C right now."),
    ],
    "d-switch-kyoto-download": [
        (
            [forecast("Kyoto", 2)],
            "Kyoto: slight rain today (7 to 18 °C), moderate rain tomorrow (9 to 21 °C).",
        ),
        ([term("download", "Japanese")], "The approved term is ダウンロード."),
    ],
    "d-switch-polish-stone": [
        ([detect("Dzień dobry, jak się masz? Dawno się nie widzieliśmy.")], "That's Polish."),
        ([convert(12, "stone", "kg")], "12 stone is about 76.2 kg."),
    ],
    "d-switch-munich-fahrenheit": [
        ([now("Munich")], "It's 22 °C and partly cloudy in Munich."),
        ([convert(22, "C", "F")], "22 °C is 71.6 °F."),
    ],
    "d-switch-feet-german": [
        ([convert(8200, "ft", "m")], "8,200 feet is 2,499.36 metres."),
        ([fmt(2499.36, "German")], "A German reader writes 2.499,36."),
    ],
    "d-switch-subscription-discount": [
        ([term("subscription", "Italian")], "It's 'abbonamento'."),
        ([calc("1499 * 0.85")], "1499 minus 15% is 1274.15."),
    ],
    "d-switch-copenhagen-swedish": [
        ([now("Copenhagen")], "Fairly windy: 25 km/h from the west-northwest."),
        ([fmt(1250000.75, "Swedish")], "Swedes write 1 250 000,75."),
    ],
    "d-switch-stdev-marrakesh": [
        (
            [stats(4, 8, 15, 16, 23, 42)],
            "The sample standard deviation is about 13.49 (population: 12.32).",
        ),
        (
            [forecast("Marrakesh", 3)],
            "Marrakesh: overcast today, 5 to 17 °C, then slight and moderate rain, up to 23 °C.",
        ),
    ],
    "d-switch-italian-florence": [
        ([detect("Questo è il mio ultimo giorno di lavoro prima delle vacanze.")], "It's Italian."),
        ([now("Florence")], "Florence: partly cloudy, 22 °C."),
    ],
    "d-switch-run-account": [
        ([convert(10, "mi", "km")], "A 10-mile run is about 16.09 km."),
        ([term("account", "Portuguese")], "Our glossary says 'conta'."),
    ],
    # -- two tools in one request
    "d-two-tip-km": [
        (
            [calc("0.18 * 240"), convert(240, "km", "mi")],
            "18% of 240 is 43.2, and 240 km is about 149.13 miles.",
        )
    ],
    "d-two-boston-now-and-3days": [
        (
            [now("Boston"), forecast("Boston", 3)],
            "Boston now: mainly clear, 26 °C. Next 3 days: partly cloudy, overcast, then "
            "slight rain, highs up to 29 °C.",
        )
    ],
    "d-two-detect-then-glossary": [
        (
            [detect("Bedankt voor je hulp, tot morgen!"), term("password", "nl")],
            "That's Dutch; our glossary term for 'password' is 'wachtwoord'.",
        )
    ],
    "d-two-25c-seville": [
        (
            [convert(25, "C", "F"), now("Seville")],
            "25 °C is 77 °F, and it's 19 °C in Seville right now.",
        )
    ],
    "d-two-refund-vat": [
        (
            [term("refund", "Spanish"), calc("0.12 * 89.90")],
            "'Refund' is 'reembolso' in Spanish, and 12% of 89.90 is 10.79.",
        )
    ],
    "d-two-buenosaires-signout": [
        (
            [now("Buenos Aires"), term("sign out", "es")],
            "Buenos Aires: partly cloudy, 27 °C. 'Sign out' in Spanish is 'Cerrar sesión'.",
        )
    ],
    "d-two-median-gallons": [
        (
            [stats(13, 29, 4, 18, 7), convert(3, "gal", "l")],
            "The median is 13, and 3 gallons are about 11.36 litres.",
        )
    ],
    "d-two-german-number-quotes": [
        (
            [fmt(45000.5, "de"), info("de")],
            "Germans write 45.000,5 and use „…“ quotation marks.",
        )
    ],
    "d-two-zurich-days": [
        (
            [forecast("Zurich", 2), calc("7 * 365")],
            "Zurich: overcast today (11 to 17 °C), slight rain tomorrow (5 to 20 °C). "
            "And 7 × 365 = 2555.",
        )
    ],
    "d-two-french-marseille": [
        (
            [detect("Bonjour à tous, merci d'être venus ce soir"), now("Marseille")],
            "It's French; Marseille is partly cloudy at 22 °C.",
        )
    ],
}

ALL = load_tasks(DEFAULTS_FILE)
HALVES = {name: named_suite(name) for name in ("defaults-tuning", "defaults-report")}


@pytest.fixture
def offline() -> Iterator[None]:
    with offline_weather():
        yield


def test_the_suite_has_every_kind_the_choice_needs() -> None:
    kinds = Counter(t.kind for t in ALL)
    assert len(ALL) >= 40 and set(kinds) == set(KINDS)
    assert kinds["no-tool"] >= 10 and kinds["switch"] >= 8 and kinds["two-tools"] >= 6
    assert {"defaults-tuning", "defaults-report"} <= set(SUITES)
    assert SUITE_NAMES == SUITES  # the command line offers every suite
    for task in ALL:
        shape = EvalTask(task.id, task.turns, task.expect).kind  # kind read from the shape
        assert task.kind == shape, task.id
    two = [t for t in ALL if t.kind == "two-tools"]
    assert all(len(t.turns) == 1 and len(t.expect) == 2 for t in two)


def test_the_halves_are_fixed_disjoint_and_stratified_by_kind() -> None:
    tuning, report = (HALVES[n].tasks for n in ("defaults-tuning", "defaults-report"))
    assert {t.split for t in ALL} == {"tuning", "report"}
    assert not {t.id for t in tuning} & {t.id for t in report}
    assert len(tuning) + len(report) == len(ALL)
    by_kind = [Counter(t.kind for t in half) for half in (tuning, report)]
    for kind in KINDS:
        assert abs(by_kind[0][kind] - by_kind[1][kind]) <= 1, kind
    assert [HALVES[n].name for n in HALVES] == ["defaults-tuning", "defaults-report"]


def test_a_switch_needs_another_scope_in_its_later_turn() -> None:
    suite = HALVES["defaults-tuning"]
    scope_of = {tool: s.name for s in suite.scopes or [] for tool in s.tools}
    switches = [t for t in ALL if t.kind == "switch"]
    for task in switches:
        assert len(task.turns) == 2 and len(task.expect) == 2, task.id
        first, second = (scope_of[e.tools[0]] for e in task.expect)
        assert first != second, task.id
    pairs = {tuple(scope_of[e.tools[0]] for e in t.expect) for t in switches}
    assert len(pairs) == 6  # every ordered pair of the three scopes


def test_the_tasks_are_new_and_name_only_the_agents_tools() -> None:
    names = set(HALVES["defaults-tuning"].tool_names())
    older = [*load_tasks(TASKS_FILE), *load_tasks(HELDOUT_FILE)]
    assert not {t.id for t in ALL} & {t.id for t in older}
    older_turns = {turn.casefold() for t in older for turn in t.turns}
    assert not {turn.casefold() for t in ALL for turn in t.turns} & older_turns
    for task in ALL:
        assert all(set(e.tools) <= names for e in task.expect), task.id
    assert set(IDEAL) == {t.id for t in ALL}


def _script(tasks: list[EvalTask]) -> list[dict[str, Any]]:
    """The ideal replies of `tasks`, in the order the runner asks for them."""
    replies: list[dict[str, Any]] = []
    for task in tasks:
        for calls, answer in IDEAL[task.id]:
            if calls:
                replies.append(
                    {"tool_calls": [{"name": name, "arguments": args} for name, args in calls]}
                )
            replies.append({"content": answer})
    return replies


@pytest.mark.parametrize("name", ["defaults-tuning", "defaults-report"])
def test_every_task_passes_with_its_ideal_transcript(name: str) -> None:
    """The ideal calls and answers, played by the scripted model through the runner (real
    tools, offline weather, turns stamped), pass the judge: every task can be passed."""
    suite = HALVES[name]
    with OpenAIStub(_script(list(suite.tasks))) as stub:
        endpoint = Endpoint(stub.base_url, "k", None, 30.0)
        result = run_eval(
            suite,
            ["eager"],
            chat_model(endpoint, "ideal"),
            EvalOptions(model_name="ideal", retry=NO_WAIT),
        )
    failed = {r.task: r.failures or r.error for r in result.results if not r.success}
    assert failed == {}
    assert len(result.results) == len(suite.tasks)
    [row] = result.by_strategy()
    assert row.success == 1.0 and row.tasks_by_kind == {
        "tool": 8,
        "no-tool": 6,
        "switch": 5,
        "two-tools": 5,
    }


def _ran(task: EvalTask) -> list[ToolCallMade]:
    tools = {t.name: t for t in HALVES["defaults-tuning"].tools}
    calls = []
    for turn, (made, _) in enumerate(IDEAL[task.id]):
        for name, args in made:
            result = str(tools[name].invoke(args))
            calls.append(ToolCallMade(name, args, True, result, turn))
    return calls


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("task", ALL, ids=lambda t: t.id)
def test_wrong_answers_fail(task: EvalTask) -> None:
    """The ideal passes; with the same calls, an answer that gives nothing, one that adds a
    number no tool returned, or a tool called for a message that needs none, fails."""
    calls = _ran(task)
    ideal = [answer for _, answer in IDEAL[task.id]]
    assert verdict(task, calls, ideal).success
    if task.needs_tool:
        vague = ["Done, I looked that up for you."] * len(ideal)
        assert not verdict(task, calls, vague).success
        padded = [f"{answer} (By my own estimate: 9,876.5.)" for answer in ideal]
        found = verdict(task, calls, padded)
        assert not found.success and "9,876.5" in found.failures[0]
    else:
        weather = ToolCallMade("get_current_weather", {"city": "Paris"}, True, "18 °C", 0)
        assert not verdict(task, [weather], ideal).success
        assert not verdict(task, [], ideal, requested=["get_forecast"]).success
        assert not verdict(task, [], ['get_current_weather(city="Paris")']).success
    assert not verdict(task, calls, [""] * len(ideal)).success


@pytest.mark.usefixtures("no_model_keys")
def test_the_cli_runs_one_half_and_splits_its_success_by_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from attention_scoping_lab.cli import main

    monkeypatch.chdir(tmp_path)
    wanted = ["d-none-greeting-evening", "d-tool-fuel"]
    script = _script([t for t in HALVES["defaults-report"].tasks if t.id in wanted])
    with OpenAIStub(script) as stub:
        argv = ["eval", "--suite", "defaults-report", "--task", ",".join(wanted), "--quiet"]
        argv += ["--base-url", stub.base_url, "--model", "stub", "--strategies", "eager"]
        assert main([*argv, "--json", "e.json"]) == 0
    printed = capsys.readouterr().out
    assert "suite defaults-report" in printed and "success by kind of task" in printed
    assert "100 % (1/1)" in printed
    assert (tmp_path / ".attention-scoping/eval/defaults-report-stub.jsonl").exists()
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["strategies"][0]["tasks_by_kind"] == {"tool": 1, "no-tool": 1}
    # A task of the other half is not in this one.
    assert main(["eval", "--suite", "defaults-tuning", "--task", "d-tool-fuel", "--no-check",
                 "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 2  # fmt: skip
    assert "suite 'defaults-tuning' has no task 'd-tool-fuel'" in capsys.readouterr().err
