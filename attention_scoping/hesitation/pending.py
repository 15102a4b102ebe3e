"""Which tool schemas the model has been shown and not yet acted on, and the nudge that follows.

Pure functions over a message history (no model call, no graph): the hesitation middleware asks
them, per model call, which schemas a stall could be about and what exact call to demand.

- Gateway disclosures: every `get_tool_schema` result lists `disclosed` schemas; one stays
  *pending* until an `execute_tool` call for that tool comes back with anything but
  `invalid_arguments` / `unknown_tool` (an approval refusal or a rejection settles it too:
  the model then has something real to report).
- Bound tools: the schemas sent with this model call (promoted or visible tools). They count
  only while no action tool has run in the current turn: after a real result, a message without
  a tool call is a report, and a closing "want me to also...?" is an offer, not a stall.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from attention_scoping.adapters.tools import to_provider_schema, tool_metadata, tool_name
from attention_scoping.common.blast_radius import writes
from attention_scoping.common.errors import NOT_RUN_ERRORS
from attention_scoping.common.messages import current_turn
from attention_scoping.common.tool import approval_required, critical_parameters
from attention_scoping.gateway.tools import EXECUTE_TOOL, GET_TOOL_SCHEMA, SEARCH_TOOL_CATALOG
from attention_scoping.hesitation.assist import tool_words
from attention_scoping.hesitation.texts import hint_text, nudge_text, ungrounded_text
from attention_scoping.scoping.catalog import LOAD_CONTEXT

__all__ = [
    "META_TOOLS",
    "NUDGE_MARK",
    "Pending",
    "bound_disclosures",
    "current_turn",
    "gateway_disclosures",
    "hint_text",
    "nudge_text",
    "ungrounded_text",
]

META_TOOLS = frozenset({LOAD_CONTEXT, SEARCH_TOOL_CATALOG, GET_TOOL_SCHEMA, EXECUTE_TOOL})
"""Navigation and gateway tools: they disclose tools, they are not what a stall is about."""

NUDGE_MARK = "hesitation_nudge"
"""`additional_kwargs` key that marks a nudge message as synthetic (a UI hides it)."""


_UNSETTLED_ERRORS = frozenset({"invalid_arguments", "unknown_tool"})

Via = Literal["gateway", "bound"]


@dataclass(frozen=True)
class Pending:
    """A disclosed tool the model has not acted on yet.

    Its facts come from `core.tool` and `core.blast_radius` only: which parameters only the user
    can give (`critical_parameters`), whether it writes (`writes`), whether a human approves it
    (`approval_required`)."""

    name: str
    via: Via
    schema: dict[str, Any] = field(hash=False, compare=False)
    """`{"name", "parameters", "defaults"}`: what the radar compares the text with."""
    defaults: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """The tool's metadata as `core.tool` reads it (`risk`, `requires_approval`, mutation flags,
    MCP `annotations`); for a gateway disclosure, its `risk` and `requires_approval`."""
    description: str = field(default="", hash=False, compare=False)
    """The tool's description (its words count as evidence that a message needs it)."""

    @property
    def writes(self) -> bool:
        """The tool may change something (`core.blast_radius.writes`): code never names it in
        a hint or nudges toward it."""
        return writes(self.metadata)

    @property
    def requires_approval(self) -> bool:
        """A human approves each call before it runs (`core.tool.approval_required`: an explicit
        `requires_approval=False` write does not)."""
        return approval_required(self.metadata)

    @property
    def critical(self) -> list[str]:
        """Parameters only the user can give (`core.tool.critical_parameters`: required, no
        default or suggested one, not nullable)."""
        params = self.schema.get("parameters")
        return critical_parameters(params if isinstance(params, Mapping) else {}, self.defaults)

    @property
    def words(self) -> set[str]:
        """The tool's content words (`assist.tool_words`): name, description, parameter names."""
        params = self.schema.get("parameters")
        props = params.get("properties") if isinstance(params, Mapping) else None
        return tool_words(self.name, self.description, props if isinstance(props, Mapping) else ())

    def call(self) -> str:
        """The exact call the model should make."""
        if self.via == "gateway":
            return f"{EXECUTE_TOOL}(tool_name={json.dumps(self.name)}, arguments={{...}})"
        return f"{self.name}(...)"


def _payload(message: ToolMessage) -> dict[str, Any]:
    try:
        body = json.loads(message.text)
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def gateway_disclosures(
    messages: Sequence[BaseMessage],
    *,
    schema_tool: str = GET_TOOL_SCHEMA,
    execute_tool: str = EXECUTE_TOOL,
) -> list[Pending]:
    """Schemas disclosed by the gateway and not yet settled by an `execute_tool` result."""
    pending: dict[str, Pending] = {}
    call_target: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id")
                if call.get("name") == execute_tool and call_id:
                    target = (call.get("args") or {}).get("tool_name")
                    if isinstance(target, str):
                        call_target[call_id] = target
        elif isinstance(message, ToolMessage) and message.name == schema_tool:
            for item in _payload(message).get("disclosed") or []:
                if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                    defaults = dict(item.get("defaults") or {})
                    pending[item["name"]] = Pending(
                        name=item["name"],
                        via="gateway",
                        schema={
                            "name": item["name"],
                            "parameters": item.get("parameters") or {},
                            "defaults": defaults,
                        },
                        defaults=defaults,
                        metadata={
                            "risk": item.get("risk"),
                            "requires_approval": item.get("requires_approval"),
                        },
                        description=str(item.get("description") or ""),
                    )
        elif isinstance(message, ToolMessage) and message.name == execute_tool:
            target = call_target.get(message.tool_call_id or "")
            if target is not None and _payload(message).get("error") not in _UNSETTLED_ERRORS:
                pending.pop(target, None)
    return list(pending.values())


def bound_disclosures(
    tools: Iterable[Any],
    messages: Sequence[BaseMessage],
    *,
    ignore: Iterable[str] = META_TOOLS,
) -> list[Pending]:
    """Schemas bound to this model call, while no action tool has run in the current turn."""
    skip = set(ignore)
    start, _ = current_turn(messages)
    for message in messages[start + 1 :]:
        if (
            isinstance(message, ToolMessage)
            and message.name not in skip
            and not (message.status == "error" and _payload(message).get("error") in NOT_RUN_ERRORS)
        ):
            return []  # a tool really ran: a message without a tool call now is a report
    out: list[Pending] = []
    for tool in tools:
        name = tool_name(tool)
        if name in skip:
            continue
        try:
            spec = to_provider_schema(tool)
        except Exception:  # a provider built-in tool without a function schema
            continue
        fn = spec.get("function", spec)
        out.append(
            Pending(
                name=name,
                via="bound",
                schema={"name": name, "parameters": fn.get("parameters") or {}},
                metadata=tool_metadata(tool),
                description=str(fn.get("description") or ""),
            )
        )
    return out
