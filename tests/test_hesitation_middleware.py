"""HesitationMiddleware in create_agent and in a hand-built StateGraph, alone and composed."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

from attention_scoping import AttentionScopingMiddleware, Scope
from attention_scoping.graph import make_model_node, make_tool_node
from attention_scoping.hesitation.middleware import HesitationGraphState, HesitationMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.test_scheduled_jobs_scenario import (
    ARGS,
    SEED_STALL,
    FakeClock,
    make_gateway,
    make_scheduled_jobs,
)

STALL_2 = "Before I proceed, please confirm the title and message for the reminder."
STALL_3 = "Shall I go ahead and schedule it with schedule_time +30m and folder reminders?"


def bound_agent(
    script: list[Any], runs: list[dict[str, Any]], **kwargs: Any
) -> tuple[ScriptedChatModel, Any]:
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model,
        tools=[make_scheduled_jobs(runs)],
        middleware=[HesitationMiddleware(**kwargs)],
        checkpointer=InMemorySaver(),
    )
    return model, agent


def stream(agent: Any, inputs: Any, config: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for mode, chunk in agent.stream(inputs, config, stream_mode=["custom", "updates"]):
        if mode == "custom" and chunk.get("type") == "think":
            events.append(chunk)
    return events


def test_bound_tool_stall_is_nudged_into_a_call() -> None:
    runs: list[dict[str, Any]] = []
    model, agent = bound_agent(
        [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")], runs
    )
    config = {"configurable": {"thread_id": "1"}}
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config)
    assert [e["action"] for e in events] == ["nudge"]
    assert len(runs) == 1
    nudge = model.recorded[1]["messages"][-1]
    assert isinstance(nudge, HumanMessage)
    assert "Call scheduled_jobs(...), filling title, message from my request" in nudge.text
    messages = agent.get_state(config).values["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert all(SEED_STALL not in m.text for m in messages)


def test_bound_at_max_nudges_gives_an_honest_answer() -> None:
    runs: list[dict[str, Any]] = []
    model, agent = bound_agent([say(SEED_STALL), say(STALL_2), say(STALL_3)], runs)
    config = {"configurable": {"thread_id": "2"}}
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config)
    assert len(model.recorded) == 3  # one call and two nudged retries, no more
    assert [e["action"] for e in events] == ["nudge", "nudge", "give_up"]
    assert [e["round"] for e in events] == [1, 2, 3]
    assert len({e["message_id"] for e in events}) == 3
    state = agent.get_state(config).values
    final = state["messages"][-1]
    assert final.text.startswith("Nothing was executed: I did not call scheduled_jobs.")
    assert STALL_3 in final.text  # the model's question stays visible, honestly framed
    assert final.response_metadata["hesitation"] == "gave_up"
    assert state["hesitation"]["nudges"] == 2
    assert runs == []

    # A new user turn gets a fresh budget.
    model.script += [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c9")), say("ok")]
    events = stream(agent, {"messages": [HumanMessage("use the defaults")]}, config)
    assert [e["action"] for e in events] == ["nudge"]
    assert len(runs) == 1


def test_max_nudges_zero_only_hides_and_reports() -> None:
    runs: list[dict[str, Any]] = []
    model, agent = bound_agent([say(SEED_STALL)], runs, max_nudges=0)
    config = {"configurable": {"thread_id": "3"}}
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config)
    assert [e["action"] for e in events] == ["give_up"] and len(model.recorded) == 1


def test_legitimate_answers_pass_untouched() -> None:
    runs: list[dict[str, Any]] = []
    clarifying = "Which pull request is this for? There are two open ones, #482 and #497."
    model, agent = bound_agent([say(clarifying)], runs)
    config = {"configurable": {"thread_id": "4"}}
    events = stream(agent, {"messages": [HumanMessage("remind me about the PR")]}, config)
    assert events == [] and len(model.recorded) == 1
    assert agent.get_state(config).values["messages"][-1].text == clarifying
    assert "hesitation" not in agent.get_state(config).values


def test_offer_after_a_real_result_is_not_a_stall() -> None:
    runs: list[dict[str, Any]] = []
    model, agent = bound_agent(
        [
            calls(tool_call("scheduled_jobs", ARGS, "c1")),
            say("Done. Would you like me to proceed with another reminder for the release?"),
        ],
        runs,
    )
    events = stream(
        agent, {"messages": [HumanMessage("remind me")]}, {"configurable": {"thread_id": "5"}}
    )
    assert events == [] and len(model.recorded) == 2


def test_question_about_the_tool_is_not_judged() -> None:
    runs: list[dict[str, Any]] = []
    listing = "It takes title, message, schedule_time, folder and notify_email."
    model, agent = bound_agent([say(listing)], runs)
    config = {"configurable": {"thread_id": "6"}}
    events = stream(
        agent, {"messages": [HumanMessage("What parameters does scheduled_jobs take?")]}, config
    )
    assert events == [] and len(model.recorded) == 1


def test_no_disclosed_schema_no_judging() -> None:
    model = ScriptedChatModel(script=[say("Would you like me to proceed?")])
    agent = create_agent(model, middleware=[HesitationMiddleware()])
    result = agent.invoke({"messages": [HumanMessage("hi")]})
    assert result["messages"][-1].text == "Would you like me to proceed?"
    assert len(model.recorded) == 1


async def test_async_nudge_loop() -> None:
    runs: list[dict[str, Any]] = []
    _model, agent = bound_agent(
        [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")], runs
    )
    config = {"configurable": {"thread_id": "7"}}
    events = []
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("remind me")]}, config, stream_mode=["custom", "updates"]
    ):
        if mode == "custom" and chunk.get("type") == "think":
            events.append(chunk)
    assert [e["action"] for e in events] == ["nudge"] and len(runs) == 1


def test_think_event_id_matches_the_streamed_message() -> None:
    runs: list[dict[str, Any]] = []
    _model, agent = bound_agent(
        [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")], runs
    )
    streamed: dict[str, str] = {}
    think: list[dict[str, Any]] = []
    for mode, chunk in agent.stream(
        {"messages": [HumanMessage("remind me")]},
        {"configurable": {"thread_id": "8"}},
        stream_mode=["messages", "custom"],
    ):
        if mode == "messages":
            message, _ = chunk
            if isinstance(message, AIMessage) and message.id:
                streamed[message.id] = streamed.get(message.id, "") + message.text
        elif chunk.get("type") == "think":
            think.append(chunk)
    (event,) = think
    # The messages stream already showed the stall; the event names it so a UI can retract it.
    assert streamed[event["message_id"]] == SEED_STALL


def test_gateway_disclosure_in_a_hand_built_graph() -> None:
    runs: list[dict[str, Any]] = []
    gateway = make_gateway(runs, FakeClock())
    model = ScriptedChatModel(
        script=[
            calls(tool_call("get_tool_schema", {"tool_names": ["scheduled_jobs"]}, "g")),
            say(SEED_STALL),
            calls(
                tool_call("execute_tool", {"tool_name": "scheduled_jobs", "arguments": ARGS}, "x")
            ),
            say("Scheduled."),
        ]
    )
    hesitation = HesitationMiddleware()
    graph = StateGraph(HesitationGraphState)
    graph.add_node("model", make_model_node(model, gateway.tools, middleware=[hesitation]))
    graph.add_node("tools", make_tool_node(gateway.tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "g"}}
    events = stream(app, {"messages": [HumanMessage("remind me")]}, config)
    assert [e["action"] for e in events] == ["nudge"]
    assert events[0]["tools"] == ["scheduled_jobs"]
    assert app.get_state(config).values["hesitation"]["nudges"] == 1
    (interrupt,) = app.get_state(config).interrupts
    assert runs == []
    app.invoke(Command(resume=interrupt.value["approval_token"]), config)
    assert len(runs) == 1
    assert app.get_state(config).values["messages"][-1].text == "Scheduled."


def test_composition_with_scoping_and_hitl_per_call() -> None:
    """scoping -> hesitation -> HITL(per_call): the retry keeps the scoped tools, the stall
    never reaches a human, one interrupt for the real call, one execution after approval."""
    runs: list[dict[str, Any]] = []
    jobs = make_scheduled_jobs(runs)

    @tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    scoping = AttentionScopingMiddleware(
        [
            Scope("reminders", "deferred reminders", tools=[jobs]),
            Scope("weather", "forecasts", tools=[get_weather]),
        ]
    )
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={"scheduled_jobs": True}, interrupt_mode="per_call"
    )
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "reminders"}, "l")),
            say(SEED_STALL),
            calls(tool_call("scheduled_jobs", ARGS, "c")),
            say("Scheduled."),
        ]
    )
    agent = create_agent(
        model,
        middleware=[scoping, HesitationMiddleware(), hitl],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "c"}}
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config)
    assert [e["action"] for e in events] == ["nudge"]
    assert (
        model.recorded[1]["tools"]
        == model.recorded[2]["tools"]
        == [
            "load_context",
            "scheduled_jobs",
        ]
    )
    assert model.recorded[1]["system"] == model.recorded[2]["system"]  # same scoped prompt
    (interrupt,) = agent.get_state(config).interrupts
    assert interrupt.value["name"] == "scheduled_jobs" and runs == []
    agent.invoke(Command(resume={interrupt.id: {"type": "approve"}}), config)
    assert len(runs) == 1
    assert agent.get_state(config).values["messages"][-1].text == "Scheduled."


def test_middleware_validation_and_names() -> None:
    with pytest.raises(ValueError, match="max_nudges must be >= 0"):
        HesitationMiddleware(max_nudges=-1)
    assert HesitationMiddleware(name="h2").name == "h2"
    assert HesitationMiddleware().name == "HesitationMiddleware"


def test_the_radar_reads_the_users_request() -> None:
    """The same draft-and-confirm message is a stall after "remind me", and what the user
    asked for after "let me review it before you schedule it"."""
    draft = (
        "Here's the reminder:\n- title: PR 482 follow-up\n- message: verify approvals, merge\n"
        "- schedule_time: +30m\n\nShall I schedule it?"
    )
    review = "Draft a reminder about PR 482, but let me review it before you schedule it."
    runs: list[dict[str, Any]] = []
    model, agent = bound_agent([say(draft)], runs)
    config = {"configurable": {"thread_id": "r1"}}
    events = stream(agent, {"messages": [HumanMessage(review)]}, config)
    assert events == [] and len(model.recorded) == 1
    assert agent.get_state(config).values["messages"][-1].text == draft

    model, agent = bound_agent(
        [say(draft), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")], runs
    )
    config = {"configurable": {"thread_id": "r2"}}
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config)
    assert [e["action"] for e in events] == ["nudge"] and len(runs) == 1
