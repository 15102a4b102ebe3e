"""The blast-radius rule, failing closed: a tool is a read only when declared; who may open it.

The core's `attention_scoping.risk` decides; the add-ons' helpers (`common.blast_radius`,
`common.tool`) read it, and approval asks only for declared writes."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from attention_scoping.adapters.tools import needs_approval, spec_from_tool
from attention_scoping.common.blast_radius import may_open, writes
from attention_scoping.common.tool import ToolSpec, approval_required, metadata_risk
from attention_scoping.risk import declared_read, declared_write, unclassified

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({}, True),
        ({"risk": "read"}, False),
        ({"risk": "read", "requires_approval": True}, True),
        ({"risk": "write"}, True),
        ({"risk": "write", "requires_approval": False}, True),
        ({"requires_approval": True}, True),
        ({"mutation": True}, True),
        ({"annotations": {"destructiveHint": True}}, True),
        ({"annotations": {"readOnlyHint": False}}, True),
        ({"annotations": {"readOnlyHint": True}}, False),
        ({"annotations": {"readOnlyHint": True, "destructiveHint": True}}, True),
        ({"annotations": "junk"}, True),
        ({"risk": "bogus"}, True),
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
    assert writes(object()) is True  # nothing declared: it may write


def test_explicit_no_approval_skips_approval_but_still_writes() -> None:
    meta = {"risk": "write", "requires_approval": False}
    assert metadata_risk(meta) == "write"
    assert not approval_required(meta)
    assert writes(meta)


def test_an_unclassified_tool_may_write_but_is_not_sent_for_approval() -> None:
    @tool
    def rename(path: str) -> str:
        """Rename a file."""
        return path

    assert writes(rename) and not may_open(rename, "code")
    assert metadata_risk({}) == "write"
    assert not approval_required({}) and not needs_approval(rename)
    spec = spec_from_tool(rename)
    assert spec.risk == "write" and not spec.requires_approval
    assert declared_read(rename) is False and declared_write(rename) is False
    assert unclassified({"rename": rename}) == ["rename"]
    assert unclassified({"rename": rename}, reads={"rename"}) == []


def test_unknown_opener_is_refused() -> None:
    valid = "unknown opener 'router'; valid: model, application, code"
    with pytest.raises(ValueError, match=valid):
        may_open({}, "router")  # type: ignore[arg-type]
