"""attention-scoping: show an LLM agent only the tools and prompt text that matter now.

The core: scopes and their catalog, the prompt layouts, `load_context`, the enforced gate, the
middleware and the hand-built-graph nodes. It imports LangChain, LangGraph and the standard
library only. Every other part is an add-on in a subpackage (`attention_scoping.gating`,
`.disclosure`, `.hesitation`, `.safety`, `.mcp`, ...) built on these names.

Names load on first use (PEP 562), so `import attention_scoping.ledger` stays LangChain-free.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_scoping.errors import (
        AttentionScopingError,
        ErrorCode,
        ScopeConfigError,
        StateSchemaError,
        UnknownScopeError,
    )
    from attention_scoping.gate import record_of
    from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node
    from attention_scoping.middleware import (
        AttentionScopingMiddleware,
        Disclosed,
        Disclosure,
        Rewrite,
        ScopingState,
    )
    from attention_scoping.prompt import Layout, PromptLayers, load_prompt_dir, read_prompt
    from attention_scoping.risk import declared_read, declared_write
    from attention_scoping.scopes import LOAD_CONTEXT, STATE_KEY, Scope, ScopeCatalog
    from attention_scoping.select import LexicalSelector, Selection, Selector

__version__ = "0.1.0"

_EXPORTS = {
    "AttentionScopingError": "errors",
    "ErrorCode": "errors",
    "ScopeConfigError": "errors",
    "StateSchemaError": "errors",
    "UnknownScopeError": "errors",
    "record_of": "gate",
    "ScopedAgentState": "graph",
    "make_model_node": "graph",
    "make_tool_node": "graph",
    "AttentionScopingMiddleware": "middleware",
    "Disclosed": "middleware",
    "Disclosure": "middleware",
    "Rewrite": "middleware",
    "ScopingState": "middleware",
    "Layout": "prompt",
    "PromptLayers": "prompt",
    "load_prompt_dir": "prompt",
    "read_prompt": "prompt",
    "declared_read": "risk",
    "declared_write": "risk",
    "LOAD_CONTEXT": "scopes",
    "STATE_KEY": "scopes",
    "Scope": "scopes",
    "ScopeCatalog": "scopes",
    "LexicalSelector": "select",
    "Selection": "select",
    "Selector": "select",
}

__all__ = [
    "LOAD_CONTEXT",
    "STATE_KEY",
    "AttentionScopingError",
    "AttentionScopingMiddleware",
    "Disclosed",
    "Disclosure",
    "ErrorCode",
    "Layout",
    "LexicalSelector",
    "PromptLayers",
    "Rewrite",
    "Scope",
    "ScopeCatalog",
    "ScopeConfigError",
    "ScopedAgentState",
    "ScopingState",
    "Selection",
    "Selector",
    "StateSchemaError",
    "UnknownScopeError",
    "declared_read",
    "declared_write",
    "load_prompt_dir",
    "make_model_node",
    "make_tool_node",
    "read_prompt",
    "record_of",
]


def __getattr__(name: str) -> Any:
    """Import a core name on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'attention_scoping' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"attention_scoping.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The core names and the module's own."""
    return sorted([*globals(), *_EXPORTS])
