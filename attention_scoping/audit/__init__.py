"""`attention-scoping audit`: what a tool set costs per model call, and what scoping, gating
and the gateway would send instead.

Example:
    ```python
    from attention_scoping.audit import audit, load_target

    figures = audit(load_target("catalog.jsonl"), turns=20)
    print(figures.eager_tokens_per_call)
    ```
"""

from attention_scoping.audit.figures import AuditFigures, MethodFigure, ScopeFigure, audit
from attention_scoping.audit.report import render, write_json
from attention_scoping.audit.target import AuditTarget, TargetError, load_target

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
