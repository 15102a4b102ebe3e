"""Scoping: `TOOL_SCOPES` / `Scope` catalogs, the three prompt layers, `load_context`, the scope
gate and `AttentionScopingMiddleware` (the core of the package).

`catalog` and `prompts` are framework-free; `navigation`, `gate` and `middleware` are the
LangChain adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.scoping.breadcrumbs import (
        STATE_KEY,
        loaded_payload,
        scope_tools,
        unknown_context_payload,
    )
    from attention_scoping.scoping.catalog import (
        LOAD_CONTEXT,
        Scope,
        ScopeCatalog,
        ScopeConfigError,
        ScopesInput,
        ToolScopes,
        UnknownScopeError,
    )
    from attention_scoping.scoping.gate import (
        accepted_switch,
        review_call,
        review_load_context,
        sibling_calls,
    )
    from attention_scoping.scoping.middleware import (
        AttentionScopingMiddleware,
        ScopingState,
        UnscopedPolicy,
    )
    from attention_scoping.scoping.navigation import make_load_context_tool, switch_command
    from attention_scoping.scoping.options import Layout, Navigation
    from attention_scoping.scoping.prompts import (
        DEFAULT_CORE,
        INDEX_HEADER,
        NO_CONTEXT_MODULE,
        PromptLayers,
        PromptLayout,
        build_layers,
        capability_index,
        core_layer,
        load_prompt_dir,
        module_layer,
        read_prompt,
    )
    from attention_scoping.scoping.ranked import ScopeDisclosureOptions

_EXPORTS = {
    "DEFAULT_CORE": "prompts",
    "INDEX_HEADER": "prompts",
    "LOAD_CONTEXT": "catalog",
    "NO_CONTEXT_MODULE": "prompts",
    "STATE_KEY": "breadcrumbs",
    "accepted_switch": "gate",
    "AttentionScopingMiddleware": "middleware",
    "build_layers": "prompts",
    "capability_index": "prompts",
    "core_layer": "prompts",
    "load_prompt_dir": "prompts",
    "Layout": "options",
    "loaded_payload": "breadcrumbs",
    "make_load_context_tool": "navigation",
    "module_layer": "prompts",
    "Navigation": "options",
    "ScopeDisclosureOptions": "ranked",
    "PromptLayers": "prompts",
    "PromptLayout": "prompts",
    "read_prompt": "prompts",
    "review_call": "gate",
    "review_load_context": "gate",
    "Scope": "catalog",
    "scope_tools": "breadcrumbs",
    "ScopeCatalog": "catalog",
    "ScopeConfigError": "catalog",
    "ScopesInput": "catalog",
    "ScopingState": "middleware",
    "sibling_calls": "gate",
    "switch_command": "navigation",
    "ToolScopes": "catalog",
    "unknown_context_payload": "breadcrumbs",
    "UnknownScopeError": "catalog",
    "UnscopedPolicy": "middleware",
}

__all__ = [
    "DEFAULT_CORE",
    "INDEX_HEADER",
    "LOAD_CONTEXT",
    "NO_CONTEXT_MODULE",
    "STATE_KEY",
    "AttentionScopingMiddleware",
    "Layout",
    "Navigation",
    "PromptLayers",
    "PromptLayout",
    "Scope",
    "ScopeCatalog",
    "ScopeConfigError",
    "ScopeDisclosureOptions",
    "ScopesInput",
    "ScopingState",
    "ToolScopes",
    "UnknownScopeError",
    "UnscopedPolicy",
    "accepted_switch",
    "build_layers",
    "capability_index",
    "core_layer",
    "load_prompt_dir",
    "loaded_payload",
    "make_load_context_tool",
    "module_layer",
    "read_prompt",
    "review_call",
    "review_load_context",
    "scope_tools",
    "sibling_calls",
    "switch_command",
    "unknown_context_payload",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
