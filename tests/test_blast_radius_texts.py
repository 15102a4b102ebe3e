"""Code-written text the model reads never names a tool that writes (issue 24): the capability
index, a scope's module and `load_context`'s scope descriptions (a scope without a description
lists its tools that read and counts its writes), the gate's catalog pool, and the gateway's
search breadcrumb. The model still learns that a scope can act, and opens writes itself."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.approval.middleware import ApprovalGate
from attention_scoping.gateway import ToolGateway
from attention_scoping.gating.middleware import ToolAttentionMiddleware
from attention_scoping.gating.ranking import BM25Ranker
from attention_scoping.prompt import build_layers
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.testing import ScriptedChatModel, say
from tests.safety_support import SECRET

WRITES_NOTE = "1 tool that may change data"


def _tool(name: str, description: str, metadata: dict[str, Any] | None = None) -> BaseTool:
    def run(query: str = "") -> str:
        return f"{name}: {query}"

    return StructuredTool.from_function(
        run, name=name, description=description, metadata=metadata or {}
    )


READ = {"risk": "read"}
GET_ORDER = _tool("get_order", "Look up an order by its id.", READ)
LIST_ORDERS = _tool("list_orders", "List a customer's recent orders.", READ)
CANCEL_ORDER = _tool("cancel_order", "Cancel an order that has not shipped.", {"risk": "write"})
TRACK = _tool("track_package", "Track an order's package.", READ)
WIPE = _tool(
    "wipe_account", "Delete a customer's account.", {"annotations": {"destructiveHint": True}}
)
TOOLS = [GET_ORDER, LIST_ORDERS, CANCEL_ORDER, TRACK, WIPE]
WRITES = ("cancel_order", "wipe_account")
TOOL_SCOPES = {
    "orders": ["get_order", "list_orders", "cancel_order"],
    "account": ["track_package", "wipe_account"],
}


def _scopes() -> list[Scope]:
    """The scopes with their tool objects and no description (the index lists their tools)."""
    objects = {t.name: t for t in TOOLS}
    return [Scope(name, tools=[objects[n] for n in names]) for name, names in TOOL_SCOPES.items()]


def _names_no_write(text: str) -> bool:
    return not any(name in text for name in WRITES)


def test_the_layered_index_and_module_count_writes_without_naming_them() -> None:
    scoping = AttentionScopingMiddleware(_scopes(), layout="layered")
    layers = build_layers(scoping.catalog, "orders", scoping.layout, None)
    assert f"- orders: tools: get_order, list_orders and {WRITES_NOTE}" in layers.index
    assert f"- account: tools: track_package and {WRITES_NOTE}" in layers.index
    assert layers.module.endswith(f"tools: get_order, list_orders and {WRITES_NOTE}")
    assert _names_no_write(layers.render())


def test_the_compact_load_context_describes_scopes_without_naming_writes() -> None:
    scoping = AttentionScopingMiddleware(_scopes(), layout="compact")
    text = scoping.tools[0].args["name"]["description"]
    assert text == (
        f"The context to load: orders (tools: get_order, list_orders and {WRITES_NOTE}); "
        f"account (tools: track_package and {WRITES_NOTE})."
    )


@pytest.mark.parametrize("layout", ["compact", "layered"])
def test_scopes_given_by_name_count_the_writes_from_the_first_model_call(
    layout: Literal["compact", "layered"],
) -> None:
    """Scopes given by name: the reads cannot be known when the middleware is built, so the
    index and `load_context` count every tool as one that may change data and name none; the
    text stays byte-identical across calls."""
    model = ScriptedChatModel(script=[say("ok"), say("ok again")])
    scoping = AttentionScopingMiddleware(TOOL_SCOPES, layout=layout)
    agent = create_agent(model, tools=TOOLS, middleware=[scoping])
    agent.invoke({"messages": [HumanMessage("hello")]})
    agent.invoke({"messages": [HumanMessage("hello again")]})
    first, second = model.recorded
    seen = json.dumps(first["schemas"]) + (first["system"] or "")
    assert _names_no_write(seen) and "tools that may change data" in seen
    assert (first["system"], first["schemas"]) == (second["system"], second["schemas"])


def test_the_catalog_pool_names_no_write_outside_the_candidates() -> None:
    """`summary_pool="catalog"` lists the declared reads the gate knows; a tool that is not one
    (a declared write, or unclassified) is never named, even among this call's candidates."""
    gate = ToolAttentionMiddleware(
        ranker=BM25Ranker(),
        k=1,
        summary_pool="catalog",
        tools=TOOLS,
        reads=["get_order", "list_orders", "track_package"],
    )
    model = ScriptedChatModel(script=[say("ok")])
    create_agent(model, tools=TOOLS, middleware=[gate]).invoke(
        {"messages": [HumanMessage("cancel my order")]}
    )
    text = model.recorded[0]["system"] or ""
    assert "- list_orders:" in text and "- track_package:" in text and _names_no_write(text)
    assert not set(WRITES) & set(model.recorded[0]["tools"])


def test_the_gateway_search_breadcrumb_never_points_at_a_write() -> None:
    gateway = ToolGateway(TOOLS, approval=ApprovalGate(TokenIssuer(SECRET)))
    found = gateway.search("cancel order that has not shipped")
    assert found["candidates"][0]["name"] == "cancel_order"  # the model still finds it
    assert "cancel_order" not in found["next_step"]
    read = gateway.search("track package")
    assert 'get_tool_schema(tool_names=["track_package"])' in read["next_step"]
