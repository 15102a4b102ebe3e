"""`attention-scoping audit`: what a tool set costs per model call, and what scoping, gating
and the gateway would send instead.

Example:
    ```python
    from attention_scoping_lab.audit import audit, load_target

    figures = audit(load_target("catalog.jsonl"), turns=20)
    print(figures.eager_tokens_per_call)
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping_lab.audit.figures import (
        AuditFigures,
        MethodFigure,
        ScopeFigure,
        audit,
    )
    from attention_scoping_lab.audit.report import render, write_json
    from attention_scoping_lab.audit.target import AuditTarget, TargetError, load_target

_EXPORTS = {
    "audit": "figures",
    "AuditFigures": "figures",
    "AuditTarget": "target",
    "load_target": "target",
    "MethodFigure": "figures",
    "render": "report",
    "ScopeFigure": "figures",
    "TargetError": "target",
    "write_json": "report",
}

__all__ = [
    "AuditFigures",
    "AuditTarget",
    "MethodFigure",
    "ScopeFigure",
    "TargetError",
    "audit",
    "load_target",
    "render",
    "write_json",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
