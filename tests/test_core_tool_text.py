"""The one tool record and the shared text helpers: critical parameters, the approval rule,
schema parsing, stemming and bounded did-you-mean hints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from langchain_core.tools import tool

from attention_scoping.adapters.tools import needs_approval, spec_from_tool
from attention_scoping.common import text
from attention_scoping.common.options import check_choice
from attention_scoping.common.text import did_you_mean, did_you_mean_hint, identifier_words, stem
from attention_scoping.common.tool import (
    ToolSpec,
    approval_required,
    approval_rule,
    critical_parameters,
    is_critical,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "subject": {"type": "string", "default": "Hello"},
        "cc": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "body": {"type": "string"},
        "folder": {"type": "string"},
    },
    "required": ["to", "subject", "cc", "body", "priority"],
}


def test_critical_parameters_one_rule() -> None:
    # required, no schema default, no suggested default, not nullable; undeclared names last
    assert critical_parameters(SCHEMA) == ["to", "body", "priority"]
    assert critical_parameters(SCHEMA, {"body": "x"}) == ["to", "priority"]
    assert critical_parameters(SCHEMA, ["to"]) == ["body", "priority"]
    assert not is_critical("folder", {"type": "string"}, required=SCHEMA["required"])
    assert not is_critical("x", {"type": ["string", "null"]}, required=["x"])
    assert is_critical("x", None, required=["x"])
    assert critical_parameters({"type": "object"}) == []


def test_tool_spec_reads_the_rules() -> None:
    schema = {**SCHEMA, "required": ["to", "subject", "cc", "body"]}
    spec = ToolSpec(
        "m",
        "send_mail",
        "Send a mail. Then more.",
        schema,
        risk="write",
        defaults={"folder": "sent"},
    )
    assert spec.summary == "Send a mail."
    assert spec.is_write and spec.requires_approval
    assert spec.critical() == ["to", "body"]
    assert spec.required == ["to", "subject", "cc", "body"]
    assert spec.suggested_defaults() == {"subject": "Hello", "folder": "sent"}
    assert spec.parameter_names() == list(schema["properties"])
    assert not ToolSpec("r", "r", "", {}).requires_approval
    assert not ToolSpec("w", "w", "", {}, risk="write", approval=False).requires_approval
    assert ToolSpec("a", "a", "", {}, approval=True).requires_approval


def test_tool_spec_refuses_bad_configuration() -> None:
    with pytest.raises(ValueError, match="risk must be 'read' or 'write', not 'delete'"):
        ToolSpec("x", "x", "", {}, risk="delete")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"defaults for unknown parameters \['nope'\]; valid: "):
        ToolSpec("x", "x", "", SCHEMA, defaults={"nope": 1})


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (None, False),
        ({}, False),
        ({"risk": "read"}, False),
        ({"risk": "write"}, True),
        ({"risk": "write", "requires_approval": False}, False),
        ({"risk": "read", "requires_approval": True}, True),
        ({"requires_approval": 1}, True),
        ({"risk": "delete"}, False),
    ],
)
def test_approval_required_from_metadata(metadata: Any, expected: bool) -> None:
    assert approval_required(metadata) is expected
    if isinstance(metadata, dict):
        explicit = metadata.get("requires_approval")
        assert approval_rule(metadata.get("risk"), explicit) is expected


@pytest.mark.parametrize(
    "shape",
    [
        {"name": "send_mail", "parameters": SCHEMA, "defaults": {"body": "x", "ghost": 1}},
        {
            "type": "function",
            "function": {"name": "send_mail", "parameters": SCHEMA, "defaults": {"body": "x"}},
        },
        {"name": "send_mail", "input_schema": SCHEMA, "defaults": {"body": "x"}},
    ],
)
def test_from_schema_accepts_common_shapes(shape: dict[str, Any]) -> None:
    spec = ToolSpec.from_schema(shape)
    assert spec.name == "send_mail"
    assert spec.defaults == {"body": "x"}  # defaults for unknown parameters are dropped
    assert spec.critical() == ["to", "priority"]


def test_from_schema_reads_a_disclosure() -> None:
    spec = ToolSpec.from_schema(
        {
            "name": "w",
            "parameters": {"properties": {"a": {}}},
            "risk": "write",
            "requires_approval": False,
            "description": "Writes.",
        }
    )
    assert spec.is_write and not spec.requires_approval and spec.description == "Writes."
    assert ToolSpec.from_schema({"name": "bare", "properties": {"q": {}}}).parameter_names() == [
        "q"
    ]
    assert ToolSpec.from_schema({"name": "odd", "risk": "delete"}).risk == "read"


def test_identifier_words() -> None:
    assert identifier_words("scheduleTime") == ("schedule", "time")
    assert identifier_words("get_HTTPResponse") == ("get", "http", "response")
    assert identifier_words("repo/issue:create") == ("repo", "issue", "create")


@pytest.fixture
def no_snowball(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    stem.cache_clear()
    monkeypatch.setattr(text, "_stemmer", lambda: None)
    yield
    stem.cache_clear()


def test_stem_uses_snowball_when_installed() -> None:
    pytest.importorskip("snowballstemmer")
    assert stem("forecasts") == "forecast"
    assert stem("scheduling") == stem("scheduled") == "schedul"


def test_stem_falls_back_to_a_light_stemmer(no_snowball: None) -> None:
    assert stem("forecasts") == "forecast"
    assert stem("reminders") == "reminder"
    assert stem("bus") == "bus"  # too short to strip
    assert text.lexical_tokens("Scheduling the reminders") == ["schedul", "reminder"]


def test_did_you_mean_is_bounded() -> None:
    names = ["get_weather", "scheduled_jobs", "list_jobs"]
    assert did_you_mean("get_wether", names) == "get_weather"
    assert did_you_mean("zzz", names) is None
    assert did_you_mean("get_wether" * 50, names) is None  # too long to be a typo
    assert did_you_mean(["get_weather"], names) is None  # not a string
    assert did_you_mean("", names) is None
    assert did_you_mean("list_jobz", names, cutoff=0.95) is None
    assert did_you_mean_hint("list_jobz", names) == " (did you mean 'list_jobs'?)"
    assert did_you_mean_hint("zzz", names) == ""


def test_spec_from_tool_strict_and_lenient() -> None:
    @tool
    def refund(order_id: str, amount: float = 0.0) -> str:
        """Refund an order. Money goes back."""
        return "ok"

    refund.metadata = {"risk": "write", "defaults": {"amount": 5, "ghost": 1}}
    with pytest.raises(ValueError, match=r"defaults for unknown parameters \['ghost'\]"):
        spec_from_tool(refund)
    lenient = spec_from_tool(refund, strict=False)
    assert lenient.defaults == {"amount": 5} and lenient.requires_approval
    assert lenient.summary == "Refund an order."
    refund.metadata = {"risk": "erase"}
    with pytest.raises(ValueError, match="tool 'refund': risk must be 'read' or 'write'"):
        spec_from_tool(refund)
    assert spec_from_tool(refund, strict=False).risk == "read"
    refund.metadata = {"risk": "write", "requires_approval": False}
    assert not needs_approval(refund) and spec_from_tool(refund).is_write
    assert needs_approval({"type": "function"}) is False  # a provider dict has no metadata


def test_check_choice_names_the_option_and_every_valid_value() -> None:
    check_choice("mode", "b", Literal["a", "b"])
    with pytest.raises(ValueError, match=r"^mode must be 'a' or 'b', not 'c'$"):
        check_choice("mode", "c", Literal["a", "b"])
    with pytest.raises(ValueError, match=r"^pool must be one of 'x', 'y' or 'z', not None$"):
        check_choice("pool", None, ("x", "y", "z"))
