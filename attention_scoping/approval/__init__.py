"""Human approval of write tools: signed single-use approval tokens bound to the exact call
(`ApprovalGate`) and `ApprovalMiddleware` (LangGraph `interrupt` with an approval card).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.approval.middleware import (
        APPROVAL_KIND,
        WRITE_TOOLS_PROMPT,
        Approval,
        ApprovalGate,
        ApprovalMiddleware,
        Validate,
        asks_approval,
        write_tool_names,
    )

_EXPORTS = {
    "APPROVAL_KIND": "middleware",
    "WRITE_TOOLS_PROMPT": "middleware",
    "Approval": "middleware",
    "ApprovalGate": "middleware",
    "ApprovalMiddleware": "middleware",
    "Validate": "middleware",
    "asks_approval": "middleware",
    "write_tool_names": "middleware",
}

__all__ = [
    "APPROVAL_KIND",
    "WRITE_TOOLS_PROMPT",
    "Approval",
    "ApprovalGate",
    "ApprovalMiddleware",
    "Validate",
    "asks_approval",
    "write_tool_names",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
