"""Two-phase disclosure: the summary pool (phase 1) and the gate's refusals of unexposed calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from attention_scoping.common.errors import unknown_tool
from attention_scoping.common.tool import summary_lines
from attention_scoping.errors import ErrorCode, refusal
from attention_scoping.errors import Payload as ErrorPayload
from attention_scoping.gating.gate import NOT_AVAILABLE
from attention_scoping.gating.texts import (
    NOT_LOADED_MESSAGE,
    NOT_LOADED_STEP,
    NOT_READ_MESSAGE,
    NOT_READ_STEP,
    POOL_HEADER,
    PRECONDITION_STEP,
    UNKNOWN_TOOL_STEP,
)

PoolMode = Literal["auto", "catalog", "scope", "off"]
"""Summary pool: `catalog` (every tool the gate knows), `scope` (this call's candidates), `off`,
or `auto` (the scope pool when it fits the token budget, else off)."""


def pool_text(lines: Sequence[tuple[str, str]], header: str = POOL_HEADER) -> str:
    """The pool: one `- name: summary` line per tool, in the given (stable) order."""
    return summary_lines(header, lines)


def not_available_payload(name: str, summary: str, exposed: Sequence[str]) -> ErrorPayload:
    """Refusal of a call to a known tool whose schema was not sent; it is promoted next step."""
    return refusal(
        NOT_AVAILABLE,
        NOT_LOADED_MESSAGE.format(name=repr(name)),
        tool=name,
        summary=summary,
        available=exposed,
        next_step=NOT_LOADED_STEP.format(name=name),
    )


def not_read_payload(name: str, exposed: Sequence[str]) -> ErrorPayload:
    """Refusal of a call to a tool the gate never shows on its own (not a declared read, not
    pinned): nothing names it, nothing promises its schema."""
    return refusal(
        NOT_AVAILABLE,
        NOT_READ_MESSAGE.format(name=repr(name)),
        tool=name,
        available=exposed,
        next_step=NOT_READ_STEP,
    )


def unknown_tool_payload(name: str, exposed: Sequence[str]) -> ErrorPayload:
    """Refusal of a call to a tool the gate does not know (hidden tools are not listed)."""
    return unknown_tool(name, UNKNOWN_TOOL_STEP, available=exposed)


def precondition_payload(name: str, problem: str, exposed: Sequence[str]) -> ErrorPayload:
    """Refusal of a call whose tool's precondition does not hold in the current state."""
    return refusal(
        ErrorCode.PRECONDITION_FAILED,
        f"{name!r} cannot run now: {problem}. Nothing was run.",
        tool=name,
        unmet=problem,
        available=exposed,
        next_step=PRECONDITION_STEP,
    )
