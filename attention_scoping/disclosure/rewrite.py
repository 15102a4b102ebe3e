"""`disclosure="rewrite"`: the tools array narrowed to the visible set (any chat model)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from attention_scoping.adapters.tools import tool_name, visible_tool_choice
from attention_scoping.disclosure.base import Disclosure, ResolvedMode, Shaped, ToolEntry


class RewriteDisclosure(Disclosure):
    """Send only the visible tools (provider dicts pass through), in the order given: today's
    behaviour, for any chat model; the prompt prefix changes whenever the visible set does."""

    mode: ClassVar[ResolvedMode] = "rewrite"
    native: ClassVar[bool] = False
    in_history: ClassVar[bool] = False

    def shape(
        self,
        tools: Sequence[ToolEntry],
        *,
        visible: Collection[str],
        loaded: Collection[str],
        tool_choice: Any = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> Shaped:
        """The visible tools, loaded ones included, and a `tool_choice` that names one of them."""
        shown = set(visible) | set(loaded)
        kept = [t for t in tools if isinstance(t, dict) or tool_name(t) in shown]
        return Shaped(kept, visible_tool_choice(tool_choice, kept))
