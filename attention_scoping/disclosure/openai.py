"""`disclosure="openai"`: the OpenAI Responses API's own deferral, with our ranker behind it.

The tools array is fixed for the session: loaded tools (`load_context`, always-on, pinned) as
top-level functions, every other tool deferred in one `namespace` per scope (split above 10
functions), and a client-executed `tool_search` tool last. What a scope or the gate makes
visible reaches the model as a `tool_search_output` item at the tail of the conversation, so the
cached prefix (tools, system prompt, earlier turns) survives every scope switch.

In the LangChain history a disclosure is a `ToolMessage` whose content carries a
`tool_search_output` block (`content`), answering `load_context` or the search tool
(`SEARCH_TOOL`). The model's own `tool_search_call` becomes a `SEARCH_TOOL` tool call
(`incoming`), so the agent loop runs it and the gate answers it with what our ranker chose;
`outgoing` turns the history into the Responses items before each request: search calls and
their answers into `tool_search_call` / `tool_search_output` pairs, a disclosure in a
`load_context` result into the result plus a call/output pair after it, and every call to a
namespaced function with its namespace echoed (the API answers 400 without it).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from attention_scoping.common.blast_radius import writes
from attention_scoping.disclosure.base import (
    SEARCH_TOOL,
    Disclosure,
    Shaped,
    ShapeRequest,
    ToolEntry,
)
from attention_scoping.disclosure.choice import stable_order
from attention_scoping.disclosure.openai_wire import (
    FUNCTION_CALL,
    TOOL_SEARCH_CALL,
    TOOL_SEARCH_OUTPUT,
    Namespace,
    build_namespaces,
    echo,
    function_definition,
    home,
    loaded_by,
    search_call,
    search_output,
    search_tool,
)

CHOICE_MODES = ("auto", "none", "required", "any")


class NamespaceTool(dict[str, Any]):
    """A `namespace` entry of the tools array: a plain dict on the wire that keeps the tool
    objects of its functions (`members`) for the middlewares after the one that shaped it (a
    gate ranks tool objects; `OpenAIDisclosure.tool_objects`)."""

    members: tuple[BaseTool, ...] = ()

    @classmethod
    def of(cls, namespace: Namespace, members: Sequence[BaseTool]) -> NamespaceTool:
        """The entry of `namespace` with its functions' tool objects."""
        entry = cls(namespace.as_tool())
        entry.members = tuple(members)
        return entry


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The dict blocks of a message's content (none for text content)."""
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    """The text of a message's content, blocks other than text dropped."""
    if isinstance(content, str):
        return content
    parts = [
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in content
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    ]
    return "".join(parts)


def _arguments(value: Any) -> dict[str, Any]:
    """A `tool_search_call`'s arguments as a dict (a JSON string parsed; else `{"query": ...}`)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {"query": value}
    return {}


def _parameters(tool: BaseTool) -> dict[str, Any]:
    parameters = convert_to_openai_tool(tool)["function"].get("parameters")
    return dict(parameters) if isinstance(parameters, dict) else {"type": "object"}


def outputs_in(message: Any) -> list[dict[str, Any]]:
    """The `tool_search_output` blocks a message carries (none in a refused tool result)."""
    if isinstance(message, ToolMessage) and message.status == "error":
        return []
    return [
        b for b in _blocks(getattr(message, "content", None)) if b.get("type") == TOOL_SEARCH_OUTPUT
    ]


class OpenAIDisclosure(Disclosure):
    """Namespaces of deferred functions, a client `tool_search`, disclosure by
    `tool_search_output` (see the module docstring). Needs `ChatOpenAI(use_responses_api=True)`.
    """

    mode = "openai"

    def __init__(self) -> None:
        """An instance learns the namespaces from the tools of its last `shape` call."""
        self.namespaces: list[Namespace] = []
        self.top_level: frozenset[str] = frozenset()

    @classmethod
    def carries(cls, model: Any) -> str | None:
        """Why `model` cannot carry the mode: not a `ChatOpenAI` on the Responses API."""
        if "ChatOpenAI" not in cls.class_names(model):
            return "namespaces and tool_search are OpenAI Responses API features (ChatOpenAI)"
        if getattr(model, "use_responses_api", None) is not True:
            return "it needs the Responses API: ChatOpenAI(use_responses_api=True)"
        version = getattr(model, "output_version", None)
        if version not in (None, "responses/v1"):
            return f"output_version={version!r} rewrites the tool_search items; use 'responses/v1'"
        return None

    # -- the tools array ----------------------------------------------------------------------

    def arrange(self, request: ShapeRequest) -> Shaped:
        """Provider dicts, the loaded tools (by name), the namespaces (given ones first, then
        one per group), the `tool_search` tool: the same array whatever `visible` is."""
        keep = set(request.loaded)
        passthrough: list[ToolEntry] = []
        given: list[Any] = []
        search: dict[str, Any] | None = None
        top: list[BaseTool] = []
        deferred: dict[str, dict[str, Any]] = {}
        for tool in stable_order(request.tools, keep, loaded_last=False):
            if isinstance(tool, BaseTool):
                if tool.name == SEARCH_TOOL:
                    search = search_tool(tool.description, _parameters(tool))
                elif tool.name in keep:
                    top.append(tool)
                else:
                    deferred[tool.name] = function_definition(convert_to_openai_tool(tool))
            elif tool.get("type") == "namespace":
                given.append(tool)
            elif tool.get("type") == "tool_search":
                search = search or dict(tool)
            else:
                passthrough.append(tool)
        existing = [
            Namespace(str(n["name"]), str(n.get("description", "")), tuple(n.get("tools") or ()))
            for n in given
        ]
        taken = {t.name for t in top} | {ns.name for ns in existing}
        writing = {t.name for t in request.tools if isinstance(t, BaseTool) and writes(t)}
        built = build_namespaces(request.groups or {}, deferred, taken=taken, writing=writing)
        self.namespaces = [*existing, *built]
        self.top_level = frozenset(t.name for t in top)
        objects = {t.name: t for t in stable_order(request.tools) if isinstance(t, BaseTool)}
        entries = [NamespaceTool.of(ns, [objects[n] for n in ns.names()]) for ns in built]
        sent: list[ToolEntry] = [*passthrough, *top, *given, *entries]
        if self.namespaces:
            sent.append(search or search_tool())
        return Shaped(sent, self._choice(request.tool_choice))

    @staticmethod
    def tool_objects(tools: Sequence[ToolEntry]) -> list[BaseTool]:
        """The tool objects of a tools array, those inside namespace entries included (what a
        middleware after the one that shaped the array ranks and checks), once each."""
        out: dict[str, BaseTool] = {}
        for tool in tools:
            members = tool.members if isinstance(tool, NamespaceTool) else (tool,)
            for member in members:
                if isinstance(member, BaseTool):
                    out.setdefault(member.name, member)
        return list(out.values())

    def _choice(self, choice: Any) -> Any:
        """`tool_choice` kept when it is a mode or names a top-level tool (the API cannot name
        a namespace or a deferred function); None otherwise."""
        if choice is None or (isinstance(choice, str) and choice in CHOICE_MODES):
            return choice
        name = choice if isinstance(choice, str) else None
        if isinstance(choice, Mapping):
            inner = choice.get("function")
            name = (inner or {}).get("name") if isinstance(inner, Mapping) else choice.get("name")
        return choice if name in self.top_level else None

    # -- disclosure in the history --------------------------------------------------------------

    def content(
        self, names: Sequence[str], text: str | None = None
    ) -> str | list[str | dict[Any, Any]]:
        """A text part (`text`, or the names loaded) and the `tool_search_output` block loading
        `names` from their namespaces; just the text when none of them is deferred."""
        block = search_output(names, self.namespaces)
        found = [name for _, name in loaded_by(block)]
        if not found:
            return text or ""
        summary = text or f"Loaded: {', '.join(found)}."
        return [{"type": "text", "text": summary}, block]

    def disclosed(self, messages: Sequence[Any]) -> frozenset[str]:
        """Names every `tool_search_output` in the history loaded (in tool results, and in the
        model's and the middlewares' assistant messages)."""
        return frozenset(name for m in messages for b in outputs_in(m) for _, name in loaded_by(b))

    # -- the wire: the model's reply in, the history out ---------------------------------------

    def incoming(self, message: Any) -> Any:
        """The model's reply with each client `tool_search_call` also a `SEARCH_TOOL` tool call
        (id = its `call_id`), so the agent loop runs the search; other messages unchanged."""
        if not isinstance(message, AIMessage):
            return message
        have = {call.get("id") for call in message.tool_calls}
        new = [
            {
                "name": SEARCH_TOOL,
                "args": _arguments(b.get("arguments")),
                "id": str(b["call_id"]),
                "type": "tool_call",
            }
            for b in _blocks(message.content)
            if b.get("type") == TOOL_SEARCH_CALL
            and b.get("execution") == "client"
            and b.get("call_id")
            and b["call_id"] not in have
        ]
        if not new:
            return message
        return message.model_copy(update={"tool_calls": [*message.tool_calls, *new]})

    def outgoing(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """`messages` as the Responses request must carry them (see the module docstring);
        deterministic, so an unchanged history gives byte-identical items."""
        searches: set[str] = set()
        where: dict[str, str] = {}
        out: list[BaseMessage] = []
        pending: list[BaseMessage] = []
        for message in messages:
            if pending and not isinstance(message, ToolMessage):
                out += pending
                pending = []
            if isinstance(message, AIMessage):
                out.append(self._outgoing_call(message, searches, where))
            elif isinstance(message, ToolMessage):
                answer, extra = self._outgoing_result(message, searches)
                out.append(answer)
                pending += extra
            else:
                out.append(message)
            for block in outputs_in(message):
                for ns, name in loaded_by(block):
                    if ns is not None:
                        where.setdefault(name, ns)
        return out + pending

    def _namespace_of(
        self, name: str, where: Mapping[str, str], declared: Mapping[str, str]
    ) -> str | None:
        """The namespace a call to `name` echoes: where the history loaded it, else where it
        is declared; None for a top-level function."""
        if name in self.top_level:
            return None
        return where.get(name, declared.get(name))

    def _outgoing_call(
        self, message: AIMessage, searches: set[str], where: Mapping[str, str]
    ) -> AIMessage:
        """An assistant message with its search calls as `tool_search_call` items and its
        calls to namespaced functions as `function_call` items echoing the namespace."""
        blocks = _blocks(message.content)
        declared = home(self.namespaces)
        have = {(b.get("type"), b.get("call_id")) for b in blocks}
        kept: list[Any] = []
        added: list[dict[str, Any]] = []
        for call in message.tool_calls:
            cid = str(call.get("id"))
            if call["name"] == SEARCH_TOOL:
                searches.add(cid)
                if (TOOL_SEARCH_CALL, cid) not in have:
                    added.append(search_call(cid, call.get("args") or {}))
                continue
            kept.append(call)
            ns = self._namespace_of(call["name"], where, declared)
            if ns is not None and (FUNCTION_CALL, cid) not in have:
                arguments = json.dumps(call.get("args") or {}, separators=(",", ":"))
                block = {"type": FUNCTION_CALL, "call_id": cid, "name": call["name"]}
                added.append(echo({**block, "arguments": arguments}, ns))
        if isinstance(message.content, str):
            content: list[Any] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
        else:
            content = [
                echo(b, self._namespace_of(str(b.get("name")), where, declared))
                if isinstance(b, dict) and b.get("type") == FUNCTION_CALL
                else b
                for b in message.content
            ]
        if not added and len(kept) == len(message.tool_calls) and content == message.content:
            return message
        if not added and len(kept) == len(message.tool_calls) and isinstance(message.content, str):
            return message
        return message.model_copy(update={"content": [*content, *added], "tool_calls": kept})

    def _outgoing_result(
        self, message: ToolMessage, searches: Collection[str]
    ) -> tuple[BaseMessage, list[BaseMessage]]:
        """A tool result as Responses items: a search's answer as its `tool_search_output`
        (its text, which the item cannot carry, in a system note after the tool results); a
        result that discloses tools as the result's text plus a call/output pair after it."""
        cid = message.tool_call_id
        blocks = outputs_in(message)
        loaded = [b for block in blocks for b in block.get("tools") or []]
        if cid in searches:
            output = {
                "type": TOOL_SEARCH_OUTPUT,
                "call_id": cid,
                "execution": "client",
                "status": "completed",
                "tools": loaded,
            }
            text = _text(message.content)
            note: list[BaseMessage] = (
                [SystemMessage(f"{SEARCH_TOOL} result: {text}")] if text else []
            )
            return AIMessage(content=[output]), note
        if not blocks:
            return message, []
        answer = message.model_copy(update={"content": _text(message.content) or "ok"})
        pair_id = f"{cid}_tools"
        names = [name for block in blocks for _, name in loaded_by(block)]
        call = search_call(pair_id, {"query": " ".join(names)})
        output = {
            "type": TOOL_SEARCH_OUTPUT,
            "call_id": pair_id,
            "execution": "client",
            "status": "completed",
            "tools": loaded,
        }
        return answer, [AIMessage(content=[call, output])]
