"""`disclosure="rewrite"`: the tools array narrowed to the visible set (any chat model)."""

from __future__ import annotations

from typing import ClassVar

from attention_scoping.adapters.tools import tool_name, visible_tool_choice
from attention_scoping.disclosure.base import Disclosure, Shaped, ShapeRequest


class RewriteDisclosure(Disclosure):
    """Send only the visible tools (provider dicts pass through), in the order given: today's
    behaviour, for any chat model; the prompt prefix changes whenever the visible set does."""

    mode = "rewrite"
    native: ClassVar[bool] = False
    in_history: ClassVar[bool] = False

    def arrange(self, request: ShapeRequest) -> Shaped:
        """The visible tools, loaded ones included, and a `tool_choice` that names one of them."""
        shown = set(request.visible) | set(request.loaded)
        kept = [t for t in request.tools if isinstance(t, dict) or tool_name(t) in shown]
        return Shaped(kept, visible_tool_choice(request.tool_choice, kept))
