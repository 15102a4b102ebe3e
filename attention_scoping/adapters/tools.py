"""LangChain tools of every accepted shape (BaseTool, function, provider dict): names, provider
schemas, and their conversion to the one framework-free record, `ToolSpec`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from attention_scoping.core.tool import SUMMARY_MAX_CHARS, ToolSpec, summarize

ToolLike = BaseTool | Callable[..., Any] | Mapping[str, Any]
"""A LangChain tool, a plain function (turned into a tool), or a provider tool dict."""


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


def to_provider_schema(tool: ToolLike) -> dict[str, Any]:
    """The tool as an OpenAI-style function-calling dict: what a provider is sent per call."""
    if isinstance(tool, Mapping):
        return dict(tool)
    return convert_to_openai_tool(tool)


def specs_from_tools(tools: Iterable[ToolLike | Mapping[str, Any]]) -> list[ToolSpec]:
    """ToolSpecs of LangChain tools, plain functions or provider dicts (ids = names)."""
    out = []
    for tool in tools:
        fn = to_provider_schema(tool).get("function", {})
        name = str(fn.get("name", ""))
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        out.append(ToolSpec(name, name, str(fn.get("description", "")), dict(params)))
    return out

__all__ = [
    "SUMMARY_MAX_CHARS",
    "ToolLike",
    "as_base_tool",
    "specs_from_tools",
    "summarize",
    "to_provider_schema",
    "tool_name",
]
