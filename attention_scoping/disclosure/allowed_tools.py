"""`disclosure="allowed_tools"`: every tool sent; the visible set in `tool_choice`.

OpenAI's `tool_choice={"type": "allowed_tools", ...}` restricts which of the sent tools the model
may call, without changing the tools array, so the prompt cache keeps its prefix. Chat
Completions spells it `{"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools":
[{"type": "function", "function": {"name": ...}}]}}`; with `use_responses_api=True` the
Responses form `{"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name":
...}]}` is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from attention_scoping.adapters.tools import forced_tool_name, tool_name
from attention_scoping.disclosure.allowed import ALLOWED_TOOLS
from attention_scoping.disclosure.base import (
    Disclosure,
    Shaped,
    ShapeRequest,
)
from attention_scoping.disclosure.choice import stable_order


class AllowedToolsDisclosure(Disclosure):
    """The full, stable tools array; what may be called travels in `tool_choice`."""

    mode = "allowed_tools"
    in_history: ClassVar[bool] = False

    def __init__(self, responses: bool = False) -> None:
        """`responses`: spell `tool_choice` for the Responses API."""
        self.responses = responses

    @classmethod
    def carries(cls, model: Any) -> str | None:
        """Only `ChatOpenAI` sends an `allowed_tools` tool choice."""
        if "ChatOpenAI" in cls.class_names(model):
            return None
        return "tool_choice 'allowed_tools' is an OpenAI API feature; it needs ChatOpenAI"

    @classmethod
    def create(cls, model: Any) -> AllowedToolsDisclosure:
        """The mode for `model`, in the Responses spelling when it uses that API."""
        return cls(responses=getattr(model, "use_responses_api", None) is True)

    def arrange(self, request: ShapeRequest) -> Shaped:
        """Every tool in a stable order; `tool_choice` allows the visible and loaded ones (a
        choice forcing one of them stays; `"required"` / `"any"` becomes the `required` mode;
        nothing to allow becomes `"none"`)."""
        shaped = stable_order(request.tools, request.loaded, loaded_last=False)
        allowed = [tool_name(t) for t in request.shown(shaped)]
        forced = forced_tool_name(request.tool_choice)
        if forced is not None and forced in allowed:
            return Shaped(shaped, request.tool_choice)
        if not allowed:
            return Shaped(shaped, "none" if shaped else None)
        mode = "required" if request.tool_choice in ("required", "any", True) else "auto"
        return Shaped(shaped, self.choice(allowed, mode))

    def choice(self, names: Sequence[str], mode: str = "auto") -> dict[str, Any]:
        """The `allowed_tools` tool choice for `names`."""
        if self.responses:
            tools = [{"type": "function", "name": n} for n in names]
            return {"type": ALLOWED_TOOLS, "mode": mode, "tools": tools}
        listed = [{"type": "function", "function": {"name": n}} for n in names]
        return {"type": ALLOWED_TOOLS, ALLOWED_TOOLS: {"mode": mode, "tools": listed}}
