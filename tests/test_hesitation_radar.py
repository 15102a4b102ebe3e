"""The hesitation radar: a pure function of the text and the disclosed schemas."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from attention_scoping.radar import (
    DEFAULT_MARKERS,
    HesitationMarkers,
    detect_hesitation,
    parse_schemas,
)

CORPUS = Path(__file__).parent / "hesitation_corpus.jsonl"
BENCH = Path(__file__).parent.parent / "benchmarks" / "hesitation_corpus.py"

REMINDER = {
    "name": "scheduled_jobs",
    "parameters": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "message": {"type": "string"},
            "schedule_time": {"type": "string", "default": "+30m"},
            "folder": {"type": "string"},
            "notify_email": {"type": "boolean"},
        },
        "required": ["title", "message"],
    },
}


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


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
    spec = importlib.util.spec_from_file_location("hesitation_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(bench)
    table, errors = bench.evaluate(rows())
    everything = table["all"]
    assert everything.precision >= 0.95 and everything.recall >= 0.95, errors


@pytest.mark.parametrize("shape", ["plain", "openai", "tool"])
def test_schema_shapes(shape: str) -> None:
    @tool
    def scheduled_jobs(title: str, message: str, schedule_time: str = "+30m") -> str:
        """Schedule a reminder."""
        return ""

    schema: Any = {
        "plain": REMINDER,
        "openai": {"type": "function", "function": REMINDER},
        "tool": scheduled_jobs,
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
