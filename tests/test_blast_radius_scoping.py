"""The blast-radius rule inside scoping (issue 24): code may assist with reads; only the model
(`load_context`) or the application (`active_context`, the default scope) opens writes.

An e-commerce agent of 25 tools in 5 scopes, under the default options (pre-selection every
turn, the `top` start, the bundled encoder). The rules asserted here read the catalog through
`core.blast_radius.writes`, never through tool names, so they hold for any catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import create_model

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.common.blast_radius import writes
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

ORDER = "A-5001"

CATALOG: dict[str, list[tuple[str, str, tuple[str, ...], dict[str, Any]]]] = {
    "orders": [
        ("get_order_status", "Look up the status of an order by its id.", ("order_id",), {}),
        (
            "list_recent_orders",
            "List a customer's recent orders with ids and totals.",
            ("email",),
            {},
        ),
        (
            "get_order_items",
            "List the items, quantities and prices in an order.",
            ("order_id",),
            {},
        ),
        (
            "cancel_order",
            "Cancel an order that has not shipped yet.",
            ("order_id", "reason"),
            {"risk": "write"},
        ),
        (
            "update_address",
            "Change the delivery address of an order.",
            ("order_id", "address"),
            {"risk": "write"},
        ),
    ],
    "shipping": [
        (
            "track_package",
            "Track an order's package: carrier, last scan, location.",
            ("order_id",),
            {},
        ),
        (
            "get_delivery_estimate",
            "Estimate when an order's package will arrive.",
            ("order_id",),
            {},
        ),
        (
            "list_carriers",
            "List the shipping carriers that deliver to a country.",
            ("country",),
            {},
        ),
        (
            "get_shipping_rates",
            "Shipping prices and delivery times to a country.",
            ("country",),
            {},
        ),
        (
            "reship_order",
            "Send a lost or damaged order again at no cost.",
            ("order_id",),
            {"annotations": {"destructiveHint": True}},
        ),
    ],
    "returns": [
        ("get_return_policy", "The store's return and refund policy.", (), {}),
        (
            "check_refund_status",
            "Check whether a refund for an order was issued.",
            ("order_id",),
            {},
        ),
        ("list_return_reasons", "The reasons a customer can give for a return.", (), {}),
        (
            "start_return",
            "Open a return for an order and email a return label.",
            ("order_id", "reason"),
            {"requires_approval": True},
        ),
        (
            "issue_refund",
            "Refund money for an order to the customer's card.",
            ("order_id",),
            {"risk": "write"},
        ),
    ],
    "products": [
        ("search_products", "Search the product catalog by keywords.", ("query",), {}),
        (
            "get_product",
            "Details of one product: description, price, options.",
            ("product_id",),
            {},
        ),
        (
            "check_stock",
            "Whether a product is in stock and how many are left.",
            ("product_id",),
            {},
        ),
        (
            "get_reviews",
            "Customer reviews and the average rating of a product.",
            ("product_id",),
            {},
        ),
        ("compare_products", "Compare two products side by side.", ("first", "second"), {}),
    ],
    "account": [
        ("get_account", "A customer's account: name, email, default address.", ("email",), {}),
        ("list_payment_methods", "The payment methods saved on an account.", ("email",), {}),
        ("get_loyalty_points", "A customer's loyalty points balance.", ("email",), {}),
        (
            "update_email",
            "Change the email address of an account.",
            ("email", "new_email"),
            {"risk": "write"},
        ),
        (
            "remove_payment_method",
            "Remove a saved payment method from an account.",
            ("email", "method_id"),
            {"annotations": {"destructiveHint": True}},
        ),
    ],
}
"""scope -> (tool, description, parameters, metadata): reads and writes of every kind
(`risk="write"`, `requires_approval=True`, MCP `destructiveHint: true`)."""

DESCRIPTIONS = {
    "orders": "order status, order contents, cancelling an order, changing its address",
    "shipping": "package tracking, delivery estimates, carriers, rates, reshipping lost orders",
    "returns": "returns, refunds and the return policy",
    "products": "product search, details, stock, reviews and comparisons",
    "account": "customer account, email, payment methods and loyalty points",
}

MESSAGES = [
    f"Where is my order {ORDER}?",
    f"I have a problem with order {ORDER}",
    f"My order {ORDER} is wrong, help",
    f"{ORDER} hasn't arrived, what can I do?",
    f"Cancel my order {ORDER} please",
]


class Shop:
    """The store behind the tools: which tools ran, and what they changed."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.changed: dict[str, str] = {}
        self.tools: dict[str, BaseTool] = {}
        for entries in CATALOG.values():
            for name, description, params, metadata in entries:
                self.tools[name] = self._tool(name, description, params, metadata)
        self.scopes = [
            Scope(scope, DESCRIPTIONS[scope], tools=[self.tools[e[0]] for e in entries])
            for scope, entries in CATALOG.items()
        ]

    def _tool(
        self, name: str, description: str, params: tuple[str, ...], metadata: dict[str, Any]
    ) -> BaseTool:
        def run(**kwargs: Any) -> str:
            self.ran.append(name)
            if writes(metadata):
                self.changed[name] = str(kwargs.get("order_id", kwargs))
            return json.dumps({"tool": name, "ok": True, **kwargs})

        fields: dict[str, Any] = {p: (str, ...) for p in params}
        schema = create_model(f"{name}_args", **fields)
        return StructuredTool.from_function(
            run, name=name, description=description, args_schema=schema, metadata=metadata
        )

    @property
    def writers(self) -> frozenset[str]:
        """The tools that write, read off their metadata by the package's one rule."""
        return frozenset(n for n, t in self.tools.items() if writes(t))

    def owner(self, tool: str) -> str:
        return next(s.name for s in self.scopes if tool in s.tools)

    def shown(self, scope: str, *, writes_too: bool) -> list[str]:
        """What the model is shown in `scope`: `load_context`, then the scope's tools (its
        writes only when the model or the application opened it)."""
        own = next(s.tools for s in self.scopes if s.name == scope)
        return ["load_context", *(t for t in own if writes_too or t not in self.writers)]


@pytest.fixture
def shop() -> Shop:
    return Shop()


def agent_for(
    shop: Shop, script: list[Any], *, checkpointer: bool = False, **options: Any
) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=script)
    scoping = AttentionScopingMiddleware(shop.scopes, **options)
    saver = InMemorySaver() if checkpointer else None
    return create_agent(model, middleware=[scoping], checkpointer=saver), model


def shown_writes(model: ScriptedChatModel, shop: Shop) -> list[set[str]]:
    """Per model call, the writing tools it was shown."""
    return [set(r["tools"]) & shop.writers for r in model.recorded]


def refusals(messages: list[BaseMessage]) -> Iterator[dict[str, Any]]:
    for message in messages:
        if isinstance(message, ToolMessage) and message.status == "error":
            yield json.loads(str(message.content))


def call(tool: str, /, **args: Any) -> AIMessage:
    return calls(tool_call(tool, args))


THREAD: RunnableConfig = {"configurable": {"thread_id": "shop"}}


# -- nothing code opens shows or runs a write -----------------------------------------------


@pytest.mark.parametrize("message", MESSAGES)
def test_no_write_is_shown_or_runs_until_the_model_loads_its_scope(
    shop: Shop, message: str
) -> None:
    """Whatever pre-selection or the start set decide, the first call shows only reading
    tools, and a write the model calls anyway is refused, names the `load_context` call that
    opens it, and never runs."""
    script = [call("cancel_order", order_id=ORDER, reason="late"), say("Let me check first.")]
    agent, model = agent_for(shop, script)
    result = agent.invoke({"messages": [HumanMessage(message)]})

    assert shown_writes(model, shop) == [set(), set()]
    assert shop.ran == [] and shop.changed == {}
    (refusal,) = refusals(result["messages"])
    assert refusal["error"] == "tool_not_in_context"
    assert f"load_context({shop.owner('cancel_order')!r})" in refusal["next_step"]
    assert not set(result["scope_selection"]["tools"]) & shop.writers  # nothing to nudge toward
    chosen = result["scope_selection"]["scope"]
    if chosen is not None:  # pre-selected: the scope's reading tools, opened by code
        assert model.recorded[0]["tools"] == shop.shown(chosen, writes_too=False)
        assert result["scope_opened"]["by"] == "code"
    else:  # the start set: reading tools only
        assert result.get("active_context") is None
        assert set(model.recorded[0]["tools"]) - {"load_context"} <= set(shop.tools) - shop.writers


def test_the_cases_cover_preselection_and_the_start_set(shop: Shop) -> None:
    """The messages above meet both paths: a scope pre-selected by code, and a start set."""
    chosen = []
    for message in MESSAGES:
        agent, _ = agent_for(shop, [say("ok")])
        chosen.append(agent.invoke({"messages": [HumanMessage(message)]})["scope_selection"])
    assert {c["scope"] is None for c in chosen} == {True, False}
    assert any(c["reason"] == "close_call" and c["tools"] for c in chosen)


def test_a_write_runs_once_the_model_loads_its_scope(shop: Shop) -> None:
    script = [
        call("cancel_order", order_id=ORDER, reason="late"),
        call("load_context", name="orders"),
        call("cancel_order", order_id=ORDER, reason="late"),
        say("Your order is cancelled."),
    ]
    agent, model = agent_for(shop, script)
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[0])]})

    assert shop.ran == ["cancel_order"]  # the second call, not the refused first one
    assert shop.changed == {"cancel_order": ORDER}
    assert model.recorded[2]["tools"] == shop.shown("orders", writes_too=True)  # 6, not 11
    assert result["active_context"] == "orders"
    assert result["scope_opened"]["by"] == "model"
    assert result.get("scope_offered") is None


def test_the_start_set_leaves_view_once_a_scope_is_loaded(shop: Shop) -> None:
    agent, model = agent_for(shop, [call("load_context", name="orders"), say("ok")])
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[1])]})

    assert result["scope_selection"]["scope"] is None  # not confident: the start set
    offered = set(model.recorded[0]["tools"]) - {"load_context"}
    assert len({shop.owner(t) for t in offered}) > 1  # tools of several scopes
    assert model.recorded[1]["tools"] == shop.shown("orders", writes_too=True)
    assert result.get("scope_offered") is None


def test_a_start_set_call_opens_its_scope_for_reading_only(shop: Shop) -> None:
    """Calling an offered tool adopts its scope (opened by code): its reads are shown, its
    writes are refused until the model loads the scope itself, then they run."""
    agent, model = agent_for(shop, [say("ok")])
    agent.invoke({"messages": [HumanMessage(MESSAGES[1])]})
    read = next(t for t in model.recorded[0]["tools"] if t != "load_context")
    scope = shop.owner(read)
    write = next(t for t in shop.writers if shop.owner(t) == scope)
    script = [
        call(read, **{p: ORDER for p in shop.tools[read].args}),
        call(write, **{p: ORDER for p in shop.tools[write].args}),
        call("load_context", name=scope),
        call(write, **{p: ORDER for p in shop.tools[write].args}),
        say("done"),
    ]
    agent, model = agent_for(shop, script)
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[1])]})

    assert model.recorded[1]["tools"] == shop.shown(scope, writes_too=False)
    (refusal,) = refusals(result["messages"])
    assert refusal["error"] == "tool_not_in_context"
    assert refusal["active_context"] == scope
    assert write not in refusal["available_tools"]
    assert f"load_context({scope!r})" in refusal["next_step"]
    loaded = json.loads(str(result["messages"][-4].content))
    assert "loaded by you" in loaded["message"]
    assert model.recorded[3]["tools"] == shop.shown(scope, writes_too=True)
    assert shop.ran == [read, write]
    assert result["scope_opened"]["by"] == "model"


# -- the application opens writes -----------------------------------------------------------


def test_active_context_in_the_input_wins_for_the_turn(shop: Shop) -> None:
    script = [call("cancel_order", order_id=ORDER, reason="late"), say("Cancelled."), say("ok")]
    agent, model = agent_for(shop, script, checkpointer=True)
    result = agent.invoke(
        {"messages": [HumanMessage(MESSAGES[0])], "active_context": "orders"}, THREAD
    )
    assert model.recorded[0]["tools"] == shop.shown("orders", writes_too=True)
    assert result["scope_opened"]["by"] == "application"
    assert result.get("scope_selection") is None  # pre-selection did not run this turn
    assert shop.changed == {"cancel_order": ORDER}

    # The next turn, pre-selection works again, and what it opens shows only reads.
    later = agent.invoke({"messages": [HumanMessage("Is the kettle in stock?")]}, THREAD)
    assert later["active_context"] == "products"
    assert later["scope_opened"]["by"] == "code"
    assert model.recorded[2]["tools"] == shop.shown("products", writes_too=False)


def test_a_scope_set_with_update_state_is_opened_by_the_application(shop: Shop) -> None:
    agent, model = agent_for(shop, [say("ok"), say("ok")], checkpointer=True)
    agent.invoke({"messages": [HumanMessage(MESSAGES[0])]}, THREAD)
    assert agent.get_state(THREAD).values["scope_opened"]["by"] == "code"
    agent.update_state(THREAD, {"active_context": "account"})
    agent.invoke({"messages": [HumanMessage("thanks")]}, THREAD)
    assert model.recorded[1]["tools"] == shop.shown("account", writes_too=True)
    assert agent.get_state(THREAD).values["scope_opened"]["by"] == "application"


def test_the_default_scope_is_opened_by_the_application(shop: Shop) -> None:
    agent, model = agent_for(shop, [say("hi")], default_scope="orders")
    result = agent.invoke({"messages": [HumanMessage("hello")]})
    assert result["scope_selection"]["scope"] is None
    assert model.recorded[0]["tools"] == shop.shown("orders", writes_too=True)
    assert result["scope_opened"]["by"] == "application"


# -- on_foreign_tool="switch" ----------------------------------------------------------------


def test_switch_adopts_a_foreign_read_but_never_a_foreign_write(shop: Shop) -> None:
    script = [
        call("start_return", order_id=ORDER, reason="broken"),  # returns, needs approval
        call("check_refund_status", order_id=ORDER),  # returns, reads: adopts the scope
        call("issue_refund", order_id=ORDER),  # a write of a scope code opened
        call("load_context", name="returns"),
        call("issue_refund", order_id=ORDER),
        say("Refunded."),
    ]
    agent, model = agent_for(shop, script, on_foreign_tool="switch")
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[2])], "active_context": "orders"})
    first, second = refusals(result["messages"])
    assert first["error"] == second["error"] == "tool_not_in_context"
    assert "load_context('returns')" in first["next_step"]
    assert "load_context('returns')" in second["next_step"]
    assert model.recorded[2]["tools"] == shop.shown("returns", writes_too=False)
    assert model.recorded[4]["tools"] == shop.shown("returns", writes_too=True)
    assert shop.ran == ["check_refund_status", "issue_refund"]
    assert shop.changed == {"issue_refund": ORDER}
    assert result["scope_opened"]["by"] == "model"


def test_switch_in_one_step_runs_the_read_and_refuses_the_write(shop: Shop) -> None:
    step = calls(
        tool_call("track_package", {"order_id": ORDER}),
        tool_call("reship_order", {"order_id": ORDER}),
    )
    agent, model = agent_for(shop, [step, say("ok")], on_foreign_tool="switch")
    result = agent.invoke({"messages": [HumanMessage("hello")], "active_context": "products"})
    assert shop.ran == ["track_package"] and shop.changed == {}
    (refusal,) = refusals(result["messages"])
    assert "load_context('shipping')" in refusal["next_step"]
    assert result["active_context"] == "shipping"
    assert result["scope_opened"]["by"] == "code"
    assert model.recorded[1]["tools"] == shop.shown("shipping", writes_too=False)


async def test_the_async_path_keeps_the_rule(shop: Shop) -> None:
    script = [call("update_address", order_id=ORDER, address="Elm St 1"), say("Checking.")]
    agent, model = agent_for(shop, script)
    result = await agent.ainvoke({"messages": [HumanMessage(MESSAGES[3])]})
    assert shown_writes(model, shop) == [set(), set()]
    assert shop.ran == [] and shop.changed == {}
    (refusal,) = refusals(result["messages"])
    assert "load_context('orders')" in refusal["next_step"]


def test_a_state_that_lost_the_opening_record_fails_closed(shop: Shop) -> None:
    """A graph state that kept `active_context` and the pre-selection record but dropped
    `scope_opened` (a schema that does not declare it) shows the reading tools only: the
    scope counts as opened by code, not by the application."""
    agent, _ = agent_for(shop, [say("Let me look.")])
    result = agent.invoke({"messages": [HumanMessage("Where is my order A-5001?")]})
    scope = result["scope_selection"]["scope"]
    assert scope is not None and result["scope_opened"]["by"] == "code"
    scoping = AttentionScopingMiddleware(shop.scopes)
    lost = {k: v for k, v in result.items() if k != "scope_opened"}
    visible = scoping.visible_tool_names(lost, list(shop.tools.values()))
    assert not set(visible) & shop.writers
    assert set(visible) == set(shop.shown(scope, writes_too=False)) - {"load_context"}
    application = {k: v for k, v in lost.items() if k != "scope_selection"}
    assert set(shop.shown(scope, writes_too=True)) - {"load_context"} <= set(
        scoping.visible_tool_names(application, list(shop.tools.values()))
    )
