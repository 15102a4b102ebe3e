"""Two-phase disclosure: the summary pool (phase 1) and the gate's refusals of unexposed calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from attention_scoping.core.errors import ErrorCode
from attention_scoping.core.tool import summary_lines
from attention_scoping.gating.gate import NOT_AVAILABLE

PoolMode = Literal["auto", "catalog", "scope", "off"]
"""Summary pool: `catalog` (every tool the gate knows), `scope` (this call's candidates), `off`,
or `auto` (the scope pool when it fits the token budget, else off)."""

POOL_HEADER = (
    "# Tool index\n"
    "Only some tools are loaded with full schemas on each step. These also exist; calling one "
    "that is not loaded returns its summary and loads its schema for your next step:"
)
"""First lines of the summary pool."""


def pool_text(lines: Sequence[tuple[str, str]], header: str = POOL_HEADER) -> str:
    """The pool: one `- name: summary` line per tool, in the given (stable) order."""
    return summary_lines(header, lines)


def not_available_payload(name: str, summary: str, exposed: Sequence[str]) -> dict[str, Any]:
    """Refusal of a call to a known tool whose schema was not sent; it is promoted next step."""
    return {
        "error": NOT_AVAILABLE,
        "tool": name,
        "summary": summary,
        "message": (
            f"{name!r} was not loaded for this step, so it was not run. Its full schema is "
            "loaded for your next step."
        ),
        "loaded_tools": list(exposed),
        "next_step": f"Call {name} again using the schema you now have.",
    }


def unknown_tool_payload(name: str, exposed: Sequence[str]) -> dict[str, Any]:
    """Refusal of a call to a tool the gate does not know (hidden tools are not listed)."""
    return {
        "error": ErrorCode.UNKNOWN_TOOL,
        "tool": name,
        "message": f"There is no tool named {name!r}; nothing was run.",
        "loaded_tools": list(exposed),
        "next_step": "Call one of the loaded tools, or answer without a tool.",
    }


def precondition_payload(name: str, problem: str, exposed: Sequence[str]) -> dict[str, Any]:
    """Refusal of a call whose tool's precondition does not hold in the current state."""
    return {
        "error": ErrorCode.PRECONDITION_FAILED,
        "tool": name,
        "message": f"{name!r} cannot run now: {problem}. Nothing was run.",
        "unmet": problem,
        "loaded_tools": list(exposed),
        "next_step": "Satisfy the precondition first (e.g. with another tool), or tell the user.",
    }
