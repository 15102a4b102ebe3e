"""The one tool record of the package: `ToolSpec`, and the one-line summary every layer uses.

Framework-free: catalogs, the gate, the gateway, the radar and the measurements all describe a tool
with a `ToolSpec`; LangChain tools are converted once, in `attention_scoping.adapters.tools`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SUMMARY_MAX_CHARS = 200
"""One-line summaries are cut here (about 40-60 tokens), the size DESIGN.md allows per tool."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")



def summarize(text: str, max_chars: int = SUMMARY_MAX_CHARS) -> str:
    """First sentence of `text` on one line, cut at `max_chars` (summaries stay short)."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(first) <= max_chars:
        return first
    cut = first[: max_chars - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"

@dataclass(frozen=True)
class ToolSpec:
    """One tool of a catalog: what the model would be sent, plus where it came from."""

    id: str
    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False, compare=False)
    server: str | None = None
    preconditions: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    """Declarative preconditions on agent state (`{"authenticated": True}`), if any."""

    @property
    def summary(self) -> str:
        """One-line summary (first sentence of the description)."""
        return summarize(self.description)

    def provider_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function definition (what a provider is sent)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def parameter_names(self) -> list[str]:
        """Top-level parameter names of the schema, in order."""
        props = self.parameters.get("properties")
        return list(props) if isinstance(props, Mapping) else []



def tool_object_name(tool: object) -> str:
    """The name a model calls `tool` by, for a tool object or a plain function, without
    converting it (LangChain names a function's tool after the function).

    Raises:
        TypeError: `tool` is a provider tool dict (it cannot run locally) or not a tool.
    """
    if isinstance(tool, Mapping):
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name", tool.get("type"))
        msg = f"provider tool dict {name!r} cannot be executed locally"
        raise TypeError(msg)
    name = getattr(tool, "name", None)
    if isinstance(name, str) and not callable(name):
        return name
    function_name = getattr(tool, "__name__", None)
    if callable(tool) and isinstance(function_name, str):
        return function_name
    msg = f"not a tool: {tool!r}"
    raise TypeError(msg)
