"""Uniform access to tools of every shape LangChain accepts: names, summaries, provider schemas."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

ToolLike = BaseTool | Callable[..., Any] | Mapping[str, Any]
"""A LangChain tool, a plain function (turned into a tool), or a provider tool dict."""

SUMMARY_MAX_CHARS = 200
"""One-line summaries are cut here (about 40-60 tokens), the size DESIGN.md allows per tool."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def tool_name(tool: ToolLike) -> str:
    """Return the name a model uses to call `tool` (provider dicts included)."""
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, Mapping):
        if isinstance(tool.get("function"), Mapping) and "name" in tool["function"]:
            return str(tool["function"]["name"])
        if "name" in tool:
            return str(tool["name"])
        return str(tool.get("type", "unknown"))
    return getattr(tool, "__name__", repr(tool))


def as_base_tool(tool: ToolLike) -> BaseTool:
    """Turn a callable into a `BaseTool` (as `create_agent` does); tools pass through."""
    if isinstance(tool, BaseTool):
        return tool
    if isinstance(tool, Mapping):
        msg = f"provider tool dict {tool_name(tool)!r} cannot be executed locally"
        raise TypeError(msg)
    if callable(tool):
        return as_tool(tool)
    msg = f"not a tool: {tool!r}"
    raise TypeError(msg)


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


def to_provider_schema(tool: ToolLike) -> dict[str, Any]:
    """The tool as an OpenAI-style function-calling dict: what a provider is sent per call."""
    if isinstance(tool, Mapping):
        return dict(tool)
    return convert_to_openai_tool(tool)
