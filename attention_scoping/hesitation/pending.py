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
from attention_scoping.core.blast_radius import writes
from attention_scoping.core.errors import NOT_RUN_ERRORS
from attention_scoping.core.messages import current_turn
from attention_scoping.core.signature import call_signature
from attention_scoping.core.tool import approval_required, critical_parameters
from attention_scoping.gateway.tools import EXECUTE_TOOL, GET_TOOL_SCHEMA, SEARCH_TOOL_CATALOG
from attention_scoping.hesitation.assist import tool_words
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


RUNTIME_NOTE = (
    "[Runtime note, automatic: not written by the user and not their approval of anything.]"
)
"""First line of every nudge: who wrote it, and that it is nobody's consent."""

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


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def nudge_text(pending: Sequence[Pending], tools: Sequence[str] = ()) -> str:
    """The runtime note after a stall: the exact call, the defaults, who approves.

    Written by the runtime about the user, never in the user's voice: it gives no consent and
    leaves the answer to the user's request (text, an explanation or a draft is an answer).

    Args:
        pending: The disclosed tools the stall may be about.
        tools: Names the radar found the message talking about (picked first).
    """
    named = [p for p in pending if p.name in tools] or list(pending)
    focus = named[:3]
    names = ", ".join(f"`{p.name}`" for p in focus)
    lines = [
        RUNTIME_NOTE,
        f"Your last reply called no tool, though you have the schema of {names}.",
        "If the user's request asks for this action, make the tool call now instead of listing "
        "parameters or asking the user to confirm:",
    ]
    for p in focus:
        text = f"- Call {p.call()}"
        if p.critical:
            text += f", filling {', '.join(p.critical)} from the user's request"
        if p.defaults:
            text += "; for anything the user did not specify use " + ", ".join(
                f"{k}={_value(v)}" for k, v in p.defaults.items()
            )
        text += "."
        if p.requires_approval:
            text += f" {p.name} asks the user for approval by itself before it runs."
        lines.append(text)
    lines += [
        "Infer every other value from the conversation. If a required value cannot be inferred "
        "and has no default, ask the user one short question about that value.",
        "If the user asked for text, an explanation or a draft, or will act themselves, your "
        "reply was the answer: give it again and call no tool.",
    ]
    return "\n".join(lines)


def ungrounded_text(pending: Sequence[Pending], *, named: bool = False) -> str:
    """The runtime note after an answer given without calling a tool the user's message needs:
    the best match with its required arguments, up to two more by name as alternatives, and a
    request for one call (or the answer again if none applies). One call, not a list: a list of
    signatures made the local 1.5B model call every tool on it and then repeat the calls until
    its token cap (docs/scoping.md). `named`: the reply wrote out the first tool's name, so it
    described (or claimed) a call it never made."""
    focus = list(pending)[:3]
    if not focus:
        return "\n".join([RUNTIME_NOTE, "Your last reply answered without calling a tool."])
    top, others = focus[0], focus[1:]
    params = top.schema.get("parameters") or {}
    signature = top.call() if top.via == "gateway" else call_signature(top.name, params)
    if named:
        opening = (
            f"Your last reply names `{top.name}` but calls no tool. Writing about a call does "
            "not run it, and there is no result until you make the call."
        )
    else:
        opening = "Your last reply answered without calling a tool, so nothing checked it."
    match = f"The user's request matches `{signature}`"
    if others:
        alternatives = " or ".join(f"`{p.name}`" for p in others)
        match += f"; if {alternatives} fits it better, call that one instead"
    return "\n".join(
        [
            RUNTIME_NOTE,
            f"{opening} {match}.",
            "Make one tool call now, with values from the request. If none of these tools "
            "applies, give your answer again and call no tool.",
        ]
    )


def hint_text(pending: Sequence[Pending]) -> str:
    """The runtime note before the turn's first reply: the tools the user's message matches, by
    name, best first, and a request to call the one that answers it. Names only: on the local
    1.5B model a signature line made it follow the first tool even where the ranking was wrong
    (docs/scoping.md)."""
    focus = list(pending)[:3]
    names = ", ".join(f"`{p.name}`" for p in focus)
    how = "call that one now with values from the request"
    if focus and all(p.via == "gateway" for p in focus):
        how = f"call it now through `{EXECUTE_TOOL}` with values from the request"
    return "\n".join(
        [
            RUNTIME_NOTE,
            f"Tools that match the user's request: {names}. If one of them answers it, {how}; "
            "otherwise answer without a tool.",
        ]
    )
