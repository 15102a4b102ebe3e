"""The self-healing runtime: the hesitation radar (framework-free: `radar` scores a message with
the `rules` table over what `reading` finds in it, the disclosed `schemas` and the phrase
`markers`), what schemas a turn disclosed (`pending`), and the nudge in two forms:
`HesitationMiddleware` (a retry inside the model call, `middleware`) and
`HesitationNodeMiddleware` / `make_hesitation_node` (a post-model node, `node`); and
`RepeatedCallMiddleware` (`repeats`), which answers a repeated identical tool call with the
result the model already has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.hesitation.markers import ASKS_ABOUT_TOOLS
    from attention_scoping.hesitation.middleware import (
        HesitationGraphState,
        HesitationMiddleware,
        HesitationPolicy,
        honest_answer,
        is_nudge,
    )
    from attention_scoping.hesitation.node import HesitationNodeMiddleware, make_hesitation_node
    from attention_scoping.hesitation.options import Grounding, Nudging, Radar
    from attention_scoping.hesitation.pending import (
        NAVIGATION_TOOLS,
        NUDGE_MARK,
        GatewayTools,
        Pending,
        Via,
        bound_disclosures,
        current_turn,
        gateway_disclosures,
        hint_text,
        nudge_text,
        ungrounded_text,
    )
    from attention_scoping.hesitation.radar import (
        DEFAULT_MARKERS,
        DEFAULT_THRESHOLD,
        RULES,
        Hesitation,
        HesitationMarkers,
        ParamInfo,
        Rule,
        SchemaInfo,
        category_enabled,
        detect_hesitation,
        parse_schemas,
    )
    from attention_scoping.hesitation.repeats import (
        RepeatedCallMiddleware,
        find_repeat,
        repeat_payload,
    )
    from attention_scoping.hesitation.state import STATE_KEY, HesitationState

_EXPORTS = {
    "ASKS_ABOUT_TOOLS": "markers",
    "DEFAULT_MARKERS": "radar",
    "DEFAULT_THRESHOLD": "radar",
    "NAVIGATION_TOOLS": "pending",
    "GatewayTools": "pending",
    "STATE_KEY": "state",
    "bound_disclosures": "pending",
    "category_enabled": "radar",
    "current_turn": "pending",
    "detect_hesitation": "radar",
    "gateway_disclosures": "pending",
    "Grounding": "options",
    "Hesitation": "radar",
    "HesitationGraphState": "middleware",
    "HesitationMarkers": "radar",
    "HesitationMiddleware": "middleware",
    "HesitationNodeMiddleware": "node",
    "HesitationPolicy": "middleware",
    "make_hesitation_node": "node",
    "is_nudge": "middleware",
    "NUDGE_MARK": "pending",
    "Nudging": "options",
    "Radar": "options",
    "HesitationState": "state",
    "honest_answer": "middleware",
    "nudge_text": "pending",
    "hint_text": "pending",
    "ungrounded_text": "pending",
    "ParamInfo": "radar",
    "RULES": "radar",
    "Rule": "radar",
    "parse_schemas": "radar",
    "RepeatedCallMiddleware": "repeats",
    "find_repeat": "repeats",
    "repeat_payload": "repeats",
    "Pending": "pending",
    "SchemaInfo": "radar",
    "Via": "pending",
}

__all__ = [
    "ASKS_ABOUT_TOOLS",
    "DEFAULT_MARKERS",
    "DEFAULT_THRESHOLD",
    "NAVIGATION_TOOLS",
    "NUDGE_MARK",
    "RULES",
    "STATE_KEY",
    "GatewayTools",
    "Grounding",
    "Hesitation",
    "HesitationGraphState",
    "HesitationMarkers",
    "HesitationMiddleware",
    "HesitationNodeMiddleware",
    "HesitationPolicy",
    "HesitationState",
    "Nudging",
    "ParamInfo",
    "Pending",
    "Radar",
    "RepeatedCallMiddleware",
    "Rule",
    "SchemaInfo",
    "Via",
    "bound_disclosures",
    "category_enabled",
    "current_turn",
    "detect_hesitation",
    "find_repeat",
    "gateway_disclosures",
    "hint_text",
    "honest_answer",
    "is_nudge",
    "make_hesitation_node",
    "nudge_text",
    "parse_schemas",
    "repeat_payload",
    "ungrounded_text",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
