"""`GatewayRoutingMiddleware`: a catalog tool the model calls by its own name (natively or as
text) runs through the gateway's `execute_tool`, with the gateway's checks."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from attention_scoping.gateway import GatewayRoutingMiddleware, ToolGateway
from attention_scoping.gateway.routing import route_calls
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import FakeClock, make_gateway

TEXT_CALL = '```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'


def _agent(gateway: ToolGateway, script: list[Any], **routing: Any) -> tuple[Any, Any]:
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model,
        tools=gateway.tools,
        system_prompt=gateway.prompt(pool=True),
        middleware=[GatewayRoutingMiddleware(gateway, **routing)],
    )
    return model, agent


def _tool_bodies(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m.text) for m in result["messages"] if isinstance(m, ToolMessage)]


def test_a_native_call_by_name_runs_through_execute_tool() -> None:
    gateway = make_gateway([], FakeClock())
    model, agent = _agent(
        gateway, [calls(tool_call("get_weather", {"city": "Oslo"}, "w1")), say("Sunny.")]
    )
    result = agent.invoke({"messages": [HumanMessage("weather in Oslo?")]})
    [body] = _tool_bodies(result)
    assert body["status"] == "ok" and body["result"] == "sunny in Oslo"
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.tool_calls[0]["name"] == "execute_tool"
    assert ai.tool_calls[0]["id"] == "w1"
    assert ai.tool_calls[0]["args"] == {"tool_name": "get_weather", "arguments": {"city": "Oslo"}}
    assert ai.response_metadata["routed_tool_calls"] == 1
    # The next model call sees its own call in the gateway's form.
    assert model.recorded[1]["messages"][-2].tool_calls[0]["name"] == "execute_tool"


def test_text_calls_by_name_are_routed_only_when_asked() -> None:
    gateway = make_gateway([], FakeClock())
    _model, agent = _agent(gateway, [say(TEXT_CALL), say("Sunny.")], parse_text_calls=True)
    [body] = _tool_bodies(agent.invoke({"messages": [HumanMessage("weather in Oslo?")]}))
    assert body["status"] == "ok" and body["result"] == "sunny in Oslo"
    _model, plain = _agent(gateway, [say(TEXT_CALL)])
    result = plain.invoke({"messages": [HumanMessage("weather in Oslo?")]})
    assert _tool_bodies(result) == [] and result["messages"][-1].text == TEXT_CALL


def test_routed_calls_keep_the_gateway_checks() -> None:
    """A routed call is an ordinary execute_tool call: bad arguments come back with the schema
    and a tool the caller may not see is refused, nothing runs."""
    base = make_gateway([], FakeClock())
    gateway = ToolGateway(
        list(base.entries.values()),
        approval=base.approval,
        allow=lambda entry, state: entry.name != "list_jobs",
    )
    _model, agent = _agent(
        gateway,
        [
            calls(tool_call("get_weather", {"town": "Oslo"}, "a")),
            calls(tool_call("list_jobs", {}, "b")),
            say("Done."),
        ],
    )
    bad, refused = _tool_bodies(agent.invoke({"messages": [HumanMessage("go")]}))
    assert bad["error"] == "invalid_arguments" and "parameters" in bad
    assert refused["error"] == "unauthorized"


def test_only_declared_reads_are_routed() -> None:
    """Routing is code deciding for the model, so it names declared reads only: a call of
    `create_invoice` (nobody classified it: it may write) or `scheduled_jobs` (a write) by
    name is left as the model wrote it; the model runs them through execute_tool itself."""
    gateway = make_gateway([], FakeClock())
    assert gateway.reads == {"get_weather", "list_jobs"}
    reply = calls(
        tool_call("create_invoice", {"customer_id": "c", "amount": 1}, "a"),
        tool_call("scheduled_jobs", {"action": "list"}, "b"),
        tool_call("list_jobs", {}, "c"),
    )
    routing = GatewayRoutingMiddleware(gateway)
    routed = routing.rewrite(reply, set(gateway.tool_names))
    assert isinstance(routed, AIMessage)
    assert [c["name"] for c in routed.tool_calls] == [
        "create_invoice",
        "scheduled_jobs",
        "execute_tool",
    ]


def test_route_calls_leaves_other_calls_and_messages_alone() -> None:
    both = AIMessage(
        "",
        tool_calls=[
            {"name": "get_weather", "args": {"city": "Rome"}, "id": "1", "type": "tool_call"},
            {"name": "search_tool_catalog", "args": {"query": "x"}, "id": "2", "type": "tool_call"},
            {"name": "nonexistent", "args": {}, "id": "3", "type": "tool_call"},
        ],
    )
    routed = route_calls(both, {"get_weather"})
    assert isinstance(routed, AIMessage)
    assert [c["name"] for c in routed.tool_calls] == [
        "execute_tool",
        "search_tool_catalog",
        "nonexistent",
    ]
    untouched = AIMessage("", tool_calls=both.tool_calls[1:])
    assert route_calls(untouched, {"get_weather"}) is untouched
    human = HumanMessage(TEXT_CALL)
    assert route_calls(human, {"get_weather"}, also_text={"get_weather"}) is human


def test_nothing_is_routed_while_execute_tool_is_not_offered() -> None:
    """With execute_tool hidden on a call (say, by another middleware), a call by name is left
    as the model made it."""
    gateway = make_gateway([], FakeClock())
    model = ScriptedChatModel(
        script=[calls(tool_call("get_weather", {"city": "Oslo"}, "w")), say("No tool.")]
    )
    search_only = [t for t in gateway.tools if t.name == "search_tool_catalog"]
    agent = create_agent(model, tools=search_only, middleware=[GatewayRoutingMiddleware(gateway)])
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    ai = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.tool_calls[0]["name"] == "get_weather"
    assert "routed_tool_calls" not in ai.response_metadata
