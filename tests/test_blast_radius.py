"""The blast-radius rule in `core`: which tools write, and who may open them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from attention_scoping.adapters.tools import needs_approval, spec_from_tool
from attention_scoping.common.blast_radius import may_open, writes
from attention_scoping.common.tool import ToolSpec, approval_required, metadata_risk

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({}, False),
        ({"risk": "read"}, False),
        ({"risk": "write"}, True),
        ({"risk": "write", "requires_approval": False}, True),
        ({"requires_approval": True}, True),
        ({"mutation": True}, True),
        ({"annotations": {"destructiveHint": True}}, True),
        ({"annotations": {"readOnlyHint": False}}, True),
        ({"annotations": {"readOnlyHint": True}}, False),
        ({"annotations": {"readOnlyHint": True, "destructiveHint": True}}, True),
        ({"annotations": "junk"}, False),
        ({"risk": "bogus"}, False),
    ],
)
def test_writes_reads_every_declaration(metadata: dict[str, Any], expected: bool) -> None:
    assert writes(metadata) is expected
    assert may_open(metadata, "code") is (not expected)
    assert may_open(metadata, "model") is True
    assert may_open(metadata, "application") is True


def test_writes_reads_tools_and_specs() -> None:
    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        return to

    send_email.metadata = {"annotations": {"destructiveHint": True}}
    assert writes(send_email)
    assert not may_open(send_email, "code")
    spec = spec_from_tool(send_email)
    assert spec.risk == "write" and spec.requires_approval
    assert needs_approval(send_email)
    assert writes(ToolSpec("a", "a", "", SCHEMA, risk="write", approval=False))
    assert not writes(ToolSpec("b", "b", "", SCHEMA))
    assert writes(object()) is False


def test_explicit_no_approval_skips_approval_but_still_writes() -> None:
    meta = {"risk": "write", "requires_approval": False}
    assert metadata_risk(meta) == "write"
    assert not approval_required(meta)
    assert writes(meta)


def test_unknown_opener_is_refused() -> None:
    valid = "unknown opener 'router'; valid: model, application, code"
    with pytest.raises(ValueError, match=valid):
        may_open({}, "router")  # type: ignore[arg-type]
