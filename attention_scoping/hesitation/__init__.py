"""The self-healing runtime: the hesitation radar (`radar`, framework-free), what schemas a turn
disclosed (`pending`), and `HesitationMiddleware` (the nudge loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.hesitation.middleware import (
        ASKS_ABOUT_TOOLS,
        STATE_KEY,
        HesitationGraphState,
        HesitationMiddleware,
        HesitationState,
        honest_answer,
    )
    from attention_scoping.hesitation.pending import (
        META_TOOLS,
        Pending,
        Via,
        bound_disclosures,
        current_turn,
        gateway_disclosures,
        nudge_text,
    )
    from attention_scoping.hesitation.radar import (
        DEFAULT_MARKERS,
        DEFAULT_THRESHOLD,
        Hesitation,
        HesitationMarkers,
        ParamInfo,
        SchemaInfo,
        category_enabled,
        detect_hesitation,
        parse_schemas,
    )

_EXPORTS = {
    "ASKS_ABOUT_TOOLS": "middleware",
    "DEFAULT_MARKERS": "radar",
    "DEFAULT_THRESHOLD": "radar",
    "META_TOOLS": "pending",
    "STATE_KEY": "middleware",
    "bound_disclosures": "pending",
    "category_enabled": "radar",
    "current_turn": "pending",
    "detect_hesitation": "radar",
    "gateway_disclosures": "pending",
    "Hesitation": "radar",
    "HesitationGraphState": "middleware",
    "HesitationMarkers": "radar",
    "HesitationMiddleware": "middleware",
    "HesitationState": "middleware",
    "honest_answer": "middleware",
    "nudge_text": "pending",
    "ParamInfo": "radar",
    "parse_schemas": "radar",
    "Pending": "pending",
    "SchemaInfo": "radar",
    "Via": "pending",
}

__all__ = [
    "ASKS_ABOUT_TOOLS",
    "DEFAULT_MARKERS",
    "DEFAULT_THRESHOLD",
    "META_TOOLS",
    "STATE_KEY",
    "Hesitation",
    "HesitationGraphState",
    "HesitationMarkers",
    "HesitationMiddleware",
    "HesitationState",
    "ParamInfo",
    "Pending",
    "SchemaInfo",
    "Via",
    "bound_disclosures",
    "category_enabled",
    "current_turn",
    "detect_hesitation",
    "gateway_disclosures",
    "honest_answer",
    "nudge_text",
    "parse_schemas",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
