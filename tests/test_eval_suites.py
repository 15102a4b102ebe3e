"""Eval task files, the outcome check, and the shipped suites (no model involved)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attention_scoping_lab.eval import (
    EvalTask,
    Expect,
    TaskFileError,
    ToolCallMade,
    judge,
    load_tasks,
    verdict,
)
from attention_scoping_lab.eval.suites import catalog_suite, example_suite, simulated_suite
from attention_scoping_lab.eval.suites.offline_weather import offline_weather


def made(name: str, ok: bool = True, result: str = "", **args: object) -> ToolCallMade:
    return ToolCallMade(name, args, ok, result)


TWO_STEP = EvalTask(
    "t",
    ("q",),
    (
        Expect(("calculate",), result_contains=("5000",)),
        Expect(("format_number",), args={"value": 5000}, mentions=("fr",)),
    ),
)


def test_judge_needs_every_expectation_in_order() -> None:
    calc = made("calculate", result="5000", expression="1250*4")
    fmt = made("format_number", result="5 000", value=5000.0, language="French")
    assert judge(TWO_STEP, [calc, fmt])
    assert judge(TWO_STEP, [made("language_info", language="fr"), calc, calc, fmt])
    assert not judge(TWO_STEP, [fmt, calc])
    assert not judge(TWO_STEP, [calc])


def test_judge_rejects_failed_calls_wrong_values_and_results() -> None:
    fmt = made("format_number", result="5 000", value=5000, language="fr")
    assert not judge(TWO_STEP, [made("calculate", ok=False, result="5000"), fmt])
    assert not judge(TWO_STEP, [made("calculate", result="4999"), fmt])
    assert not judge(
        TWO_STEP,
        [made("calculate", result="5000"), made("format_number", value=500, language="fr")],
    )
    assert not judge(
        TWO_STEP,
        [made("calculate", result="5000"), made("format_number", value=5000, language="de")],
    )


def test_single_call_tasks_are_judged_on_the_first_call() -> None:
    task = EvalTask("q", ("q",), (Expect(("a", "b")),), single_call=True)
    assert judge(task, [made("b", ok=False)])
    assert not judge(task, [made("c"), made("a")])
    assert not judge(task, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"tasks": {}}', 'expected {"tasks": [...]}'),
        ('{"tasks": [{"turns": ["hi"], "expect": [{"tool": "x"}]}]}', "string 'id'"),
        ('{"tasks": [{"id": "a", "turns": [], "expect": [{"tool": "x"}]}]}', "at least one user"),
        ('{"tasks": [{"id": "a", "turns": ["hi"]}]}', "([] for a task that needs no tool)"),
        (
            '{"tasks": [{"id": "a", "turns": ["hi"], "expect": [], "single_call": true}]}',
            "single_call task needs an expected tool",
        ),
        (
            '{"tasks": [{"id": "a", "turns": ["hi"], "expect": [], "history": [{"role": "x"}]}]}',
            "needs 'role' (user or assistant)",
        ),
        ('{"tasks": [{"id": "a", "turns": ["hi"], "expect": [{"args": {}}]}]}', "needs a 'tool'"),
        (
            '{"tasks": [{"id": "a", "turns": ["hi"], "expect": [{"tool": "x"}]},'
            ' {"id": "a", "turns": ["hi"], "expect": [{"tool": "x"}]}]}',
            "duplicate task id 'a'",
        ),
    ],
)
def test_bad_task_files_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(content)
    with pytest.raises(TaskFileError, match=r"tasks\.json") as info:
        load_tasks(path)
    assert message in str(info.value)


def test_example_suite_has_scopes_switches_and_only_known_tools() -> None:
    suite = example_suite()
    names = set(suite.tool_names())
    assert len(suite.tasks) >= 20 and suite.scopes is not None
    assert {s.name for s in suite.scopes} == {"math", "translation", "weather"}
    assert sum("switch" in t.tags for t in suite.tasks) >= 5
    assert any(len(t.turns) > 1 for t in suite.tasks)
    for task in suite.tasks:
        assert all(set(e.tools) <= names for e in task.expect), task.id


Step = tuple[str, dict[str, Any]]
EXAMPLE_IDEAL: dict[str, list[tuple[list[Step], str]]] = {
    "math-multiply": [([("calculate", {"expression": "47*83"})], "47 × 83 = 3,901.")],
    "math-expression": [
        ([("calculate", {"expression": "sqrt(144) + 2**10"})], "√144 + 2^10 = 12 + 1024 = 1036.")
    ],
    "math-percent": [([("calculate", {"expression": "0.15 * 240"})], "15% of 240 is 36.")],
    "math-mean-median": [
        ([("summary_statistics", {"numbers": [3, 5, 7, 9, 11]})], "Mean 7, median 7.")
    ],
    "math-stdev": [
        (
            [("summary_statistics", {"numbers": [2, 4, 4, 4, 5, 5, 7, 9]})],
            "The population standard deviation is 2 (sample: about 2.14).",
        )
    ],
    "math-miles": [
        ([("convert_units", {"value": 5, "from_unit": "mi", "to_unit": "km"})], "8.04672 km.")
    ],
    "math-fahrenheit": [
        ([("convert_units", {"value": 100, "from_unit": "F", "to_unit": "C"})], "About 37.78 °C.")
    ],
    "math-pounds": [
        ([("convert_units", {"value": 3.5, "from_unit": "lb", "to_unit": "g"})], "1587.57 g.")
    ],
    "tr-detect-french": [
        ([("detect_language", {"text": "Où est la gare, s'il vous plaît ?"})], "It's French.")
    ],
    "tr-german-separator": [
        ([("language_info", {"language": "German"})], "German uses a comma as decimal separator.")
    ],
    "tr-format-german": [
        (
            [("format_number", {"value": 1234567.891, "language": "German", "decimals": 2})],
            "1.234.567,89",
        )
    ],
    "tr-glossary-invoice": [
        ([("glossary_lookup", {"term": "invoice", "target_language": "fr"})], "« facture »")
    ],
    "tr-detect-german": [
        (
            [
                (
                    "detect_language",
                    {"text": "Das ist ein sehr schönes Haus und wir wohnen gern hier."},
                )
            ],
            "That is German.",
        )
    ],
    "tr-glossary-password": [
        ([("glossary_lookup", {"term": "password", "target_language": "ja"})], "パスワード です。")
    ],
    "wx-current-lisbon": [
        ([("get_current_weather", {"city": "Lisbon"})], "Lisbon: partly cloudy, 22 °C.")
    ],
    "wx-forecast-oslo": [
        (
            [("get_forecast", {"city": "Oslo", "days": 5})],
            "Oslo: clear sky Monday, then cloud and rain; highs from 17 to 29 °C.",
        )
    ],
    "wx-rain-berlin": [
        (
            [("get_forecast", {"city": "Berlin", "days": 3})],
            "Yes: moderate rain today in Berlin (4 mm), and up to a 41 % chance on Wednesday.",
        )
    ],
    "wx-current-nairobi": [([("get_current_weather", {"city": "Nairobi"})], "11 °C in Nairobi.")],
    "switch-multiply-format": [
        ([("calculate", {"expression": "1250*4"})], "5000."),
        ([("format_number", {"value": 5000, "language": "fr"})], "In French: 5 000."),
    ],
    "switch-weather-convert": [
        ([("get_current_weather", {"city": "Madrid"})], "Madrid: 7 °C, partly cloudy."),
        ([("convert_units", {"value": 30, "from_unit": "C", "to_unit": "F"})], "30 °C = 86 °F."),
    ],
    "switch-detect-forecast": [
        ([("detect_language", {"text": "Dove si trova la stazione dei treni?"})], "Italian."),
        (
            [("get_forecast", {"city": "Rome", "days": 2})],
            "Rome: clear sky today (11 to 20 °C), partly cloudy tomorrow.",
        ),
    ],
    "switch-one-turn": [
        (
            [
                ("convert_units", {"value": 10, "from_unit": "km", "to_unit": "mi"}),
                ("get_current_weather", {"city": "Dublin"}),
            ],
            "10 km is 6.21 miles; Dublin has slight rain at 19 °C.",
        )
    ],
    "switch-glossary-vat": [
        ([("glossary_lookup", {"term": "sign in", "target_language": "de"})], "Anmelden."),
        ([("calculate", {"expression": "1499 * 0.19"})], "284.81."),
    ],
    "switch-forecast-mean": [
        (
            [("get_forecast", {"city": "Vienna", "days": 3})],
            "Vienna: clear sky, then partly cloudy and overcast; 10 to 28 °C.",
        ),
        ([("summary_statistics", {"numbers": [12, 15, 21]})], "The average is 16."),
    ],
}


def test_every_example_task_passes_with_a_natural_answer_and_fails_with_a_vague_one() -> None:
    """Each task of the tuning half is solvable under the judge that reads the answers: its
    gold calls, really run, and a short natural answer pass; "I looked it up" does not."""
    suite = example_suite()
    tools = {t.name: t for t in suite.tools}
    assert set(EXAMPLE_IDEAL) == {t.id for t in suite.tasks}
    with offline_weather():
        for task in suite.tasks:
            calls, answers = [], []
            for turn, (steps, answer) in enumerate(EXAMPLE_IDEAL[task.id]):
                calls += [ToolCallMade(n, a, True, str(tools[n].invoke(a)), turn) for n, a in steps]
                answers.append(answer)
            judged = verdict(task, calls, answers)
            assert judged.success, (task.id, judged.failures)
            vague = verdict(task, calls, ["I looked it up for you."] * len(answers))
            assert not vague.success, task.id


def test_offline_weather_is_deterministic_per_city() -> None:
    suite = example_suite()
    tool = next(t for t in suite.tools if t.name == "get_current_weather")
    with offline_weather():
        first, again = tool.invoke({"city": "Lisbon"}), tool.invoke({"city": "Lisbon"})
        other = tool.invoke({"city": "Oslo"})
    assert first == again and first != other and first.startswith("Lisbon")


def _described_examples(tool: Any) -> list[str]:
    """The example values a tool's parameter descriptions give ('e.g. "Paris" or "...")."""
    import re

    texts = [str(p.get("description", "")) for p in tool.args.values()]
    return [v for text in texts for v in re.findall(r'"([^"]+)"', text.partition("e.g.")[2])]


def test_the_offline_weather_fake_accepts_what_the_tools_invite() -> None:
    """The weather tools invite "City" and "City, Region or Country": the fake answers them."""
    suite = example_suite()
    tools = [t for t in suite.tools if t.name in ("get_current_weather", "get_forecast")]
    invited = {v for tool in tools for v in _described_examples(tool)}
    assert {"Paris", "Portland, Oregon", "Lyon, France"} <= invited
    cities = {c for task in suite.tasks for e in task.expect for c in e.mentions if c[0].isupper()}
    written = [f"{city}, {country}" for city, country in (("Lisbon", "Portugal"), ("Oslo", "NO"))]
    written += ["Portland, OR", "London, UK", "New York, USA", "Timbuktu, Mali", "Paris, Texas"]
    with offline_weather():
        for tool in tools:
            for city in sorted(invited | cities) + written:
                text = tool.invoke({"city": city})
                assert text.startswith(city.partition(",")[0]), (tool.name, city, text)
        plain = tools[0].invoke({"city": "Lisbon"})
        assert tools[0].invoke({"city": "Lisbon, Portugal"}) == plain  # the same place
        assert tools[0].invoke({"city": "Paris, Texas"}) != tools[0].invoke({"city": "Paris"})
        error = tools[0].invoke({"city": "Oslo, Narnia"})
    assert "no place named 'Oslo' in 'Narnia'" in error


def test_distractor_tools_declare_their_risk_by_verb() -> None:
    """A distractor with a write verb is a declared write; one with a read verb is a declared
    read of its scope (`reads=`); the example agent's own tools are reads by their metadata."""
    from attention_scoping.risk import declared_write
    from attention_scoping.scopes import ScopeCatalog

    own = set(example_suite().tool_names())
    suite = example_suite(distractors=40)
    catalog = ScopeCatalog(list(suite.scopes or []), tools=list(suite.tools))
    by_name = {t.name: t for t in suite.tools if t.name not in own}
    writes = {name for name, tool in by_name.items() if declared_write(tool)}
    reads = {name for name in by_name if catalog.is_read(name)}
    assert writes and reads and not writes & reads
    assert all(name.split("_")[1] not in ("get", "list", "search") for name in writes)
    assert {n for n in by_name if n.split("_")[1] in ("create", "delete", "post")} <= writes
    assert {n for n in by_name if n.split("_")[1] in ("get", "list", "search")} <= reads
    assert own <= catalog.reads  # the agent's own tools: metadata risk=read


def test_simulated_suite_declares_reads_by_verb_and_nothing_else() -> None:
    """The simulated suite's scopes declare the read-verb tools reads; `db_export_query_csv`
    (it writes a file) and the other write verbs are declared writes; none is left over."""
    from attention_scoping.risk import declared_write, unclassified
    from attention_scoping.scopes import ScopeCatalog

    suite = simulated_suite(n_tasks=3)
    catalog = ScopeCatalog(list(suite.scopes or []), tools=list(suite.tools))
    tools = {t.name: t for t in suite.tools}
    assert "db_run_select_query" in catalog.reads and "github_get_issue" in catalog.reads
    assert declared_write(tools["db_export_query_csv"])
    assert not catalog.is_read("db_export_query_csv")
    assert not catalog.is_read("slack_post_message")
    assert unclassified(tools, catalog.declared_reads) == []


def test_simulated_suite_names_gold_tools_and_user_values() -> None:
    suite = simulated_suite(n_tasks=9, seed=1)
    names = set(suite.tool_names())
    assert len(suite.tools) == 120 and suite.scopes is not None and len(suite.scopes) == 6
    assert sum(len(t.expect) == 2 for t in suite.tasks) == 3
    for task in suite.tasks:
        for expect in task.expect:
            assert set(expect.tools) <= names
            assert all(v in task.turns[0] for v in expect.mentions)
    assert [t.turns for t in simulated_suite(n_tasks=9, seed=1).tasks] == [
        t.turns for t in suite.tasks
    ]


def _catalog(tmp_path: Path, servers: bool) -> tuple[Path, Path]:
    rows = [
        {
            "id": f"svc.tool{i}",
            "name": f"svc.tool{i}",
            "description": f"Tool number {i}.",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
            **({"server": f"s{i % 2}"} if servers else {}),
        }
        for i in range(10)
    ]
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text("\n".join(json.dumps(r) for r in rows))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps({"id": f"q{i}", "query": f"use tool {i}", "gold_ids": [f"svc.tool{i}"]})
            for i in (3, 7)
        )
    )
    return catalog, queries


def test_catalog_suite_samples_gold_plus_distractors(tmp_path: Path) -> None:
    catalog, queries = _catalog(tmp_path, servers=True)
    suite = catalog_suite(catalog, queries, max_tools=5)
    assert len(suite.tools) == 5 and {"svc_tool3", "svc_tool7"} <= set(suite.tool_names())
    assert [(t.id, t.expect[0].tools, t.single_call) for t in suite.tasks] == [
        ("q3", ("svc_tool3",), True),
        ("q7", ("svc_tool7",), True),
    ]
    assert suite.scopes is not None and {s.name for s in suite.scopes} <= {"s0", "s1"}
    assert all(not s.reads for s in suite.scopes)  # the bench format declares no risk
    assert catalog_suite(catalog, queries, max_tools=5).tool_names() == suite.tool_names()


def test_catalog_without_servers_has_no_scopes(tmp_path: Path) -> None:
    catalog, queries = _catalog(tmp_path, servers=False)
    assert catalog_suite(catalog, queries).scopes is None


def test_distractors_add_unneeded_trimmed_tools_as_scopes() -> None:
    plain, noisy = example_suite(), example_suite(distractors=12)
    extra = set(noisy.tool_names()) - set(plain.tool_names())
    assert len(extra) == 12 and noisy.scopes is not None
    assert {s.name for s in noisy.scopes} >= {"math", "translation", "weather", "github", "jira"}
    needed = {name for task in noisy.tasks for e in task.expect for name in e.tools}
    assert not needed & extra
    tool = next(t for t in noisy.tools if t.name in extra)
    assert "." not in tool.description.rstrip(".")  # one sentence
    assert example_suite(distractors=12).tool_names() == noisy.tool_names()


# -- the held-out half ------------------------------------------------------------------------

Turn = list[tuple[str, dict[str, Any]]]
HELDOUT_GOLD: dict[str, list[Turn]] = {
    "ho-math-tip": [[("calculate", {"expression": "86.40 * 0.18"})]],
    "ho-math-split": [[("calculate", {"expression": "237.60 / 4"})]],
    "ho-math-power": [[("calculate", {"expression": "2 ** 20"})]],
    "ho-math-compound": [[("calculate", {"expression": "5000 * 1.03 ** 10"})]],
    "ho-stats-scores": [[("summary_statistics", {"numbers": [72, 85, 91, 64, 88]})]],
    "ho-stats-rents": [[("summary_statistics", {"numbers": [950, 1200, 870, 1500, 1100, 1020]})]],
    "ho-conv-marathon": [
        [("convert_units", {"value": 42.195, "from_unit": "km", "to_unit": "mi"})]
    ],
    "ho-conv-oven": [[("convert_units", {"value": 180, "from_unit": "C", "to_unit": "F"})]],
    "ho-conv-height": [[("convert_units", {"value": 6, "from_unit": "ft", "to_unit": "cm"})]],
    "ho-conv-speed": [[("convert_units", {"value": 100, "from_unit": "km/h", "to_unit": "mph"})]],
    "ho-conv-cups": [[("convert_units", {"value": 2, "from_unit": "cup", "to_unit": "ml"})]],
    "ho-tr-detect-spanish": [
        [("detect_language", {"text": "¿Dónde está la biblioteca? Necesito estudiar hoy."})]
    ],
    "ho-tr-detect-portuguese": [
        [("detect_language", {"text": "Obrigado pela ajuda, até amanhã e boa noite."})]
    ],
    "ho-tr-japanese-quotes": [[("language_info", {"language": "Japanese"})]],
    "ho-tr-arabic-direction": [[("language_info", {"language": "ar"})]],
    "ho-tr-format-french": [[("format_number", {"value": 2500000.5, "language": "French"})]],
    "ho-tr-format-hindi": [[("format_number", {"value": 1234567, "language": "Hindi"})]],
    "ho-tr-glossary-cart": [
        [("glossary_lookup", {"term": "shopping cart", "target_language": "Spanish"})]
    ],
    "ho-tr-glossary-settings": [
        [("glossary_lookup", {"term": "settings", "target_language": "it"})]
    ],
    "ho-wx-umbrella-lyon": [[("get_forecast", {"city": "Lyon, France", "days": 2})]],
    "ho-wx-tokyo-now": [[("get_current_weather", {"city": "Tokyo"})]],
    "ho-wx-seattle-week": [[("get_forecast", {"city": "Seattle", "days": 7})]],
    "ho-wx-portland": [[("get_current_weather", {"city": "Portland, Oregon"})]],
    "ho-wx-reykjavik-wind": [[("get_current_weather", {"city": "Reykjavik"})]],
    "ho-switch-athens-fahrenheit": [
        [("get_current_weather", {"city": "Athens"})],
        [("convert_units", {"value": 18, "from_unit": "°C", "to_unit": "°F"})],
    ],
    "ho-switch-glossary-discount": [
        [("glossary_lookup", {"term": "invoice", "target_language": "German"})],
        [("calculate", {"expression": "0.075 * 1280"})],
    ],
    "ho-switch-miles-spanish": [
        [("convert_units", {"value": 26.2, "from_unit": "mi", "to_unit": "km"})],
        [("format_number", {"value": 42.1648128, "language": "es", "decimals": 1})],
    ],
    "ho-switch-finnish-forecast": [
        [("detect_language", {"text": "Hyvää huomenta, miten voit tänään?"})],
        [("get_forecast", {"city": "Helsinki", "days": 3})],
    ],
    "ho-switch-barcelona-average": [
        [("get_forecast", {"city": "Barcelona", "days": 2})],
        [("summary_statistics", {"numbers": [18, 22, 25]})],
    ],
    "ho-switch-square-vancouver": [
        [("calculate", {"expression": "12 ** 2 * 3"})],
        [("get_current_weather", {"city": "Vancouver"})],
    ],
}
NO_TOOL_ANSWERS = {
    "ho-none-thanks": "You're welcome, bye!",
    "ho-none-greeting": "Good morning! How can I help?",
    "ho-none-weekend": "Thank you, you too!",
    "ho-none-recall-numbers": "You asked me to multiply 15 by 12.",
    "ho-none-recall-city": "We were talking about Oslo.",
    "ho-none-recall-language": "I said German.",
}


def test_the_heldout_suite_has_singles_conversations_and_no_tool_messages() -> None:
    from attention_scoping_lab.eval.suites.example import HELDOUT_FILE

    heldout = example_suite(HELDOUT_FILE, name="example-heldout")
    tuning = example_suite()
    names = set(heldout.tool_names())
    assert heldout.name == "example-heldout" and heldout.tool_names() == tuning.tool_names()
    switches = [t for t in heldout.tasks if "switch" in t.tags]
    quiet = [t for t in heldout.tasks if not t.needs_tool]
    singles = [t for t in heldout.tasks if t.needs_tool and "switch" not in t.tags]
    assert len(singles) >= 20 and len(switches) >= 6 and len(quiet) >= 6
    assert all(len(t.turns) == 2 for t in switches)
    scope_of = {tool: s.name for s in tuning.scopes or [] for tool in s.tools}
    for task in switches:  # the second turn needs another scope than the first
        first, second = (scope_of[e.tools[0]] for e in task.expect)
        assert first != second, task.id
    assert not {t.id for t in heldout.tasks} & {t.id for t in tuning.tasks}
    assert not {t.turns for t in heldout.tasks} & {t.turns for t in tuning.tasks}
    for task in heldout.tasks:
        assert all(set(e.tools) <= names for e in task.expect), task.id


def test_every_heldout_task_is_solvable_by_its_gold_calls() -> None:
    """Running each task's gold calls, and answering each turn with what they returned, passes
    its checks: the expectations and answer snippets agree with what the tools really say."""
    from attention_scoping_lab.eval.suites.example import HELDOUT_FILE
    from attention_scoping_lab.eval.tasks import verdict

    suite = example_suite(HELDOUT_FILE, name="example-heldout")
    tools = {t.name: t for t in suite.tools}
    assert set(HELDOUT_GOLD) | set(NO_TOOL_ANSWERS) == {t.id for t in suite.tasks}
    with offline_weather():
        for task in suite.tasks:
            if not task.needs_tool:
                assert verdict(task, [], [NO_TOOL_ANSWERS[task.id]]).success, task.id
                assert not verdict(task, [made("calculate")], ["x"]).success, task.id
                continue
            calls, answers = [], []
            for turn in HELDOUT_GOLD[task.id]:
                ran = [made(n, result=str(tools[n].invoke(a)), **a) for n, a in turn]
                calls += ran
                answers.append("Here you go: " + " / ".join(c.result for c in ran))
            judged = verdict(task, calls, answers)
            assert judged.success, (task.id, judged.failures)
            vague = verdict(task, calls, ["I looked it up for you."] * len(answers))
            assert not vague.success, task.id  # every tool task asks something of the answer
