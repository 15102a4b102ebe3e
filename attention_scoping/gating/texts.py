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

UNKNOWN_TOOL_STEP = "Call one of the loaded tools, or answer without a tool."
"""`unknown_tool`: what to do next."""

PRECONDITION_STEP = "Satisfy the precondition first (e.g. with another tool), or tell the user."
"""`precondition_failed`: what to do next."""
