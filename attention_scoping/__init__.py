"""attention-scoping: show an LLM agent only the tools and prompt text that matter now.

The public names below load lazily (PEP 562): `import attention_scoping.ledger` or the radar never
imports LangChain, and `ToolAttentionMiddleware` needs the `gate` extra only when it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports
from attention_scoping.common.extras import GATE_EXTRA_HINT

if TYPE_CHECKING:
    from attention_scoping.approval.middleware import ApprovalGate, ApprovalMiddleware
    from attention_scoping.gateway.tools import ToolGateway
    from attention_scoping.gating.middleware import ToolAttentionMiddleware
    from attention_scoping.gating.options import Promotion, SummaryPool
    from attention_scoping.hesitation.middleware import HesitationMiddleware
    from attention_scoping.hesitation.options import Grounding, Nudging, Radar
    from attention_scoping.hesitation.radar import Hesitation, detect_hesitation
    from attention_scoping.hesitation.repeats import RepeatedCallMiddleware
    from attention_scoping.scoping.breadcrumbs import STATE_KEY
    from attention_scoping.scoping.catalog import (
        LOAD_CONTEXT,
        Scope,
        ScopeCatalog,
        ScopeConfigError,
        UnknownScopeError,
    )
    from attention_scoping.scoping.middleware import AttentionScopingMiddleware, ScopingState
    from attention_scoping.scoping.options import Layout, Navigation
    from attention_scoping.scoping.prompts import PromptLayers, load_prompt_dir, read_prompt
    from attention_scoping.scoping.ranked import ScopeDisclosureOptions

__version__ = "0.1.0"

_EXPORTS = {
    "LOAD_CONTEXT": "scoping.catalog",
    "STATE_KEY": "scoping.breadcrumbs",
    "ApprovalGate": "approval.middleware",
    "ApprovalMiddleware": "approval.middleware",
    "AttentionScopingMiddleware": "scoping.middleware",
    "Grounding": "hesitation.options",
    "Hesitation": "hesitation.radar",
    "HesitationMiddleware": "hesitation.middleware",
    "Layout": "scoping.options",
    "Navigation": "scoping.options",
    "ScopeDisclosureOptions": "scoping.ranked",
    "Nudging": "hesitation.options",
    "Promotion": "gating.options",
    "PromptLayers": "scoping.prompts",
    "Radar": "hesitation.options",
    "RepeatedCallMiddleware": "hesitation.repeats",
    "Scope": "scoping.catalog",
    "ScopeCatalog": "scoping.catalog",
    "ScopeConfigError": "scoping.catalog",
    "ScopingState": "scoping.middleware",
    "SummaryPool": "gating.options",
    "ToolAttentionMiddleware": "gating.middleware",
    "ToolGateway": "gateway.tools",
    "UnknownScopeError": "scoping.catalog",
    "detect_hesitation": "hesitation.radar",
    "load_prompt_dir": "scoping.prompts",
    "read_prompt": "scoping.prompts",
}

__all__ = [
    "LOAD_CONTEXT",
    "STATE_KEY",
    "ApprovalGate",
    "ApprovalMiddleware",
    "AttentionScopingMiddleware",
    "Grounding",
    "Hesitation",
    "HesitationMiddleware",
    "Layout",
    "Navigation",
    "Nudging",
    "Promotion",
    "PromptLayers",
    "Radar",
    "RepeatedCallMiddleware",
    "Scope",
    "ScopeCatalog",
    "ScopeConfigError",
    "ScopeDisclosureOptions",
    "ScopingState",
    "SummaryPool",
    "ToolAttentionMiddleware",
    "ToolGateway",
    "UnknownScopeError",
    "detect_hesitation",
    "load_prompt_dir",
    "read_prompt",
]



__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, needs={"gating.": f"the 'gate' extra: {GATE_EXTRA_HINT}"}
)
