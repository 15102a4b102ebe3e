"""OpenAI's `allowed_tools`: the full tools array every call, what may be called in `tool_choice`.

`tool_choice={"type": "allowed_tools", ...}` restricts which of the sent tools the model may
call without changing the tools array, so OpenAI's prompt cache keeps its prefix. Chat
Completions spells it `{"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools":
[{"type": "function", "function": {"name": ...}}]}}`; a `ChatOpenAI(use_responses_api=True)`
gets the Responses form `{"type": "allowed_tools", "mode": "auto", "tools": [{"type":
"function", "name": ...}]}` (read from `request.model` on every call, never kept).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain.agents.middleware.types import ModelRequest

from attention_scoping.disclosure.choice import entry_name, forced_name, stable_order
from attention_scoping.middleware import Disclosed

ALLOWED_TOOLS = "allowed_tools"


def allowed_names(choice: Any) -> list[str] | None:
    """The tool names an `allowed_tools` choice (either form) allows; None for another choice."""
    if not isinstance(choice, Mapping) or choice.get("type") != ALLOWED_TOOLS:
        return None
    inner = choice.get(ALLOWED_TOOLS, choice)
    tools = inner.get("tools") if isinstance(inner, Mapping) else None
    names: list[str] = []
    for tool in tools or []:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def allowed_choice(names: Sequence[str], mode: str = "auto", *, responses: bool) -> dict[str, Any]:
    """The `allowed_tools` tool choice for `names` (`responses`: the Responses API form)."""
    if responses:
        tools = [{"type": "function", "name": n} for n in names]
        return {"type": ALLOWED_TOOLS, "mode": mode, "tools": tools}
    listed = [{"type": "function", "function": {"name": n}} for n in names]
    return {"type": ALLOWED_TOOLS, ALLOWED_TOOLS: {"mode": mode, "tools": listed}}


@dataclass(frozen=True)
class OpenAI:
    """Every tool in a fixed order; `tool_choice` allows only `shown` (a choice forcing a shown
    tool stays; `"required"` / `"any"` becomes the `required` mode; nothing shown: `"none"`).
    Needs `ChatOpenAI` on OpenAI's API; `Auto` picks it for one."""

    mode: ClassVar[str] = "openai"

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """`request` with the fixed tools array and an `allowed_tools` choice of `shown`."""
        tools = stable_order(request.tools)
        keep = set(shown)
        allowed = [entry_name(t) for t in tools if entry_name(t) in keep]
        choice = request.tool_choice
        forced = forced_name(choice)
        if forced is not None and forced in keep:
            return Disclosed(request.override(tools=tools), self.mode)
        if not allowed:
            return Disclosed(request.override(tools=tools, tool_choice="none"), self.mode)
        mode = "required" if choice in ("required", "any", True) else "auto"
        responses = getattr(request.model, "use_responses_api", None) is True
        choice = allowed_choice(allowed, mode, responses=responses)
        return Disclosed(request.override(tools=tools, tool_choice=choice), self.mode)
