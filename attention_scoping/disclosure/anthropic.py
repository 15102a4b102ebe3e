"""`disclosure="anthropic"`: every tool sent, deferred; `tool_reference` blocks disclose them.

The tools array is the same on every request: loaded tools (always-on, pinned, `load_context`,
the search tool) plain, every other tool with `defer_loading: true` (set through the tool's
`extras`, which langchain-anthropic copies onto the tool definition). Anthropic does not render
a deferred tool into the prompt; a `tool_result` whose content holds
`{"type": "tool_reference", "tool_name": name}` expands it there, at the tail, so the cached
prefix survives. A `cache_control` breakpoint is never left on a deferred tool (the API answers
400): the loaded tools go last, where `AnthropicPromptCachingMiddleware` puts its breakpoint, and
a breakpoint found on a deferred tool moves to the last loaded one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from attention_scoping.adapters.tools import visible_tool_choice
from attention_scoping.disclosure.base import (
    Disclosure,
    Shaped,
    ShapeRequest,
    ToolEntry,
)
from attention_scoping.disclosure.choice import stable_order
from attention_scoping.disclosure.native import (
    CACHE,
    DEFER,
    MAX_DEFERRED,
    REFERENCE,
    _extras,
    deferred,
    references,
)


def _with_extras(tool: BaseTool, extras: Mapping[str, Any]) -> BaseTool:
    """`tool` with `extras`, the same object when they are unchanged."""
    if _extras(tool) == dict(extras):
        return tool
    return tool.model_copy(update={"extras": dict(extras)})


class AnthropicDisclosure(Disclosure):
    """Defer every tool but the loaded ones; disclose with `tool_reference` blocks."""

    mode = "anthropic"
    max_deferred: ClassVar[int | None] = MAX_DEFERRED

    def __init__(self) -> None:
        """An empty cache of deferred copies."""
        self._copies: dict[tuple[int, str], tuple[BaseTool, BaseTool]] = {}

    def _copy(self, tool: BaseTool, extras: Mapping[str, Any]) -> BaseTool:
        """`tool` with `extras`: the same copy every call (indexes keyed by identity stay
        warm, and 10,000 tools are not copied per request)."""
        if _extras(tool) == dict(extras):
            return tool
        key = (id(tool), repr(sorted(extras.items())))
        hit = self._copies.get(key)
        if hit is not None and hit[0] is tool:
            return hit[1]
        if len(self._copies) > 2 * MAX_DEFERRED:
            self._copies.clear()
        copy = _with_extras(tool, extras)
        self._copies[key] = (tool, copy)
        return copy

    @classmethod
    def carries(cls, model: Any) -> str | None:
        """Only `ChatAnthropic` sends `defer_loading` and `tool_reference` blocks."""
        if "ChatAnthropic" in cls.class_names(model):
            return None
        return "deferred tools and tool_reference blocks need ChatAnthropic (langchain-anthropic)"

    def arrange(self, request: ShapeRequest) -> Shaped:
        """Every tool, the loaded ones last and plain, the rest deferred without a breakpoint;
        a `tool_choice` naming a tool not visible becomes `"any"`."""
        shaped: list[ToolEntry] = []
        moved: Any = None
        for tool in stable_order(request.tools, request.loaded, loaded_last=True):
            if not isinstance(tool, BaseTool):
                shaped.append(tool)
                continue
            extras = _extras(tool)
            if tool.name in request.loaded:
                extras.pop(DEFER, None)
            else:
                extras[DEFER] = True
                moved = extras.pop(CACHE, moved)
            shaped.append(self._copy(tool, extras))
        if moved is not None:
            shaped = _breakpoint_on_last_loaded(shaped, moved)
        self.check(shaped, request.loaded)
        choice = visible_tool_choice(request.tool_choice, request.shown(shaped))
        return Shaped(shaped, "any" if choice == "required" else choice)

    def content(self, names: Sequence[str], text: str | None = None) -> str | list[str | dict]:
        """`tool_reference` blocks for `names`, then `text` as a text block."""
        blocks: list[str | dict] = [{"type": REFERENCE, "tool_name": n} for n in names]
        if text:
            blocks.append({"type": "text", "text": text})
        return blocks

    def disclosed(self, messages: Sequence[Any]) -> frozenset[str]:
        """Every tool a `tool_reference` in the history has expanded."""
        found: set[str] = set()
        for message in messages:
            if isinstance(message, BaseMessage) and message.type in ("tool", "human"):
                found.update(references(message.content))
        return frozenset(found)

    def check(self, tools: Sequence[ToolEntry], loaded: Collection[str]) -> None:
        """Refuse more than `MAX_DEFERRED` deferred tools, or none loaded."""
        count = sum(1 for t in tools if deferred(t))
        if count > MAX_DEFERRED:
            msg = (
                f"disclosure='anthropic' would defer {count} tools; Anthropic accepts at most "
                f"{MAX_DEFERRED}: split the agent, or use disclosure='rewrite'"
            )
            raise ValueError(msg)
        if tools and count == len(tools):
            msg = (
                "disclosure='anthropic' needs at least one tool that is not deferred (always-on "
                "or pinned, load_context or the search tool); every tool would be deferred"
            )
            raise ValueError(msg)


def _breakpoint_on_last_loaded(tools: list[ToolEntry], cache_control: Any) -> list[ToolEntry]:
    """`tools` with `cache_control` on the last loaded `BaseTool` (none: dropped)."""
    for i in range(len(tools) - 1, -1, -1):
        tool = tools[i]
        if isinstance(tool, BaseTool) and not deferred(tool):
            extras = {**_extras(tool), CACHE: cache_control}
            return [*tools[:i], _with_extras(tool, extras), *tools[i + 1 :]]
    return tools
