"""LangChain tools of every accepted shape (BaseTool, function, provider dict): names, provider
schemas, and their conversion to the one framework-free record, `ToolSpec`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from attention_scoping.common.tool import (
    SUMMARY_MAX_CHARS,
    ToolSpec,
    approval_required,
    check_risk,
    metadata_risk,
    summarize,
)

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


def tool_metadata(tool: object) -> Mapping[str, Any]:
    """A tool's `metadata` (empty for functions and provider dicts)."""
    meta = getattr(tool, "metadata", None)
    return meta if isinstance(meta, Mapping) else {}


def needs_approval(tool: object) -> bool:
    """Whether a tool's metadata marks it for human approval (`risk="write"` or
    `requires_approval=True`; see `attention_scoping.common.tool.approval_rule`)."""
    return approval_required(tool_metadata(tool))


PINNED = "pinned"
"""Metadata key of a tool every gate must always send (`metadata={"pinned": True}`). The scoping
middleware sets it on its always-on tools, so a gate after it never drops them."""


def is_pinned(tool: object) -> bool:
    """Whether a tool's metadata marks it as always sent (see `PINNED`)."""
    return tool_metadata(tool).get(PINNED) is True


def mark_pinned(tool: BaseTool) -> None:
    """Mark `tool` as always sent (a new metadata dict, so a shared one is not changed)."""
    if not is_pinned(tool):
        tool.metadata = {**(tool.metadata or {}), PINNED: True}


def spec_from_tool(
    tool: ToolLike,
    *,
    risk: str | None = None,
    requires_approval: bool | None = None,
    defaults: Mapping[str, Any] | None = None,
    strict: bool = True,
) -> ToolSpec:
    """The `ToolSpec` of one tool (id = name). Unset options are read from `tool.metadata`
    (`risk`, `requires_approval`, `defaults`); a write tool requires approval unless
    `requires_approval=False` is explicit.

    `strict=False` never raises on metadata (for per-call readers such as a middleware hook):
    an unknown risk reads as `read` and defaults for unknown parameters are dropped, as
    `ToolSpec.from_schema` does.

    Raises:
        ValueError: (strict) an unknown risk, or defaults naming parameters the schema lacks.
    """
    meta = tool_metadata(tool)
    fn = to_provider_schema(tool).get("function", {})
    name = str(fn.get("name", "")) or tool_name(tool)
    description = str(fn.get("description") or "")
    params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
    chosen = risk or meta.get("risk") or metadata_risk(meta)
    explicit = requires_approval if requires_approval is not None else meta.get("requires_approval")
    declared = risk == "write" or approval_required(meta)  # a write someone declared
    approval = declared if explicit is None else bool(explicit)
    hints = defaults if defaults is not None else meta.get("defaults")
    suggested = dict(hints) if isinstance(hints, Mapping) else {}
    if not strict:
        return ToolSpec.from_schema(
            {
                "name": name,
                "description": description,
                "parameters": params,
                "risk": chosen,
                "requires_approval": approval,
                "defaults": suggested,
            }
        )
    return ToolSpec(
        id=name,
        name=name,
        description=description,
        parameters=params,
        risk=check_risk(chosen, tool=name),
        approval=approval,
        defaults=suggested,
    )


def specs_from_tools(tools: Iterable[ToolLike | Mapping[str, Any]]) -> list[ToolSpec]:
    """ToolSpecs of LangChain tools, plain functions or provider dicts (ids = names)."""
    out = []
    for tool in tools:
        fn = to_provider_schema(tool).get("function", {})
        name = str(fn.get("name", ""))
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        out.append(ToolSpec(name, name, str(fn.get("description", "")), dict(params)))
    return out


def forced_tool_name(choice: Any) -> str | None:
    """The tool a `tool_choice` forces by name, if any ('auto', 'required'... force none)."""
    if isinstance(choice, str):
        return None if choice in {"auto", "none", "any", "required"} else choice
    if isinstance(choice, Mapping):
        fn = choice.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return str(fn["name"])
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
    return None


def visible_tool_choice(choice: Any, tools: Iterable[ToolLike | Mapping[str, Any]]) -> Any:
    """`choice`, or `"required"` when it forces a tool that is not in `tools`: a provider
    rejects a request whose `tool_choice` names a tool it was not sent."""
    forced = forced_tool_name(choice)
    if forced is None or forced in {tool_name(t) for t in tools}:
        return choice
    return "required"


__all__ = [
    "PINNED",
    "SUMMARY_MAX_CHARS",
    "ToolLike",
    "as_base_tool",
    "forced_tool_name",
    "is_pinned",
    "mark_pinned",
    "needs_approval",
    "spec_from_tool",
    "specs_from_tools",
    "summarize",
    "to_provider_schema",
    "tool_metadata",
    "tool_name",
    "visible_tool_choice",
]
