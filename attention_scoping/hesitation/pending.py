"""Which tool schemas the model has been shown and not yet acted on, and the nudge that follows.

Pure functions over a message history (no model call, no graph): the hesitation middleware asks
them, per model call, which schemas a stall could be about and what exact call to demand.

- Gateway disclosures (only with a `GatewayTools` naming the gateway's tools): every result of
  its schema tool lists `disclosed` schemas; one stays *pending* until a call of its executor
  for that tool comes back with anything but `invalid_arguments` / `unknown_tool` (an approval
  refusal or a rejection settles it too: the model then has something real to report).
- Bound tools: the schemas sent with this model call (promoted or visible tools). They count
  only while no action tool has run in the current turn: after a real result, a message without
  a tool call is a report, and a closing "want me to also...?" is an offer, not a stall.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from attention_scoping.adapters.tools import to_provider_schema, tool_metadata, tool_name
from attention_scoping.common.tool import critical_parameters
from attention_scoping.errors import NOT_RUN_ERRORS
from attention_scoping.hesitation.assist import tool_words
from attention_scoping.hesitation.errors import KitTypeError
from attention_scoping.hesitation.texts import hint_text, nudge_text, ungrounded_text
from attention_scoping.messages import current_turn
from attention_scoping.risk import declared_read, declared_write
from attention_scoping.scopes import LOAD_CONTEXT

__all__ = [
    "NAVIGATION_TOOLS",
    "NUDGE_MARK",
    "GatewayTools",
    "Pending",
    "bound_disclosures",
    "current_turn",
    "gateway_disclosures",
    "hint_text",
    "nudge_text",
    "ungrounded_text",
]

NAVIGATION_TOOLS = frozenset({LOAD_CONTEXT})
"""The core's navigation tool: it discloses tools, it is not what a stall is about."""


@dataclass(frozen=True)
class GatewayTools:
    """The tool names of a tool gateway (an add-on the kit does not import): the tool whose
    results disclose schemas (`disclosed` items), the tool that runs a catalog tool by
    `tool_name`, and its search tool. Their own schemas are never what a stall is about.

    Example:
        ```python
        GatewayTools(schema_tool="get_tool_schema", execute_tool="execute_tool",
                     search_tool="search_tool_catalog")
        ```
    """

    schema_tool: str
    execute_tool: str
    search_tool: str | None = None

    def __post_init__(self) -> None:
        """Refuse a name that is not a non-empty string."""
        for option in ("schema_tool", "execute_tool", "search_tool"):
            value = getattr(self, option)
            if option == "search_tool" and value is None:
                continue
            if not isinstance(value, str) or not value:
                msg = f"{option} must be a tool name (a non-empty string), not {value!r}"
                raise KitTypeError(msg)

    @property
    def names(self) -> frozenset[str]:
        """The gateway's own tools."""
        return frozenset(n for n in (self.schema_tool, self.execute_tool, self.search_tool) if n)


NUDGE_MARK = "hesitation_nudge"
"""`additional_kwargs` key that marks a nudge message as synthetic (a UI hides it)."""


_UNSETTLED_ERRORS = frozenset({"invalid_arguments", "unknown_tool"})

Via = Literal["gateway", "bound"]


@dataclass(frozen=True)
class Pending:
    """A disclosed tool the model has not acted on yet.

    Whether code may name it comes from `attention_scoping.risk` only (`read`: a declared read);
    which parameters only the user can give from `common.tool.critical_parameters`."""

    name: str
    via: Via
    schema: dict[str, Any] = field(hash=False, compare=False)
    """`{"name", "parameters", "defaults"}`: what the radar compares the text with."""
    defaults: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """The tool's metadata as `attention_scoping.risk` reads it (`risk`, `requires_approval`,
    mutation flags, MCP `annotations`); for a gateway disclosure, its `risk` and
    `requires_approval`."""
    description: str = field(default="", hash=False, compare=False)
    """The tool's description (its words count as evidence that a message needs it)."""
    scope_read: bool = field(default=False, hash=False, compare=False)
    """A scope declared it a read (`Scope(..., reads=[...])`), whatever its metadata lacks."""
    executor: str | None = field(default=None, hash=False, compare=False)
    """For a gateway disclosure: the gateway tool that runs it (`GatewayTools.execute_tool`)."""

    @property
    def read(self) -> bool:
        """Someone declared the tool a read (`attention_scoping.risk.declared_read`: its
        metadata, MCP annotations, or its scope) and nothing declares it a write. Only such a
        tool is named in a hint or nudged toward by code; everything else may write."""
        return declared_read(self.metadata, self.name, {self.name} if self.scope_read else ())

    @property
    def requires_approval(self) -> bool:
        """A human approves each call before it runs: a declared write
        (`attention_scoping.risk.declared_write`) without `requires_approval=False`."""
        return declared_write(self.metadata) and self.metadata.get("requires_approval") is not False

    @property
    def critical(self) -> list[str]:
        """Parameters only the user can give (`common.tool.critical_parameters`: required, no
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
        if self.via == "gateway" and self.executor:
            return f"{self.executor}(tool_name={json.dumps(self.name)}, arguments={{...}})"
        return f"{self.name}(...)"


def _payload(message: ToolMessage) -> dict[str, Any]:
    try:
        body = json.loads(message.text)
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def gateway_disclosures(messages: Sequence[BaseMessage], gateway: GatewayTools) -> list[Pending]:
    """Schemas disclosed by the gateway's schema tool and not yet settled by a result of its
    executor."""
    schema_tool, execute_tool = gateway.schema_tool, gateway.execute_tool
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
                        executor=execute_tool,
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
    ignore: Iterable[str] = NAVIGATION_TOOLS,
    reads: Collection[str] = (),
) -> list[Pending]:
    """Schemas bound to this model call, while no action tool has run in the current turn.
    `reads`: tools a scope declared reads (their metadata may not say so)."""
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
                scope_read=name in reads,
            )
        )
    return out
