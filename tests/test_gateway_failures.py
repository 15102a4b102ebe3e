"""Every failure on the gateway path becomes a structured tool message, and the gateway stack
applies the same call hygiene as scoping and gating: no malformed reply or failing tool ends the
run or leaves a call the next request cannot answer for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.gateway import GatewayRoutingMiddleware, ToolGateway
from attention_scoping.gateway.execute import EXECUTE_PARAMETERS
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import FakeClock, make_gateway
from tests.thread_support import assert_thread_valid


class Unprintable(Exception):
    """An exception whose message cannot be read."""

    def __str__(self) -> str:
        raise RuntimeError("no message for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


@tool
def fragile(city: str) -> str:
    """Look something up, badly."""
    raise Unprintable


def _bodies(messages: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(m.text) for m in messages if isinstance(m, ToolMessage)]


def _run(gateway: ToolGateway, script: list[AIMessage], *, routing: bool = False) -> list[Any]:
    model = ScriptedChatModel(script=script)
    middleware = [GatewayRoutingMiddleware(gateway)] if routing else []
    agent = create_agent(model, tools=gateway.tools, middleware=middleware)
    out: list[Any] = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    return out


def test_a_tool_whose_exception_cannot_be_printed_is_a_structured_failure() -> None:
    gateway = ToolGateway([fragile])
    call = tool_call("execute_tool", {"tool_name": "fragile", "arguments": {"city": "Oslo"}})
    messages = _run(gateway, [calls(call), say("It failed.")])
    [body] = _bodies(messages)
    assert body["error"] == "tool_failed" and body["tool"] == "fragile"
    assert "Unprintable" in body["message"] and "could not be read" in body["message"]
    assert messages[-1].text == "It failed."


async def test_the_async_path_reports_it_too() -> None:
    gateway = ToolGateway([fragile])
    payload = await gateway.aexecute("fragile", {"city": "Oslo"})
    assert payload["error"] == "tool_failed" and "could not be read" in payload["message"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"tool_name": "get_weather", "arguments": ["Oslo"]}, "invalid_arguments"),
        ({"tool_name": "get_weather", "arguments": 5}, "invalid_arguments"),
        ({"tool_name": "get_weather", "arguments": True}, "invalid_arguments"),
        ({"tool_name": "get_weather", "arguments": "{city: Oslo"}, "invalid_arguments"),
        ({"tool_name": 5, "arguments": {"city": "Oslo"}}, "unknown_tool"),
        ({"tool_name": None, "arguments": {"city": "Oslo"}}, "unknown_tool"),
        ({"tool_name": {"name": "get_weather"}, "arguments": {}}, "unknown_tool"),
    ],
)
def test_bad_execute_tool_arguments_get_the_gateways_answer(
    args: dict[str, Any], code: str
) -> None:
    """Arguments that are not an object and names that are not strings reach the gateway's
    own check (with the tool's schema), not LangChain's generic validation message."""
    gateway = make_gateway([], FakeClock())
    messages = _run(gateway, [calls(tool_call("execute_tool", args)), say("ok")])
    [answer] = [m for m in messages if isinstance(m, ToolMessage)]
    assert "Error invoking tool" not in answer.text
    body = json.loads(answer.text)
    assert body["error"] == code and body["next_step"]
    if code == "invalid_arguments":
        assert body["parameters"]["required"] == ["city"]


@pytest.mark.parametrize(
    ("args", "missing", "step"),
    [
        ({"arguments": {"city": "Oslo"}}, "tool_name", "search_tool_catalog"),
        ({"tool_name": "get_weather"}, "arguments", "tool_name='get_weather'"),
        ({}, "tool_name", "search_tool_catalog"),
    ],
)
def test_a_call_missing_a_required_part_gets_our_structured_answer(
    args: dict[str, Any], missing: str, step: str
) -> None:
    gateway = make_gateway([], FakeClock())
    messages = _run(gateway, [calls(tool_call("execute_tool", args)), say("ok")])
    [answer] = [m for m in messages if isinstance(m, ToolMessage)]
    assert answer.status == "error" and "Error invoking tool" not in answer.text
    body = json.loads(answer.text)
    assert body["error"] == "invalid_arguments" and body["tool"] == "execute_tool"
    assert missing in {p["field"] for p in body["problems"]}
    assert body["parameters"] == EXECUTE_PARAMETERS and step in body["next_step"]


def test_the_gateway_stack_repairs_a_malformed_reply() -> None:
    """Invalid-JSON arguments, a shared id, and an id the server reused from an earlier reply:
    every call is answered once (the invalid one with a structured error, nothing run), and the
    next request is valid."""
    runs: list[dict[str, Any]] = []
    gateway = make_gateway(runs, FakeClock())
    first = calls(tool_call("get_weather", {"city": "Oslo"}, "call_0"))
    malformed = AIMessage(
        content="",
        tool_calls=[
            tool_call("get_weather", {"city": "Rome"}, "call_0"),  # reused from the first reply
            tool_call("search_tool_catalog", {"query": "weather"}, "call_0"),  # shared
        ],
        invalid_tool_calls=[
            {"name": "get_weather", "args": '{"city": "Par', "id": "call_1", "error": "cut"},
            {"name": "execute_tool", "args": "{", "id": None, "error": "cut"},
        ],
    )
    model = ScriptedChatModel(script=[first, malformed, say("Done.")])
    agent = create_agent(
        model,
        tools=gateway.tools,
        middleware=[GatewayRoutingMiddleware(gateway)],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke(
        {"messages": [HumanMessage("weather?")]}, {"configurable": {"thread_id": "m"}}
    )
    messages = out["messages"]
    assert_thread_valid(messages)
    assert_thread_valid(model.recorded[2]["messages"])  # what the next request carried
    answers = {m.tool_call_id: json.loads(m.text) for m in messages if isinstance(m, ToolMessage)}
    invalid = [b for b in answers.values() if b.get("error") == "invalid_arguments"]
    assert len(invalid) == 2 and all("JSON object" in b["next_step"] for b in invalid)
    ok = [b for b in answers.values() if b.get("status") == "ok"]
    assert sorted(b["result"] for b in ok) == ["sunny in Oslo", "sunny in Rome"]
