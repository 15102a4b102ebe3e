"""Executable stand-ins for catalog tools (`ToolSpec`s): they accept the schema and echo the call.

Catalog and simulated suites judge which tool a model calls and with what arguments; the tools
themselves only need to run and answer something plausible, so the agent loop continues.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping.common.tool import ToolSpec

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def provider_name(name: str) -> str:
    """`name` as providers accept it (`^[A-Za-z0-9_-]{1,64}$`): other characters become `_`."""
    return _INVALID.sub("_", name)[:64] or "tool"


def spec_tool(spec: ToolSpec, name: str | None = None) -> BaseTool:
    """A LangChain tool with the spec's name, description and JSON schema that echoes its call;
    a write spec carries `{"risk": "write"}` in its metadata, so the package treats it as one."""
    tool_name = name or provider_name(spec.name)

    def run(**kwargs: Any) -> str:
        return json.dumps({"ok": True, "tool": tool_name, "arguments": kwargs}, default=str)

    schema = dict(spec.parameters) if spec.parameters else {"type": "object", "properties": {}}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return StructuredTool.from_function(
        func=run,
        name=tool_name,
        description=spec.description or tool_name,
        args_schema=schema,
        metadata={"risk": "write"} if spec.is_write else None,
    )


def spec_tools(specs: Iterable[ToolSpec]) -> tuple[list[BaseTool], dict[str, str]]:
    """Tools for the specs (first spec wins a provider name) and the map spec id -> tool name."""
    tools: list[BaseTool] = []
    names: dict[str, str] = {}
    taken: set[str] = set()
    for spec in specs:
        name = provider_name(spec.name)
        if name in taken:
            continue
        taken.add(name)
        names[spec.id] = name
        tools.append(spec_tool(spec, name))
    return tools, names
