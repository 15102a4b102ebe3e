"""What the native modes share: the fixed tool order and a `tool_choice` kept to `shown`."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

ToolEntry = BaseTool | dict[str, Any]
"""A tool as a `ModelRequest` holds it."""

KEYWORDS = frozenset({"auto", "any", "none", "required"})


def entry_name(tool: ToolEntry) -> str:
    """The name of a tool entry (a provider dict's `name`, or its function's)."""
    if isinstance(tool, BaseTool):
        return tool.name
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return str(name or tool.get("type") or "")


def stable_order(
    tools: Iterable[ToolEntry], loaded: Collection[str] = (), *, loaded_last: bool = True
) -> list[ToolEntry]:
    """`tools` in the order the native modes send them, the same whatever order they were
    registered in: provider dicts first (as given), then the other tools by name, then the
    `loaded` ones by name (last, where a cache breakpoint on the last tool may go; first with
    `loaded_last=False`); one entry per name."""
    seen: set[str] = set()
    dicts: list[ToolEntry] = []
    named: list[BaseTool] = []
    for tool in tools:
        name = entry_name(tool)
        if name in seen:
            continue
        seen.add(name)
        if isinstance(tool, BaseTool):
            named.append(tool)
        else:
            dicts.append(tool)
    named.sort(key=lambda t: ((t.name in loaded) == loaded_last, t.name))
    return [*dicts, *named]


def forced_name(choice: Any) -> str | None:
    """The tool a `tool_choice` forces (a name, or a dict naming one), else None."""
    if isinstance(choice, Mapping):
        function = choice.get("function")
        named = choice.get("name") or (
            function.get("name") if isinstance(function, Mapping) else None
        )
        return named if isinstance(named, str) else None
    if isinstance(choice, str) and choice not in KEYWORDS:
        return choice
    return None


def narrowed_choice(choice: Any, shown: Collection[str]) -> Any:
    """`choice`, except one forcing a tool not in `shown`, which becomes `"auto"`."""
    named = forced_name(choice)
    return "auto" if named is not None and named not in shown else choice
