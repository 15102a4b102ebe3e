"""What can go wrong talking to an MCP server, and the structured error the model gets for it.

Every failure becomes an `McpFault` with a code (one of `ErrorCode`'s MCP members);
`fault_payload` turns it into the JSON body of a `status="error"` ToolMessage with a `next_step`,
so the agent goes on. Framework-free.
"""

from __future__ import annotations

from typing import Any, Literal

from attention_scoping.common.errors import ErrorCode
from attention_scoping.errors import AttentionScopingError

FaultCode = Literal[
    "server_unavailable",
    "server_crashed",
    "timeout",
    "malformed_result",
    "server_error",
    "tool_error",
    "tool_withdrawn",
]
"""The `ErrorCode` values an MCP failure carries."""

_NEXT_STEP: dict[str, str] = {
    "server_unavailable": (
        "The server could not be started or reached. Do not retry this server now; use "
        "another context's tools if they can answer, or tell the user the server is down."
    ),
    "server_crashed": (
        "The server process stopped during the call; it is restarted on the next call. "
        "Retry once if the call is safe to repeat; otherwise check its effect first."
    ),
    "timeout": (
        "The server did not answer in time and was restarted. Retry once with a smaller "
        "request if possible; otherwise tell the user this server is not responding."
    ),
    "malformed_result": (
        "The server answered with something that is not a valid MCP result. Do not retry the "
        "same call; try another tool or tell the user."
    ),
    "server_error": (
        "The server rejected the request. Check the arguments against the tool's schema and "
        "call again with corrected arguments."
    ),
    "tool_error": (
        "The tool ran and reported an error. Read the message, fix the arguments or the "
        "request, and call again; do not repeat the identical call."
    ),
    "tool_withdrawn": (
        "The server no longer offers this tool. Use another tool of this context, or call "
        "load_context to pick another context."
    ),
}


class McpFault(AttentionScopingError):
    """A failed MCP request, classified: the code says what the model should do next."""

    def __init__(
        self, server: str, message: str, *, code: FaultCode, tool: str | None = None,
        detail: str | None = None,
    ) -> None:  # fmt: skip
        """Keep the code, the server, the model-facing message and optional detail."""
        super().__init__(f"{server}: {message}")
        self.code: FaultCode = code
        self.server = server
        self.tool = tool
        self.message = message
        self.detail = detail

    @property
    def reason(self) -> str:
        """The message with its detail in parentheses: why a server was left out."""
        return self.message + (f" ({self.detail})" if self.detail else "")


def fault_payload(fault: McpFault) -> dict[str, Any]:
    """The JSON body of the error ToolMessage for `fault` (stable key order)."""
    payload: dict[str, Any] = {
        "error": ErrorCode(fault.code).value,
        "server": fault.server,
    }
    if fault.tool is not None:
        payload["tool"] = fault.tool
    payload["message"] = fault.message
    if fault.detail:
        payload["detail"] = fault.detail
    payload["next_step"] = _NEXT_STEP[fault.code]
    return payload


def _safe_str(exc: BaseException) -> str:
    """`str(exc)`, or a placeholder when the exception's `__str__` itself raises."""
    try:
        return str(exc)
    except Exception:
        return "<the exception's message could not be read>"


def exception_text(exc: BaseException, limit: int = 300) -> str:
    """`Type: message` of `exc`, unwrapping single-member exception groups, cut to `limit`."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        text = "; ".join(exception_text(e, limit) for e in exc.exceptions[:3])
    else:
        message = " ".join(_safe_str(exc).split())
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside `exc` (itself when it is not a group)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaf_exceptions(inner)]
    return [exc]
