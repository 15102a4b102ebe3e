"""attention-scoping: show an LLM agent only the tools and prompt text that matter now."""

from attention_scoping.middleware import AttentionScopingMiddleware, ScopingState
from attention_scoping.navigation import STATE_KEY
from attention_scoping.prompts import PromptLayers, load_prompt_dir, read_prompt
from attention_scoping.scopes import (
    LOAD_CONTEXT,
    Scope,
    ScopeCatalog,
    ScopeConfigError,
    UnknownScopeError,
)

__all__ = [
    "LOAD_CONTEXT",
    "STATE_KEY",
    "AttentionScopingMiddleware",
    "PromptLayers",
    "Scope",
    "ScopeCatalog",
    "ScopeConfigError",
    "ScopingState",
    "UnknownScopeError",
    "load_prompt_dir",
    "read_prompt",
]

__version__ = "0.1.0"
