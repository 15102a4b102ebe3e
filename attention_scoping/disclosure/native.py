"""Anthropic's deferred tools, disclosed by `tool_reference` blocks: the byte-stable prefix.

`Anthropic().disclose(request, shown)` sends every tool of the request, in one fixed order
(provider dicts as given, then the deferred tools by name, then the loaded ones by name), each
with `extras["defer_loading"] = True` (the field LangChain's own `ProviderToolSearchMiddleware`
sets and langchain-anthropic copies onto the tool definition) except the `loaded` names
(default: `load_context` alone). The tools array therefore stays byte-identical for the whole
session, whatever scope is open.

What the reply may call (`shown`) reaches the model through `{"type": "tool_reference",
"tool_name": ...}` blocks in `tool_result`s: Anthropic renders a referenced definition there, at
the tail, so the cached prefix survives. The references are written into the request only,
never into state, and recomputed on every call from the history and the record each earlier
reply carries (`attention_scoping.gate`): before each recorded reply, the tools its record names
that no earlier reference disclosed; at the tail, what `shown` adds. They go into the
`ToolMessage` just before (the `load_context` result, typically), or, after a user message, into
a `load_context` call-and-result pair with a deterministic id. The same history gives the same
bytes, so every later request repeats the earlier ones as its prefix.

The gate is not widened: a tool referenced for an earlier reply stays visible to the model, but
a call of it is decided by the calling reply's record alone (`shown`), and refused when absent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.disclosure.choice import ToolEntry, narrowed_choice, stable_order
from attention_scoping.errors import AttentionScopingError
from attention_scoping.gate import RECORD_KEY
from attention_scoping.middleware import Disclosed
from attention_scoping.scopes import LOAD_CONTEXT

DEFER = "defer_loading"
CACHE = "cache_control"
REFERENCE = "tool_reference"
MAX_DEFERRED = 10_000
"""Most deferred tools one Anthropic request may carry."""
PAIR_PREFIX = "disclose_"
"""Tool-call id prefix of the `load_context` pairs this mode adds to a request."""


class DisclosureError(AttentionScopingError, ValueError):
    """A request the provider would refuse in this mode (too many deferred tools, none loaded)."""


def _extras(tool: BaseTool) -> dict[str, Any]:
    return dict(tool.extras) if isinstance(tool.extras, Mapping) else {}


def deferred(tool: ToolEntry) -> bool:
    """Whether a tool entry is sent with `defer_loading: true`."""
    if isinstance(tool, BaseTool):
        return _extras(tool).get(DEFER) is True
    return tool.get(DEFER) is True


def references(content: Any) -> Iterator[str]:
    """Tool names of the `tool_reference` blocks in a message content (nested `tool_result`
    blocks included)."""
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == REFERENCE and isinstance(block.get("tool_name"), str):
            yield str(block["tool_name"])
        elif block.get("type") == "tool_result":
            yield from references(block.get("content"))


def recorded_tools(message: Any) -> set[str]:
    """Every tool name the records on `message` list (any middleware's: this mode only sends
    more, so the union is safe)."""
    meta = getattr(message, "response_metadata", None) or {}
    records = meta.get(RECORD_KEY) if isinstance(meta, Mapping) else None
    names: set[str] = set()
    for record in (records or {}).values() if isinstance(records, Mapping) else ():
        if isinstance(record, Mapping) and isinstance(record.get("tools"), list):
            names.update(n for n in record["tools"] if isinstance(n, str))
    return names


def pair_id(index: int, names: Sequence[str]) -> str:
    """The id of a disclosure pair inserted before message `index` (the same on every call)."""
    digest = hashlib.sha256(f"{index}\x00{','.join(names)}".encode()).hexdigest()[:12]
    return f"{PAIR_PREFIX}{digest}"


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": str(content)}] if content else []


def _disclosing(out: list[AnyMessage], names: Sequence[str], index: int) -> list[AnyMessage]:
    """`out` with `tool_reference` blocks for `names` at its end: in the last successful
    `ToolMessage` of the tool results that end it (an error result carries no references), or
    in a `load_context` pair added after them or after a user message. The pair's call has no
    arguments: the scope in force is not always in the state (a default scope), and what the
    pair says must be the same on every later call."""
    refs = [{"type": REFERENCE, "tool_name": n} for n in names]
    position = len(out) - 1
    while position >= 0 and isinstance(out[position], ToolMessage):
        result = out[position]
        if isinstance(result, ToolMessage) and result.status != "error":
            content = [*_blocks(result.content), *refs]
            copy = result.model_copy(update={"content": content})
            return [*out[:position], copy, *out[position + 1 :]]
        position -= 1
    call_id = pair_id(index, names)
    call = AIMessage("", tool_calls=[{"name": LOAD_CONTEXT, "args": {}, "id": call_id}])
    text = {"type": "text", "text": f"Loaded for this step: {', '.join(names)}."}
    result = ToolMessage([text, *refs], tool_call_id=call_id, name=LOAD_CONTEXT)
    return [*out, call, result]


def with_references(
    messages: Sequence[AnyMessage],
    shown: Collection[str],
    deferrable: Collection[str],
) -> list[AnyMessage]:
    """`messages` with `tool_reference` blocks disclosing, before each recorded reply, the
    deferred tools its record lists, and at the tail the deferred tools of `shown`; each name
    once (a reference already in the history counts)."""
    out: list[AnyMessage] = []
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            need = sorted((recorded_tools(message) & set(deferrable)) - seen)
            if need:
                out = _disclosing(out, need, index)
                seen.update(need)
        if isinstance(message, ToolMessage | HumanMessage):
            seen.update(references(message.content))
        out.append(message)
    need = sorted((set(shown) & set(deferrable)) - seen)
    return _disclosing(out, need, len(messages)) if need else out


def _breakpoint_on_last_loaded(tools: list[ToolEntry], cache_control: Any) -> list[ToolEntry]:
    """`tools` with `cache_control` on the last loaded `BaseTool` (none: dropped)."""
    for i in range(len(tools) - 1, -1, -1):
        tool = tools[i]
        if isinstance(tool, BaseTool) and not deferred(tool):
            copy = tool.model_copy(update={"extras": {**_extras(tool), CACHE: cache_control}})
            return [*tools[:i], copy, *tools[i + 1 :]]
    return tools


@dataclass(frozen=True)
class Anthropic:
    """Every tool sent in one fixed order, all deferred but `loaded`; `shown` disclosed by
    `tool_reference` blocks in the request's history (see the module docstring). Needs
    `ChatAnthropic`; `Auto` picks it for one.

    Attributes:
        loaded: Tool names always sent plain (default: `load_context`; add always-on tools to
            keep them out of the references). At least one must be among the request's tools.
    """

    loaded: frozenset[str] = field(default_factory=lambda: frozenset({LOAD_CONTEXT}))
    mode: ClassVar[str] = "anthropic"

    def tools(self, entries: Iterable[ToolEntry]) -> list[ToolEntry]:
        """The tools array: fixed order, deferred but `loaded`, no cache breakpoint on a
        deferred tool (the API answers 400; it moves to the last loaded tool).

        Raises:
            DisclosureError: more than `MAX_DEFERRED` deferred, or nothing loaded.
        """
        shaped: list[ToolEntry] = []
        moved: Any = None
        for tool in stable_order(entries, self.loaded):
            if not isinstance(tool, BaseTool):
                shaped.append(tool)
                continue
            extras = _extras(tool)
            if tool.name in self.loaded:
                extras.pop(DEFER, None)
            else:
                extras[DEFER] = True
                moved = extras.pop(CACHE, moved)
            same = extras == _extras(tool)
            shaped.append(tool if same else tool.model_copy(update={"extras": extras}))
        if moved is not None:
            shaped = _breakpoint_on_last_loaded(shaped, moved)
        count = sum(deferred(t) for t in shaped)
        if count > MAX_DEFERRED:
            msg = f"{count} deferred tools; Anthropic accepts at most {MAX_DEFERRED}: use Rewrite()"
            raise DisclosureError(msg)
        if shaped and count == len(shaped):
            msg = f"every tool would be deferred; keep one of {sorted(self.loaded)} in the tools"
            raise DisclosureError(msg)
        return shaped

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """`request` with the fixed tools array and `shown` disclosed at the tail; a
        `tool_choice` naming a tool not shown becomes `"auto"`, `"required"` `"any"`."""
        tools = self.tools(request.tools)
        deferrable = {t.name for t in tools if isinstance(t, BaseTool) and deferred(t)}
        messages = with_references(request.messages, shown, deferrable)
        choice = narrowed_choice(request.tool_choice, shown)
        choice = "any" if choice == "required" else choice
        sent = request.override(tools=tools, messages=messages, tool_choice=choice)
        return Disclosed(sent, self.mode)
