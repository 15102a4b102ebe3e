"""The blast-radius rule for the add-ons, failing closed: code may assist with declared reads;
only the model or the application opens anything else (the core's `attention_scoping.risk`).

Whatever the package decides on the model's behalf (pre-selection, start sets, hints, nudges, the
gate's promotions, `on_foreign_tool="switch"`, the gateway's prompt pool) may put only tools that
read in view, or name them. A tool that writes comes into view only in a scope the model loaded
itself with `load_context` or the application set as `active_context`, and still passes approval.
This module is the one place that says which tools write and who may open them; every part asks it.

Framework-free: it reads a tool's metadata mapping (LangChain's `BaseTool.metadata`, an MCP tool's
`annotations` included) or a `ToolSpec`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from attention_scoping.common.tool import ToolSpec
from attention_scoping.risk import declared_read

__all__ = [
    "OPENERS",
    "Opener",
    "may_open",
    "tool_listing",
    "writes",
    "writes_metadata",
]

Opener = Literal["model", "application", "code"]
"""Who puts a tool in view: the model (its own `load_context` call), the application (an
`active_context` it set, or a tool list it chose), or code deciding for the model (pre-selection,
start sets, hints, nudges, promotions, routing)."""

OPENERS: tuple[Opener, ...] = ("model", "application", "code")


def writes_metadata(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a tool with this metadata may change something: unless someone declared it a
    read (`attention_scoping.risk.declared_read`), it may. No metadata at all: it may write."""
    return not declared_read(metadata if isinstance(metadata, Mapping) else {})


def writes(tool: ToolSpec | Mapping[str, Any] | object) -> bool:
    """Whether `tool` may change something: a `ToolSpec` (its risk or approval), a metadata
    mapping, or any object with a `metadata` mapping (a LangChain `BaseTool`)."""
    if isinstance(tool, ToolSpec):
        return tool.is_write or tool.approval is True
    if isinstance(tool, Mapping):
        return writes_metadata(tool)
    meta = getattr(tool, "metadata", None)
    return writes_metadata(meta if isinstance(meta, Mapping) else None)


def may_open(tool: ToolSpec | Mapping[str, Any] | object, opener: Opener) -> bool:
    """Whether `opener` may put `tool` in view, name it in a hint, or nudge toward it.

    The model and the application may open any tool; code deciding for the model may open only
    tools that read.
    """
    if opener not in OPENERS:
        msg = f"unknown opener {opener!r}; valid: {', '.join(OPENERS)}"
        raise ValueError(msg)
    return opener != "code" or not writes(tool)


def tool_listing(
    names: Sequence[str],
    writing: Collection[str],
    *,
    limit: int,
    more: str = ", …",
    label: str = "tools: ",
) -> str:
    """Code-written text about a group of tools that names only the ones that read.

    The first `limit` reading tools follow `label` (`more` marks the rest); the tools in
    `writing` are counted, never named, so the model knows the group can act without being
    pointed at a write: `"tools: a, b and 2 tools that change data"`, `"1 tool that changes
    data"`, or `""` for no tools.
    """
    reads = [n for n in names if n not in writing]
    count = len(names) - len(reads)
    parts: list[str] = []
    if reads:
        parts.append(label + ", ".join(reads[:limit]) + (more if len(reads) > limit else ""))
    if count:
        parts.append(f"{count} tools that change data" if count > 1 else "1 tool that changes data")
    return " and ".join(parts)
