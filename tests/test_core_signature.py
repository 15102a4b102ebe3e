"""`core.signature`: a tool's required arguments on one line, and whether the line is enough."""

from __future__ import annotations

from typing import Any

import pytest

from attention_scoping.common.signature import call_signature, signature_is_complete
from attention_scoping.common.tool import ToolSpec


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


@pytest.mark.parametrize(
    ("props", "required", "expected", "complete"),
    [
        ({}, [], "t()", True),
        ({"q": {"type": "string"}, "n": {"type": "integer"}}, ["q"], "t(q)", True),
        (
            {
                "repo": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "draft": {"type": "boolean"},
            },
            ["repo", "count", "ratio", "draft"],
            "t(repo, count: int, ratio: number, draft: bool)",
            True,
        ),
        (
            {"state": {"type": "string", "enum": ["open", "closed"]}, "n": {"enum": [1, 2]}},
            ["state", "n"],
            "t(state: open|closed, n: 1|2)",
            True,
        ),
        (
            {"labels": {"type": "array", "items": {"type": "string"}}},
            ["labels"],
            "t(labels: [str])",
            True,
        ),
        ({"ids": {"type": "array", "items": {"type": "integer"}}}, ["ids"], "t(ids: [int])", True),
        ({"any": {"type": "array"}}, ["any"], "t(any: [any])", True),
        ({"maybe": {"type": ["string", "null"]}}, ["maybe"], "t(maybe)", True),
        ({"filter": {"type": "object"}}, ["filter"], "t(filter: {…})", False),
        (
            {"rows": {"type": "array", "items": {"type": "object"}}},
            ["rows"],
            "t(rows: {…})",
            False,
        ),
        ({"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}, ["x"], "t(x: {…})", False),
        ({"x": {"type": ["string", "integer"]}}, ["x"], "t(x: {…})", False),
        ({"x": {"enum": [str(i) for i in range(9)]}}, ["x"], "t(x: {…})", False),
        ({"x": {"enum": ["a" * 40, "b" * 40]}}, ["x"], "t(x: {…})", False),
        ({}, ["undescribed"], "t(undescribed)", True),
    ],
)
def test_signature_shows_required_arguments(
    props: dict[str, Any], required: list[str], expected: str, complete: bool
) -> None:
    schema = _schema(props, required)
    assert call_signature("t", schema) == expected
    assert signature_is_complete(schema) is complete


def test_required_arguments_keep_schema_order_and_skip_optional_ones() -> None:
    schema = _schema(
        {"b": {"type": "string"}, "opt": {"type": "integer"}, "a": {"type": "string"}},
        ["a", "b", "ghost"],
    )
    assert call_signature("f", schema) == "f(b, a, ghost)"


def test_broken_schemas_give_a_line_not_an_error() -> None:
    for schema in ({}, {"properties": "nope", "required": "x"}, {"properties": {"a": 3}}):
        assert call_signature("f", schema) == "f()"
    assert call_signature("f", {"properties": {"a": 3}, "required": ["a"]}) == "f(a: {…})"


def test_tool_spec_exposes_its_signature() -> None:
    spec = ToolSpec(
        "refund",
        "refund",
        "Refund an order.",
        _schema({"order_id": {"type": "string"}, "items": {"type": "object"}}, ["order_id"]),
    )
    assert spec.signature() == "refund(order_id)"
    assert spec.signature_complete
