"""Provider-native disclosure modes for the scoping and gating middlewares (`disclosure=`).

The shared interface and the mode registry are in `attention_scoping.disclosure.base`; each mode
lives in its own module (`rewrite`, `anthropic`, `allowed_tools`, `openai`).
"""

from __future__ import annotations

from attention_scoping.disclosure.base import (
    DEFAULT_DISCLOSURE,
    DISCLOSURE_MODES,
    SEARCH_TOOL,
    VISIBLE_KEY,
    Disclosure,
    DisclosureMode,
    DisclosureSetting,
    ResolvedMode,
    Shaped,
    auto_mode,
    resolve_disclosure,
    stable_order,
)

__all__ = [
    "DEFAULT_DISCLOSURE",
    "DISCLOSURE_MODES",
    "SEARCH_TOOL",
    "VISIBLE_KEY",
    "Disclosure",
    "DisclosureMode",
    "DisclosureSetting",
    "ResolvedMode",
    "Shaped",
    "auto_mode",
    "resolve_disclosure",
    "stable_order",
]
