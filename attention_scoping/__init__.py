"""attention-scoping: show an LLM agent only the tools and prompt text that matter now."""

from attention_scoping.approval import ApprovalGate, ApprovalMiddleware
from attention_scoping.gateway import ToolGateway
from attention_scoping.hesitation import HesitationMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware, ScopingState
from attention_scoping.navigation import STATE_KEY
from attention_scoping.prompts import PromptLayers, load_prompt_dir, read_prompt
from attention_scoping.radar import Hesitation, detect_hesitation
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
    "ApprovalGate",
    "ApprovalMiddleware",
    "AttentionScopingMiddleware",
    "Hesitation",
    "HesitationMiddleware",
    "PromptLayers",
    "Scope",
    "ScopeCatalog",
    "ScopeConfigError",
    "ScopingState",
    "ToolAttentionMiddleware",
    "ToolGateway",
    "UnknownScopeError",
    "detect_hesitation",
    "load_prompt_dir",
    "read_prompt",
]

__version__ = "0.1.0"

_GATING = {"ToolAttentionMiddleware"}


def __getattr__(name: str) -> object:
    """Gating needs numpy (the `gate` extra): import it only when asked for."""
    if name in _GATING:
        try:
            from attention_scoping.gating import ToolAttentionMiddleware
        except ImportError as exc:
            msg = f"{name} needs the 'gate' extra: pip install 'attention-scoping[gate]' ({exc})"
            raise ImportError(msg) from exc
        return ToolAttentionMiddleware
    msg = f"module 'attention_scoping' has no attribute {name!r}"
    raise AttributeError(msg)
