"""`disclosure="openai"`: namespaces from the scopes, the fixed tools array, disclosure by
`tool_search_output`, the model's search as a tool call, and the history as Responses items
(validated by the scripted Responses endpoint's rules)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from attention_scoping.disclosure.base import SEARCH_TOOL, resolve_disclosure
from attention_scoping.disclosure.openai import OpenAIDisclosure
from attention_scoping.disclosure.openai_wire import (
    DEFAULT_GROUP,
    build_namespaces,
    function_definition,
    namespace_name,
    search_output,
    split,
)
from attention_scoping.testing import ScriptedChatModel
from tests.openai_responses_stub import validate_responses_request


def _definitions(*names: str) -> dict[str, dict[str, Any]]:
    return {n: function_definition({"name": n, "parameters": {"type": "object"}}) for n in names}


def test_split_keeps_order_and_evens_out_chunks() -> None:
    names = [f"t{i:02d}" for i in range(23)]
    chunks = split(names)
    assert [len(c) for c in chunks] == [8, 8, 7]
    assert [n for c in chunks for n in c] == names
    assert split(names[:10]) == [names[:10]]
    assert split([]) == []


def test_namespaces_one_per_group_split_above_ten() -> None:
    big = [f"b{i:02d}" for i in range(12)]
    groups = {"billing": big, "crm.v2": ["lookup"], "empty": ["unknown"]}
    namespaces = build_namespaces(groups, _definitions(*big, "lookup", "stray"), taken=["crm_v2"])
    assert [ns.name for ns in namespaces] == ["billing_1", "billing_2", "crm_v2_2", DEFAULT_GROUP]
    assert namespaces[0].names() == tuple(big[:6]) and namespaces[1].names() == tuple(big[6:])
    assert namespaces[0].description.endswith("(part 1 of 2)")
    assert namespaces[3].names() == ("stray",)  # deferred tools no group names
    assert all(f["defer_loading"] is True for ns in namespaces for f in ns.functions)
    assert namespace_name("a b/c", []) == "a_b_c"


def test_search_output_loads_only_the_chosen_functions() -> None:
    namespaces = build_namespaces({"billing": ["get", "refund"]}, _definitions("get", "refund"))
    item = search_output(["refund", "nope"], namespaces, call_id="c1")
    assert item["call_id"] == "c1" and item["execution"] == "client"
    assert [t["name"] for t in item["tools"]] == ["billing"]
    assert [f["name"] for f in item["tools"][0]["tools"]] == ["refund"]


@tool
def load_context(name: str) -> str:
    """Load a context."""
    return name


@tool
def get_invoice(invoice_id: int) -> str:
    """Read an invoice."""
    return f"invoice {invoice_id}"


@tool
def refund(invoice_id: int) -> str:
    """Refund an invoice."""
    return f"refunded {invoice_id}"


@tool
def open_ticket(title: str) -> str:
    """Open a support ticket."""
    return title


@tool
def search_tools(query: str) -> str:
    """Find tools."""
    return query


GROUPS = {"billing": ["get_invoice", "refund"], "support": ["open_ticket"]}
TOOLS: list[BaseTool] = [refund, open_ticket, load_context, get_invoice, search_tools]
LOADED = {"load_context", SEARCH_TOOL}
SEARCH_CALL: dict[str, Any] = {
    "type": "tool_search_call",
    "id": "tsc_1",
    "call_id": "call_s",
    "execution": "client",
    "status": "completed",
    "arguments": {"query": "refund"},
}
"""A client-executed search for "refund", as the Responses API replies with it."""


def _shaped(mode: OpenAIDisclosure, visible: list[str]) -> list[Any]:
    return mode.shape(TOOLS, visible=visible, loaded=LOADED, groups=GROUPS).tools


def test_shape_is_the_same_array_whatever_is_visible() -> None:
    mode = OpenAIDisclosure()
    first = _shaped(mode, [])
    assert first == _shaped(mode, ["refund", "open_ticket"])
    assert [getattr(t, "name", None) or t.get("name") or t["type"] for t in first] == [
        "load_context",
        "billing",
        "support",
        "tool_search",
    ]
    billing = first[1]
    assert [f["name"] for f in billing["tools"]] == ["get_invoice", "refund"]
    assert all(f["defer_loading"] is True for f in billing["tools"])
    search = first[-1]
    assert search["execution"] == "client" and search["description"] == "Find tools."
    assert search["parameters"]["properties"]["query"]["type"] == "string"


def test_namespace_entries_keep_their_tool_objects_for_inner_middlewares() -> None:
    """A gate after the scoping middleware ranks tool objects: the shaped array still has them
    (inside the namespace entries, which are plain dicts on the wire)."""
    shaped = _shaped(OpenAIDisclosure(), [])
    assert sorted(t.name for t in OpenAIDisclosure.tool_objects(shaped)) == [
        "get_invoice",
        "load_context",
        "open_ticket",
        "refund",
    ]
    assert json.loads(json.dumps(shaped[1])) == shaped[1]  # the wire sees only the dict
    shared = {**GROUPS, "audit": ["refund", "get_invoice"]}  # a tool in two scopes
    both = OpenAIDisclosure().shape(TOOLS, visible=[], loaded=LOADED, groups=shared).tools
    assert [t.get("name") for t in both if isinstance(t, dict)][:3] == [
        "billing",
        "support",
        "audit",
    ]
    assert len(OpenAIDisclosure.tool_objects(both)) == 4


def test_shape_of_a_shaped_array_is_unchanged() -> None:
    """An inner middleware shapes what an outer one shaped: same array (namespaces kept)."""
    outer = OpenAIDisclosure().shape(TOOLS, visible=[], loaded=LOADED, groups=GROUPS).tools
    inner = OpenAIDisclosure()
    again = inner.shape([*outer, search_tools], visible=[], loaded=LOADED).tools
    assert json.dumps([t for t in again if isinstance(t, dict)]) == json.dumps(
        [t for t in outer if isinstance(t, dict)]
    )
    assert inner.content(["refund"]) == _content_from(outer, ["refund"])


def _content_from(tools: list[Any], names: list[str]) -> Any:
    mode = OpenAIDisclosure()
    mode.shape(tools, visible=[], loaded=LOADED)
    return mode.content(names)


def test_tool_choice_names_only_top_level_tools() -> None:
    mode = OpenAIDisclosure()
    named = {"type": "function", "function": {"name": "load_context"}}
    deferred = {"type": "function", "function": {"name": "refund"}}
    kw: dict[str, Any] = {"visible": [], "loaded": LOADED, "groups": GROUPS}
    assert mode.shape(TOOLS, tool_choice=named, **kw).tool_choice == named
    assert mode.shape(TOOLS, tool_choice=deferred, **kw).tool_choice is None
    assert mode.shape(TOOLS, tool_choice="required", **kw).tool_choice == "required"


def _write(name: str, metadata: dict[str, Any]) -> BaseTool:
    """A tool whose metadata says it writes (`core.blast_radius.writes`)."""

    @tool(name, description=f"{name} something.")
    def run(item: str) -> str:
        return item

    run.metadata = metadata
    return run


def test_a_generated_namespace_description_names_only_tools_that_read() -> None:
    """Code-written text never names a write: the namespace description lists the scope's
    reading tools and counts its writes; the tools array stays byte-identical per request."""
    refund_w = _write("refund", {"risk": "write"})
    delete_w = _write("delete_invoice", {"annotations": {"destructiveHint": True}})
    tools: list[BaseTool] = [load_context, get_invoice, refund_w, delete_w, open_ticket]
    groups = {"billing": ["get_invoice", "refund", "delete_invoice"], "support": ["open_ticket"]}
    mode = OpenAIDisclosure()
    first = mode.shape(tools, visible=[], loaded=LOADED, groups=groups).tools
    billing = next(t for t in first if isinstance(t, dict) and t.get("name") == "billing")
    assert billing["description"] == (
        "Tools of the 'billing' context: get_invoice and 2 tools that change data."
    )
    assert [f["name"] for f in billing["tools"]] == ["get_invoice", "refund", "delete_invoice"]
    again = mode.shape(tools, visible=["refund"], loaded=LOADED, groups=groups).tools
    wire = [t for t in first if isinstance(t, dict)]
    assert json.dumps(wire) == json.dumps([t for t in again if isinstance(t, dict)])


def test_a_namespace_of_writes_only_is_described_without_names() -> None:
    definitions = _definitions("refund", "void", *(f"r{i}" for i in range(9)))
    writing = {"refund", "void"}
    writes_only = build_namespaces({"payments": ["refund", "void"]}, definitions, writing=writing)
    assert writes_only[0].description == (
        "Tools of the 'payments' context: 2 tools that change data."
    )
    reads = build_namespaces({"reads": [f"r{i}" for i in range(9)]}, definitions)
    assert reads[0].description == (
        "Tools of the 'reads' context: r0, r1, r2, r3, r4, r5, r6, r7, ...."
    )
    empty = build_namespaces({"crm": ["lookup"]}, _definitions("lookup"), writing={"lookup"})
    assert "lookup" not in empty[0].description


def test_content_discloses_and_disclosed_reads_it_back() -> None:
    mode = OpenAIDisclosure()
    _shaped(mode, [])
    content = mode.content(["refund", "open_ticket"], "Context 'billing' loaded.")
    assert isinstance(content, list) and content[0] == {
        "type": "text",
        "text": "Context 'billing' loaded.",
    }
    ok = ToolMessage(content=content, tool_call_id="c1", name="load_context")
    refused = ToolMessage(content=content, tool_call_id="c2", status="error")
    assert mode.disclosed([HumanMessage("hi"), ok]) == {"refund", "open_ticket"}
    assert mode.disclosed([refused]) == frozenset()
    assert mode.content(["load_context"], "plain") == "plain"  # nothing deferred: text only


def test_incoming_turns_a_client_search_into_a_search_tool_call() -> None:
    mode = OpenAIDisclosure()
    reply = AIMessage(content=[SEARCH_CALL])
    seen = mode.incoming(reply)
    assert seen.tool_calls == [
        {"name": SEARCH_TOOL, "args": {"query": "refund"}, "id": "call_s", "type": "tool_call"}
    ]
    assert mode.incoming(seen) is seen  # idempotent
    assert mode.incoming(AIMessage("plain")).tool_calls == []


def _payload(messages: list[BaseMessage], tools: list[Any]) -> dict[str, Any]:
    model = ChatOpenAI(model="gpt-5.4", api_key=SecretStr("k"), use_responses_api=True)
    bound: Any = model.bind_tools(tools)
    kwargs = dict(bound.kwargs)
    return model._get_request_payload(messages, **kwargs)


def _history(mode: OpenAIDisclosure) -> list[BaseMessage]:
    """A session: a search the model asked for, a load_context result disclosing a scope, a
    scripted (namespace-less) call to a namespaced function, and a refused one."""
    search = mode.incoming(AIMessage(content=[SEARCH_CALL]))
    return [
        SystemMessage("Be brief."),
        HumanMessage("refund invoice 3"),
        search,
        ToolMessage(mode.content(["refund"]), tool_call_id="call_s", name=SEARCH_TOOL),
        AIMessage("", tool_calls=[{"name": "refund", "args": {"invoice_id": 3}, "id": "c1"}]),
        ToolMessage("refunded 3", tool_call_id="c1", name="refund"),
        AIMessage(
            "",
            tool_calls=[
                {"name": "load_context", "args": {"name": "support"}, "id": "c2"},
                {"name": "get_invoice", "args": {"invoice_id": 3}, "id": "c3"},
            ],
        ),
        ToolMessage(
            mode.content(["open_ticket"], "Context 'support' loaded."),
            tool_call_id="c2",
            name="load_context",
        ),
        ToolMessage('{"error": "tool_not_available"}', tool_call_id="c3", status="error"),
        AIMessage("", tool_calls=[{"name": "open_ticket", "args": {"title": "x"}, "id": "c4"}]),
        ToolMessage("opened", tool_call_id="c4", name="open_ticket"),
    ]


def test_outgoing_history_is_a_valid_responses_request() -> None:
    mode = OpenAIDisclosure()
    tools = _shaped(mode, [])
    history = _history(mode)
    assert mode.disclosed(history) == {"refund", "open_ticket"}
    wire = mode.outgoing(history)
    assert mode.outgoing(wire) == wire  # idempotent
    payload = _payload(wire, tools)
    catalog = validate_responses_request(json.loads(json.dumps(payload, default=str)))
    assert {("billing", "refund"), ("support", "open_ticket")} <= catalog.loaded
    items = payload["input"]
    types = [i.get("type") for i in items]
    assert types.count("tool_search_call") == 2 and types.count("tool_search_output") == 2
    notes = [i["content"] for i in items[1:] if i.get("role") == "system"]
    assert notes == [f"{SEARCH_TOOL} result: Loaded: refund."]  # the text an output cannot carry
    calls = {i["call_id"]: i for i in items if i.get("type") == "function_call"}
    assert calls["c1"]["namespace"] == "billing"
    assert calls["c3"]["namespace"] == "billing"  # refused, still echoed (declared there)
    assert calls["c4"]["namespace"] == "support"
    assert "namespace" not in calls["c2"]  # load_context is top level
    # the disclosure pair after load_context follows the whole run of tool results
    order = [(i.get("type"), i.get("call_id")) for i in items]
    start = order.index(("function_call_output", "c2"))
    assert order[start : start + 4] == [
        ("function_call_output", "c2"),
        ("function_call_output", "c3"),
        ("tool_search_call", "c2_tools"),
        ("tool_search_output", "c2_tools"),
    ]


def test_outgoing_without_the_echo_is_rejected_by_the_api_rules() -> None:
    """The control: the same history sent as LangChain serializes it unconverted fails."""
    mode = OpenAIDisclosure()
    tools = _shaped(mode, [])
    payload = _payload(_history(mode), tools)
    with pytest.raises(Exception, match=r"No tool output found|Missing namespace"):
        validate_responses_request(json.loads(json.dumps(payload, default=str)))


def test_carries_only_chat_openai_on_the_responses_api() -> None:
    responses = ChatOpenAI(model="gpt-5.4", api_key=SecretStr("k"), use_responses_api=True)
    chat = ChatOpenAI(model="gpt-5.4", api_key=SecretStr("k"))
    assert OpenAIDisclosure.carries(responses) is None
    assert "use_responses_api=True" in (OpenAIDisclosure.carries(chat) or "")
    assert isinstance(resolve_disclosure("openai", responses), OpenAIDisclosure)
    with pytest.raises(ValueError, match=r"disclosure='openai' cannot be used with ChatOpenAI"):
        resolve_disclosure("openai", chat)
    with pytest.raises(ValueError, match=r"ScriptedChatModel"):
        resolve_disclosure("openai", ScriptedChatModel(script=[]))
