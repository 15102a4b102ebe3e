"""Error payloads for the add-ons: the core's codes and builders (`attention_scoping.errors`), the
payload shape, and the `unknown_tool` refusal every gate gives.

One `ErrorCode` enum for every structured refusal of the package (scope gate, tool gate, gateway,
manifests, intents, approvals), so a renamed code is a type error rather than a silent change of
behaviour in a module that compares strings. Payloads are JSON objects with `error`, `message` and
`next_step`; `render_payload` is the one place they are serialised.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from attention_scoping.errors import (
    AVAILABLE_TOOLS,
    NOT_RUN_ERRORS,
    ErrorCode,
    Payload,
    error_code,
    refusal,
    render_payload,
)

__all__ = [
    "AVAILABLE_TOOLS",
    "NOT_RUN_ERRORS",
    "ErrorCode",
    "ErrorPayload",
    "Payload",
    "error_code",
    "refusal",
    "render_payload",
    "unknown_tool",
]


ErrorPayload = Payload
"""A refusal payload: `error`, `tool`, `message`, the code's context fields, `available_tools`
and `next_step` (the core's `refusal` builds it)."""


def unknown_tool(
    name: str,
    next_step: str,
    *,
    available: Iterable[str] | None = None,
    where: str = "",
    hint: str = "",
    **context: Any,
) -> Payload:
    """The `unknown_tool` refusal of every gate: "There is no tool named 'x'{where}{hint};
    nothing was run." (`where`: " in ...", `hint`: `core.text.did_you_mean_hint`)."""
    message = f"There is no tool named {name!r}{where}{hint}; nothing was run."
    return refusal(
        ErrorCode.UNKNOWN_TOOL,
        message,
        tool=name,
        available=available,
        next_step=next_step,
        **context,
    )
