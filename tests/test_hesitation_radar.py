"""The hesitation radar: a pure function of the text and the disclosed schemas."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from attention_scoping.adapters.tools import to_provider_schema
from attention_scoping.hesitation.markers import ASKS_ABOUT_TOOLS as ASKS_ABOUT_TOOLS_FROM_MARKERS
from attention_scoping.hesitation.middleware import ASKS_ABOUT_TOOLS as FROM_MIDDLEWARE
from attention_scoping.hesitation.radar import (
    DEFAULT_MARKERS,
    RULES,
    HesitationMarkers,
    detect_hesitation,
    parse_schemas,
)
from attention_scoping.hesitation.rules import ALL, Evidence
from tests.radar_schemas import DEPLOY, EVENT, REMINDER, TABLE, TRANSFER, function_schema
from tests.script_support import load_script

CORPUS = Path(__file__).parent / "hesitation_corpus.jsonl"
BLIND_DEV = Path(__file__).parent / "hesitation_blind_dev.jsonl"


def rows(path: Path = CORPUS) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [row for row in map(json.loads, filter(None, lines)) if "_meta" not in row]


def load_bench() -> Any:
    return load_script("hesitation_corpus", register=True)


def test_corpus_is_large_varied_and_labelled() -> None:
    data = rows()
    stalls = [r for r in data if r["label"] == "stall"]
    legit = [r for r in data if r["label"] == "legit"]
    assert len(stalls) >= 40 and len(legit) >= 40
    assert len({r["tool"] for r in data}) >= 20
    kinds = {r["kind"] for r in legit}
    assert {"final", "clarifying", "error"} <= kinds
    for row in data:
        assert row["schemas"] and row["text"].strip() and row["tool"]
    assert len({r["text"] for r in data}) == len(data)


def test_precision_and_recall_floor_on_the_corpus() -> None:
    table, errors = load_bench().evaluate(rows())
    everything = table["all"]
    assert everything.precision >= 0.95 and everything.recall >= 0.95, errors


def test_blind_dev_corpus_is_the_independent_set() -> None:
    meta = json.loads(BLIND_DEV.read_text(encoding="utf-8").splitlines()[0])
    assert "independently" in meta["_meta"]
    data = rows(BLIND_DEV)
    assert len(data) == 82
    assert sum(r["label"] == "stall" for r in data) == 42
    assert all(r["user"].strip() and r["schemas"] for r in data)


def test_precision_and_recall_floor_on_the_blind_dev_corpus() -> None:
    bench = load_bench()
    data = rows(BLIND_DEV)
    table, errors = bench.evaluate(data)
    assert table["all"].precision >= 0.95 and table["all"].recall >= 0.95, errors
    # The text alone cannot tell a tool explanation the user asked for, or a draft the user
    # wanted to review, from a stall: a lower floor, to catch regressions.
    alone, errors = bench.evaluate(data, use_request=False)
    assert alone["all"].precision >= 0.85 and alone["all"].recall >= 0.95, errors


@pytest.mark.parametrize("shape", ["plain", "openai", "tool"])
def test_schema_shapes(shape: str) -> None:
    @tool
    def scheduled_jobs(title: str, message: str, schedule_time: str = "+30m") -> str:
        """Schedule a reminder."""
        return ""

    schema: Any = {
        "plain": REMINDER,
        "openai": {"type": "function", "function": REMINDER},
        # The radar imports no LangChain: the adapter converts a tool to a provider dict.
        "tool": to_provider_schema(scheduled_jobs),
    }[shape]
    (info,) = parse_schemas([schema])
    assert info.name == "scheduled_jobs"
    by_name = {p.name: p for p in info.params}
    assert by_name["title"].critical and not by_name["schedule_time"].critical
    verdict = detect_hesitation(
        "You need to provide title, message and schedule_time. Would you like to proceed?",
        [schema],
    )
    assert verdict and verdict.stalled
    assert {"title", "message", "schedule_time"} <= set(verdict.params)
    assert verdict.tools == ("scheduled_jobs",)


def test_result_object_explains_itself() -> None:
    verdict = detect_hesitation("Would you like me to proceed with the reminder?", [REMINDER])
    assert bool(verdict) is True
    assert verdict.score >= verdict.threshold
    assert any("confirmation" in r and "[+2.00]" in r for r in verdict.reasons)
    assert verdict.as_dict()["stalled"] is True
    quiet = detect_hesitation("", [REMINDER])
    assert not quiet and quiet.reasons == ()


def test_structure_outweighs_phrases() -> None:
    # No marker phrase at all: the echoed field list alone is a stall.
    listing = "- title: PR follow-up\n- message: verify approvals\n- schedule_time: +30m"
    assert detect_hesitation(listing, [REMINDER])
    # The same words without the schema are just text.
    assert not detect_hesitation(listing, [])


def test_defaults_turn_a_question_into_a_stall() -> None:
    question = "What schedule time would you like for the reminder?"
    assert detect_hesitation(question, [REMINDER])  # schedule_time has a default: use it
    critical = "Which PR is this for? There are two open ones, #482 and #497."
    assert not detect_hesitation(critical, [REMINDER])


@pytest.mark.parametrize(
    "text",
    [
        "Done: reminder scheduled for 15:30 (job job_7f21). Would you like me to add another?",
        "The scheduler rejected the job: schedule_time '+30x' is not a valid duration.",
        "Which repository should the reminder link to? I can't find PR #482 in acme/core.",
        "It's 18 °C and sunny in Paris.",
        "I've scheduled it. Let me know if you need anything else!",
    ],
)
def test_legitimate_messages(text: str) -> None:
    verdict = detect_hesitation(text, [REMINDER])
    assert not verdict, verdict.reasons


def test_markers_are_configurable() -> None:
    french = "Voulez-vous que je lance la tâche ?"
    assert not detect_hesitation(french, [REMINDER])
    fr = DEFAULT_MARKERS.extend(confirmation=[r"voulez-vous que je"])
    assert detect_hesitation(french, [REMINDER], markers=fr)
    # Removing the confirmation markers switches that signal off.
    quiet = dataclasses.replace(DEFAULT_MARKERS, confirmation=())
    assert isinstance(quiet, HesitationMarkers)
    assert not detect_hesitation("Would you like me to proceed?", [REMINDER], markers=quiet)
    with pytest.raises(ValueError, match="unknown marker category"):
        DEFAULT_MARKERS.extend(confirm=["x"])
    with pytest.raises(TypeError, match="pass a list"):
        DEFAULT_MARKERS.extend(request="please")


def test_threshold_is_configurable() -> None:
    text = "Would you like me to proceed?"
    assert detect_hesitation(text, [REMINDER])
    assert not detect_hesitation(text, [REMINDER], threshold=5.0)


@pytest.mark.parametrize(
    ("text", "schema"),
    [
        ("How much should I send Ana, and from which account? Neither has a default.", TRANSFER),
        ("How many people, and what time? The booking needs a party size and a time.", TABLE),
        (
            "Which service, and to which environment? There are new builds for checkout-api and "
            "search-indexer, and I don't want to guess between staging and production.",
            DEPLOY,
        ),
    ],
)
def test_several_critical_values_with_a_reason_are_a_clarifying_question(
    text: str, schema: dict[str, Any]
) -> None:
    verdict = detect_hesitation(text, [schema])
    assert not verdict, verdict.reasons
    assert any("required values only" in r for r in verdict.reasons)


def test_asking_about_defaults_or_without_a_reason_stays_a_stall() -> None:
    # A parameter with a default among the values asked: the model should have used it.
    assert detect_hesitation("Which environment, and how many replicas? Both matter.", [DEPLOY])
    # Asked by the kind of value: "how many minutes" asks for a number, and the only number
    # parameter of this schema has a default.
    assert detect_hesitation(
        "How many minutes before should I remind you, and where is it? I can't tell.", [EVENT]
    )
    # Required values listed as a form, with no reason: the seed's failure.
    assert detect_hesitation("Please provide the service, environment and image tag.", [DEPLOY])
    # A title can be written from the request.
    reminder = detect_hesitation("What title should the reminder have?", [REMINDER])
    assert reminder and any("written from the request" in r for r in reminder.reasons)


def test_a_default_stated_next_to_the_question_is_not_asked() -> None:
    text = (
        "What are the contractor's name and email address? Both are required. Access will "
        "default to the viewer role unless you tell me otherwise."
    )
    account = function_schema(
        "create_user_account",
        {
            "email": {"type": "string"},
            "full_name": {"type": "string"},
            "role": {"type": "string", "default": "viewer"},
        },
        ["email", "full_name"],
    )
    assert not detect_hesitation(text, [account])


@pytest.mark.parametrize(
    "text",
    [
        "Deployment complete ✅\n- service: checkout-api\n- environment: staging\n"
        "- image_tag: 2.15.0\n- replicas: 2 (default)",
        "Dry run passed for payments-api 3.2.0:\n- environment: production\n- replicas: 2\n"
        "- strategy: rolling\nNothing was applied.",
    ],
)
def test_a_report_may_list_parameters(text: str) -> None:
    assert not detect_hesitation(text, [DEPLOY])


def test_request_tells_explanations_and_reviews_from_stalls() -> None:
    table = (
        "| parameter | required |\n|---|---|\n| service | yes |\n| environment | yes |\n"
        "| image_tag | yes |\n| replicas | no (2) |"
    )
    assert detect_hesitation(table, [DEPLOY])  # unprompted: a parameter dump
    asked = detect_hesitation(table, [DEPLOY], request="What parameters does the deploy take?")
    assert not asked and any("asked about the tool" in r for r in asked.reasons)

    plan = "Plan:\n- service: api\n- environment: production\n- image_tag: 3.2.0\nShall I run it?"
    assert detect_hesitation(plan, [DEPLOY], request="Deploy api 3.2.0 to production.")
    review = detect_hesitation(
        plan, [DEPLOY], request="Prepare the api 3.2.0 prod deploy, but check with me first."
    )
    assert not review and any("see it first" in r for r in review.reasons)


def test_request_holds_or_lacks_the_values_asked_for() -> None:
    question = "How many people, and what time? The booking needs a party size and a time."
    vague = detect_hesitation(question, [TABLE], request="Book us a table at Luca's tomorrow.")
    assert not vague
    given = detect_hesitation(question, [TABLE], request="Book Luca's for 4 at 8pm tomorrow.")
    assert given and any("request already gives" in r for r in given.reasons)
    # Numbers that name things are not amounts.
    ids = detect_hesitation(
        "How much should I send, and from which account? Neither has a default.",
        [TRANSFER],
        request="Pay invoice 4411 from the vendor.",
    )
    assert not ids, ids.reasons


def test_request_argument_is_optional_and_keyword_only() -> None:
    text = "Would you like me to proceed?"
    assert detect_hesitation(text, [REMINDER]) == detect_hesitation(text, [REMINDER], request=None)
    with pytest.raises(TypeError):
        detect_hesitation(text, [REMINDER], "a request", DEFAULT_MARKERS)  # type: ignore[call-arg]


def test_a_langchain_tool_is_converted_by_the_adapter_not_the_radar() -> None:
    @tool
    def scheduled_jobs(title: str) -> str:
        """Schedule a reminder."""
        return ""

    with pytest.raises(TypeError, match="to_provider_schema"):
        parse_schemas([scheduled_jobs])


def test_the_radar_imports_no_framework() -> None:
    code = (
        "import sys\n"
        "from attention_scoping.hesitation.radar import detect_hesitation\n"
        "detect_hesitation('Shall I proceed?', [])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph'))\n"
        "print(loaded)\n"
    )
    root = Path(__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_rule_table_names_each_signal_once_and_reads_real_evidence() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        assert isinstance(getattr(Evidence, rule.when), property | functools.cached_property)
        for factor in rule.scale:
            assert hasattr(Evidence, factor), (rule.name, factor)
        assert rule.offsets is None or rule.offsets <= ALL
        assert rule.explain and (rule.weight != 0 or rule.offsets is not None)


def test_a_rule_table_can_be_reweighed() -> None:
    text = "Would you like me to proceed with the reminder?"
    default = detect_hesitation(text, [REMINDER])
    softer = tuple(
        dataclasses.replace(r, weight=1.0) if r.name == "confirmation" else r for r in RULES
    )
    assert default and not detect_hesitation(text, [REMINDER], rules=softer)
    without = tuple(r for r in RULES if r.name != "confirmation")
    assert detect_hesitation(text, [REMINDER], rules=without).score == 0.0


def test_the_user_asks_about_tools_markers_live_in_one_place() -> None:
    assert FROM_MIDDLEWARE is ASKS_ABOUT_TOOLS_FROM_MARKERS
    for pattern in (*DEFAULT_MARKERS.tool_question, *DEFAULT_MARKERS.forbids_running):
        assert pattern in ASKS_ABOUT_TOOLS_FROM_MARKERS.pattern
    assert ASKS_ABOUT_TOOLS_FROM_MARKERS.search("Draft it but don't send it.")
    assert ASKS_ABOUT_TOOLS_FROM_MARKERS.search("What parameters does scheduled_jobs take?")


FIELD_ANSWERS = Path(__file__).parent / "hesitation_field_answers.jsonl"


def test_field_answers_corpus_is_varied_and_has_requests() -> None:
    data = rows(FIELD_ANSWERS)
    legit = [r for r in data if r["label"] == "legit"]
    assert len(legit) >= 40
    assert len({r["kind"] for r in legit}) >= 6
    assert len({r["tool"] for r in legit}) >= 10
    assert all(r["user"].strip() and r["schemas"] for r in data)
    assert {r["split"] for r in data} == {"dev", "holdout"}


def test_answers_that_list_fields_for_a_text_request_are_not_stalls() -> None:
    bench = load_bench()
    table, errors = bench.evaluate(rows(FIELD_ANSWERS))
    assert table["all"].precision >= 0.95 and table["all"].recall >= 0.95, errors
    assert table["holdout"].precision >= 0.9, errors


@pytest.mark.parametrize(
    "request_text",
    [
        "Give me the wording for a reminder about PR 482; I'll set it up myself.",
        "Translate the reminder fields into Spanish.",
        "Write the help text for the reminder form.",
        "What's the difference between the title and the message of a reminder?",
        "Draft the reminder for me to paste into the app.",
    ],
)
def test_the_users_request_for_text_decides(request_text: str) -> None:
    listing = "- title: PR 482 follow-up\n- message: verify approvals, merge\n- schedule_time: +30m"
    assert detect_hesitation(listing, [REMINDER])  # unprompted: a field list
    verdict = detect_hesitation(listing, [REMINDER], request=request_text)
    assert not verdict and "user_wants_text" in verdict.signals, verdict.reasons


@pytest.mark.parametrize(
    "request_text",
    [
        "Remind me about PR 482 in 30 minutes.",
        "Write up a reminder about PR 482 and schedule it.",
        "Create a draft reminder about PR 482.",
        "Remind me to explain PR 482 to the team; I'll write the summary myself.",
    ],
)
def test_a_request_for_the_action_stays_a_request_for_the_action(request_text: str) -> None:
    listing = (
        "- title: PR 482 follow-up\n- message: verify approvals, merge\n- schedule_time: +30m\n\n"
        "Shall I schedule it?"
    )
    verdict = detect_hesitation(listing, [REMINDER], request=request_text)
    assert verdict and "user_wants_text" not in verdict.signals, verdict.reasons
