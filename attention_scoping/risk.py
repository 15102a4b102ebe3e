"""Who may open what: a tool is a read only when someone said so; everything else may write.

A read is declared by `metadata={"risk": "read"}` on the tool, by an MCP `readOnlyHint: true`
(without `destructiveHint: true`), or by the scope (`Scope(..., reads=[...])`). A declared write
(`risk="write"`, `requires_approval=True`, a mutation flag, `destructiveHint: true`,
`readOnlyHint: false`) is never a read, whatever else says so.

Code deciding for the model (a selector, hints, nudges, promotions, routing, disclosure) may put
in view, name or nudge toward declared reads only. The model (`load_context`) and the
application (`active_context`, `always_on`) open anything. Approval asks for declared writes
only: an unclassified tool is held back from code, not sent to a human.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

Opener = Literal["model", "application", "code"]
"""Who put a scope or a tool in view: the model (its own `load_context`), the application (an
`active_context` it set, the default scope, `always_on`), or code deciding for the model."""

OPENERS: tuple[Opener, ...] = ("model", "application", "code")

MUTATION_KEYS = ("mutation", "mutates")
"""Metadata flags a capability manifest (or a user) sets on a tool that changes state."""


def metadata_of(tool: object) -> Mapping[str, Any]:
    """A tool's `metadata` mapping (a metadata mapping itself passes through; else empty)."""
    if isinstance(tool, Mapping):
        return tool
    meta = getattr(tool, "metadata", None)
    return meta if isinstance(meta, Mapping) else {}


def declared_write(tool: object) -> bool:
    """Whether the tool's metadata says it may change something (what approval asks for)."""
    meta = metadata_of(tool)
    if meta.get("risk") == "write" or meta.get("requires_approval") is True:
        return True
    if any(meta.get(key) is True for key in MUTATION_KEYS):
        return True
    hints = meta.get("annotations")
    return isinstance(hints, Mapping) and (
        hints.get("destructiveHint") is True or hints.get("readOnlyHint") is False
    )


def declared_read(tool: object, name: str | None = None, reads: Collection[str] = ()) -> bool:
    """Whether someone declared the tool a read (its metadata, its MCP annotations, or `name`
    in a scope's `reads`) and nothing declares it a write."""
    if declared_write(tool):
        return False
    meta = metadata_of(tool)
    if meta.get("risk") == "read" or (name is not None and name in reads):
        return True
    hints = meta.get("annotations")
    return isinstance(hints, Mapping) and hints.get("readOnlyHint") is True


def may_open(
    tool: object, opener: Opener, *, name: str | None = None, reads: Collection[str] = ()
) -> bool:
    """Whether `opener` may put `tool` in view, name it, or nudge toward it: the model and the
    application may open anything; code only declared reads."""
    return opener != "code" or declared_read(tool, name, reads)


def unclassified(tools: Mapping[str, object], reads: Collection[str] = ()) -> list[str]:
    """Names of `tools` (name -> tool object) nobody declared a read or a write, sorted."""
    return sorted(
        name
        for name, tool in tools.items()
        if not declared_write(tool) and not declared_read(tool, name, reads)
    )
