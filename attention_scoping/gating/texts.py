"""What the tool gate says to the model: the summary pool's header and its refusals' texts.

One place for the gate's model-facing words, so a change of wording is one edit and a reader
finds them by name (`{name}` is filled in where it stands).
"""

from __future__ import annotations

POOL_HEADER = (
    "# Tool index\n"
    "Only some tools are loaded with full schemas on each step. These also exist; calling one "
    "that is not loaded returns its summary and loads its schema for your next step:"
)
"""First lines of the summary pool."""

NOT_LOADED_MESSAGE = (
    "{name} was not loaded for this step, so it was not run. Its full schema is "
    "loaded for your next step."
)
"""`tool_not_available`: the tool exists but its schema was not sent (`{name}` quoted)."""

NOT_LOADED_STEP = "Call {name} again using the schema you now have."
"""`tool_not_available`: what to do next."""

NOT_READ_MESSAGE = (
    "{name} was not loaded for this step, so it was not run. This agent loads it only when "
    "the application makes it always available."
)
"""`tool_not_available` for a tool that is not a declared read and not pinned: no schema follows."""

NOT_READ_STEP = "Use one of the loaded tools, or tell the user what you would need to do."
"""`tool_not_available` of a tool the gate never loads: what to do next."""

UNKNOWN_TOOL_STEP = "Call one of the loaded tools, or answer without a tool."
"""`unknown_tool`: what to do next."""

PRECONDITION_STEP = "Satisfy the precondition first (e.g. with another tool), or tell the user."
"""`precondition_failed`: what to do next."""
