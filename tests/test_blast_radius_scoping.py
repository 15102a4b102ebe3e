"""The blast-radius rule inside scoping (issues 24 and 38): code may assist with declared reads;
only the model (`load_context`) or the application (`active_context`, the default scope) opens
anything else.

An e-commerce agent of 25 tools in 5 scopes, under the default options (the lexical selector at
each turn's first call). Reads are declared by the scopes (`Scope(..., reads=...)`); every other
tool may write, whatever its metadata says or omits. The rules read the catalog through
`ScopeCatalog.is_read`, never through tool names, so they hold for any catalog.
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

from attention_scoping.gate import record_of
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.risk import declared_read
from attention_scoping.scopes import Scope, ScopeCatalog
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
"""scope -> (tool, description, parameters, metadata): writes of every kind (`risk="write"`,
`requires_approval=True`, MCP `destructiveHint: true`); the tools without metadata are declared
reads by their scope below."""

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
            Scope(
                scope,
                DESCRIPTIONS[scope],
                tools=[self.tools[e[0]] for e in entries],
                reads=[e[0] for e in entries if not e[3]],
            )
            for scope, entries in CATALOG.items()
        ]
        self.catalog = ScopeCatalog(self.scopes)

    def _tool(
        self, name: str, description: str, params: tuple[str, ...], metadata: dict[str, Any]
    ) -> BaseTool:
        def run(**kwargs: Any) -> str:
            self.ran.append(name)
            if not declared_read(metadata):
                self.changed[name] = str(kwargs.get("order_id", kwargs))
            return json.dumps({"tool": name, "ok": True, **kwargs})

        fields: dict[str, Any] = {p: (str, ...) for p in params}
        schema = create_model(f"{name}_args", **fields)
        return StructuredTool.from_function(
            run, name=name, description=description, args_schema=schema, metadata=metadata
        )

    @property
    def writers(self) -> frozenset[str]:
        """The tools that may write: every tool nobody declared a read (the package's rule)."""
        return frozenset(n for n in self.tools if not self.catalog.is_read(n))

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
    tools = list(shop.tools.values())
    return create_agent(model, tools=tools, middleware=[scoping], checkpointer=saver), model


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
    assert not set(result["scope_selection"]["reads"]) & shop.writers  # nothing to nudge toward
    chosen = result["scope_selection"]["scope"]
    if chosen is not None:  # pre-selected: the scope's reading tools, opened by code
        assert model.recorded[0]["tools"] == shop.shown(chosen, writes_too=False)
        assert result["scope_opened"]["by"] == "code"
    else:  # a close call shows the matching reads of every scope, no match only load_context
        assert result.get("active_context") is None
        assert set(model.recorded[0]["tools"]) - {"load_context"} <= set(shop.tools) - shop.writers


def test_the_cases_cover_selection_and_a_close_call(shop: Shop) -> None:
    """The messages above meet both paths: a scope selected by code, and a close call whose
    matching reads are shown unscoped."""
    chosen = []
    for message in MESSAGES:
        agent, _ = agent_for(shop, [say("ok")])
        chosen.append(agent.invoke({"messages": [HumanMessage(message)]})["scope_selection"])
    assert {c["scope"] is None for c in chosen} == {True, False}
    assert any(c["reason"] == "close_call" and c["reads"] for c in chosen)


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


def test_the_close_call_reads_leave_view_once_a_scope_is_loaded(shop: Shop) -> None:
    agent, model = agent_for(shop, [call("load_context", name="orders"), say("ok")])
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[1])]})

    assert result["scope_selection"]["reason"] == "close_call"
    offered = set(model.recorded[0]["tools"]) - {"load_context"}
    assert len({shop.owner(t) for t in offered}) > 1  # reads of several scopes
    assert model.recorded[1]["tools"] == shop.shown("orders", writes_too=True)


def test_a_close_call_read_runs_and_its_scopes_writes_wait_for_the_model(shop: Shop) -> None:
    """A read shown on a close call runs without opening its scope; a write of that scope is
    refused until the model loads the scope itself, then it runs."""
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

    assert model.recorded[1]["tools"] == model.recorded[0]["tools"]  # still unscoped
    (refusal,) = refusals(result["messages"])
    assert refusal["error"] == "tool_not_in_context"
    assert write not in refusal["available_tools"]
    assert f"load_context({scope!r})" in refusal["next_step"]
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
    agent.invoke({"messages": [HumanMessage(MESSAGES[4])]}, THREAD)
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
    reply = result["messages"][-1]
    record = record_of(reply, "AttentionScopingMiddleware")
    assert record is not None and record["opened_by"] == "application"


async def test_the_async_path_keeps_the_rule(shop: Shop) -> None:
    script = [call("update_address", order_id=ORDER, address="Elm St 1"), say("Checking.")]
    agent, model = agent_for(shop, script)
    result = await agent.ainvoke({"messages": [HumanMessage(MESSAGES[3])]})
    assert shown_writes(model, shop) == [set(), set()]
    assert shop.ran == [] and shop.changed == {}
    (refusal,) = refusals(result["messages"])
    assert "load_context('orders')" in refusal["next_step"]


def test_a_state_that_lost_the_opening_record_fails_closed(shop: Shop) -> None:
    """A state that kept `active_context` and the turn's selection but dropped `scope_opened`
    shows the reading tools only: the scope counts as opened by code, not by the application.
    Without the selection either, the application set the scope, and everything shows."""
    agent, _ = agent_for(shop, [say("Let me look.")])
    result = agent.invoke({"messages": [HumanMessage(MESSAGES[4])]})
    scope = result["scope_selection"]["scope"]
    assert scope is not None and result["scope_opened"]["by"] == "code"
    scoping = AttentionScopingMiddleware(shop.scopes)
    tools = scoping.tools  # load_context and the scopes' tools, as create_agent registers them
    lost = {k: v for k, v in result.items() if k != "scope_opened"}
    plan = scoping.plan({**lost, "messages": result["messages"][:1]}, tools)
    assert plan.opened_by == "code"
    assert set(plan.tools) == set(shop.shown(scope, writes_too=False))
    application = {k: v for k, v in lost.items() if k != "scope_selection"}
    plan = scoping.plan({**application, "messages": result["messages"][:1]}, tools)
    assert plan.opened_by == "application"
    assert set(plan.tools) == set(shop.shown(scope, writes_too=True))
