"""The seed's scenario end to end: a deferred reminder through the gateway, a stall, a nudge
(the application opts in to nudges toward writes, `nudging=Nudging(writes=True)`), an approval
interrupt with a signed token, and exactly one execution after approval."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from attention_scoping.approval.middleware import WRITE_TOOLS_PROMPT
from attention_scoping.gateway import EXECUTE_TOOL, GET_TOOL_SCHEMA, SEARCH_TOOL_CATALOG
from attention_scoping.gateway.tools import GATEWAY_PROMPT
from attention_scoping.hesitation import GatewayTools, HesitationMiddleware, Nudging, Radar
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import (
    ARGS,
    SEED_STALL,
    FakeClock,
    make_gateway,
    payload,
)

RADAR = Radar(gateway=GatewayTools(GET_TOOL_SCHEMA, EXECUTE_TOOL, SEARCH_TOOL_CATALOG))
"""The radar told the gateway's tool names (the kit knows none by itself)."""
NUDGE_WRITES = Nudging(writes=True)
"""The application opts in to nudges toward the write tool it offers."""


def test_scheduled_jobs_end_to_end() -> None:
    runs: list[dict[str, Any]] = []
    clock = FakeClock()
    gateway = make_gateway(runs, clock)
    model = ScriptedChatModel(
        script=[
            calls(tool_call("search_tool_catalog", {"query": "schedule deferred reminder"}, "s1")),
            calls(tool_call("get_tool_schema", {"tool_names": ["scheduled_jobs"]}, "g1")),
            say(SEED_STALL),
            calls(
                tool_call("execute_tool", {"tool_name": "scheduled_jobs", "arguments": ARGS}, "x1")
            ),
            say("Scheduled: the reminder fires in 30 minutes (job job_001)."),
        ]
    )
    agent = create_agent(
        model,
        tools=gateway.tools,
        system_prompt=GATEWAY_PROMPT + "\n\n" + WRITE_TOOLS_PROMPT,
        middleware=[HesitationMiddleware(radar=RADAR, nudging=NUDGE_WRITES)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "seed"}}
    request = (
        "Call the scheduled_jobs tool to add a deferred reminder to verify approvals, merge, "
        "and update the report for PR #482."
    )
    events: list[dict[str, Any]] = []
    mode: str  # with a list of stream modes, LangGraph yields (mode, chunk) pairs
    chunk: Any
    for mode, chunk in agent.stream(
        {"messages": [HumanMessage(request)]}, config, stream_mode=["custom", "updates"]
    ):
        if mode == "custom":
            events.append(chunk)

    # 1. search: the write ranks first; the breadcrumb names the schema call but not the write
    # (code never points at a tool that writes, issue 24): the model picks it itself.
    state = agent.get_state(config)
    messages = state.values["messages"]
    tool_msgs = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    search = payload(tool_msgs["s1"])
    assert search["candidates"][0]["name"] == "scheduled_jobs"
    assert search["candidates"][0]["risk"] == "write"
    assert "scheduled_jobs" not in search["next_step"]
    assert search["next_step"].startswith("Call get_tool_schema with the candidate that fits")
    assert list(search)[-1] == "next_step"

    # 2. schema: a dozen fields, then the breadcrumb: execute now, defaults named, no asking.
    schema = payload(tool_msgs["g1"])
    (disclosed,) = schema["disclosed"]
    assert len(disclosed["parameters"]["properties"]) == 12
    assert disclosed["requires_approval"] is True
    step = schema["next_step"]
    assert list(schema)[-1] == "next_step"
    assert 'execute_tool(tool_name="scheduled_jobs", arguments={...})' in step
    assert 'schedule_time="+30m"' in step and 'folder="reminders"' in step
    assert "Fill title, message from the user's request" in step
    assert "do NOT ask the user to confirm" in step and "approval" in step

    # 3. the stall became a think event with the message id, and never reached the state.
    (think,) = [e for e in events if e.get("type") == "think"]
    assert think["content"] == SEED_STALL
    assert think["action"] == "nudge" and think["round"] == 1
    assert think["tools"] == ["scheduled_jobs"]
    assert think["message_id"]
    assert all(SEED_STALL not in m.text for m in messages)

    # 4. the nudge: the retry saw the stalled message, then a user turn naming the call.
    retry = model.recorded[3]["messages"]
    assert isinstance(retry[-2], AIMessage) and retry[-2].id == think["message_id"]
    assert isinstance(retry[-1], HumanMessage)
    assert 'execute_tool(tool_name="scheduled_jobs", arguments={...})' in retry[-1].text
    assert "approval" in retry[-1].text
    assert "nudge" not in json.dumps([m.id for m in messages])  # the nudge is not persisted
    assert state.values.get("hesitation") == {"turn": "0:" + messages[0].id, "nudges": 1}

    # 5. execute -> interrupt: nothing has run yet, the request carries a signed token.
    assert runs == []
    (interrupt,) = state.interrupts
    value = interrupt.value
    assert value["type"] == "tool_approval" and value["name"] == "scheduled_jobs"
    assert value["args"] == ARGS and value["tool_call_id"] == "x1"
    assert value["approval_token"].startswith("appr_")
    assert value["expires_at"] == clock.now + 600

    # 6. resume with the token: the tool runs exactly once, the receipt reaches the model.
    clock.now += 30
    result = agent.invoke(
        Command(resume={"type": "approve", "token": value["approval_token"]}), config
    )
    assert runs == [{"title": ARGS["title"], "message": ARGS["message"], "schedule_time": "+30m"}]
    receipt = payload(
        next(m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "x1")
    )
    assert receipt["status"] == "ok" and receipt["tool"] == "scheduled_jobs"
    assert receipt["result"] == {"job_id": "job_001", "fires": "+30m"}
    assert receipt["approval"]["edited"] is False
    assert receipt["approval"]["approved_at"] == clock.now
    assert result["messages"][-1].text.startswith("Scheduled:")
    assert len(model.recorded) == 5

    # 7. replaying the same approval on the same thread runs nothing more.
    again = agent.invoke(
        Command(resume={"type": "approve", "token": value["approval_token"]}), config
    )
    assert len(runs) == 1
    assert again["messages"][-1].text.startswith("Scheduled:")


def test_scheduled_jobs_over_the_real_openai_client() -> None:
    """The same flow through `ChatOpenAI` and a scripted OpenAI-compatible server: the nudge
    turn and the gateway payloads are valid on the wire, and the stall never reaches state."""
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from tests.openai_stub import OpenAIStub, ScriptEntry

    runs: list[dict[str, Any]] = []
    clock = FakeClock()
    gateway = make_gateway(runs, clock)
    script: list[ScriptEntry] = [
        {"tool_calls": [{"name": "search_tool_catalog", "arguments": {"query": "reminder"}}]},
        {
            "tool_calls": [
                {"name": "get_tool_schema", "arguments": {"tool_names": ["scheduled_jobs"]}}
            ]
        },
        {"content": SEED_STALL},
        {
            "tool_calls": [
                {
                    "name": "execute_tool",
                    "arguments": {"tool_name": "scheduled_jobs", "arguments": ARGS},
                }
            ]
        },
        {"content": "Scheduled (job_001)."},
    ]
    with OpenAIStub(script=script) as stub:
        model = ChatOpenAI(
            model="stub-model", base_url=stub.base_url, api_key=SecretStr("test-key"), max_retries=0
        )
        agent = create_agent(
            model,
            tools=gateway.tools,
            system_prompt=GATEWAY_PROMPT,
            middleware=[HesitationMiddleware(radar=RADAR, nudging=NUDGE_WRITES)],
            checkpointer=InMemorySaver(),
        )
        config: RunnableConfig = {"configurable": {"thread_id": "wire"}}
        agent.invoke({"messages": [HumanMessage("remind me to merge PR 482")]}, config)
        (interrupt,) = agent.get_state(config).interrupts
        assert runs == []
        agent.invoke(Command(resume=interrupt.value["approval_token"]), config)
        assert stub.rejections == [] and stub.errors == []
        retry = stub.accepted[3]["messages"]
        assert retry[-2]["role"] == "assistant" and retry[-2]["content"] == SEED_STALL
        assert retry[-1]["role"] == "user" and "execute_tool" in retry[-1]["content"]
        assert all(SEED_STALL not in str(m.get("content")) for m in stub.accepted[4]["messages"])
    assert len(runs) == 1
    messages = agent.get_state(config).values["messages"]
    assert messages[-1].text == "Scheduled (job_001)."
    assert all(SEED_STALL not in m.text for m in messages)
