"""`RepeatedCallMiddleware`: a call that repeats one already answered in the turn does not run
again; the model gets the earlier result and the advice to answer from it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from attention_scoping import RepeatedCallMiddleware
from attention_scoping.core.errors import NOT_RUN_ERRORS, ErrorCode
from attention_scoping.graph import make_model_node, make_tool_node
from attention_scoping.hesitation.repeats import Repeat, find_repeat, repeat_payload
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

runs: list[str] = []


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    runs.append(expression)
    if expression == "boom":
        raise ToolException("cannot evaluate")
    return "1036"


calculate.handle_tool_error = True  # a failure comes back as an error ToolMessage


@tool
def job_status(job: str) -> str:
    """Status of a background job."""
    runs.append(f"status {job}")
    return "running"


def _agent(script: list[AIMessage], **options: Any) -> tuple[Any, ScriptedChatModel]:
    runs.clear()
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model,
        tools=[calculate, job_status],
        middleware=[RepeatedCallMiddleware(**options)],
        checkpointer=InMemorySaver(),
    )
    return agent, model


def _ask(agent: Any, text: str, thread: str = "t") -> list[Any]:
    out = agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
    messages: list[Any] = out["messages"]
    return messages


def _tool_results(messages: list[Any]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def _body(message: ToolMessage) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(str(message.content))
    return body


SAME = {"expression": "sqrt(144) + 2**10"}


def test_a_repeated_call_gets_the_earlier_result_without_running() -> None:
    script = [
        calls(tool_call("calculate", SAME)),
        calls(tool_call("calculate", SAME)),
        say("1036"),
    ]
    agent, model = _agent(script)
    messages = _ask(agent, "sqrt(144) + 2^10?")
    assert runs == [SAME["expression"]]  # the tool ran once
    first, second = _tool_results(messages)
    assert first.content == "1036" and first.status == "success"
    assert second.status == "error"
    body = _body(second)
    assert body["error"] == ErrorCode.REPEATED_CALL
    assert body["result"] == "1036"
    assert "Answer the user from this result" in body["next_step"]
    # The model's third call saw the refusal, and the run went on to the answer.
    assert model.recorded[2]["messages"][-1].content == second.content
    assert messages[-1].content == "1036"


def test_other_arguments_or_another_tool_run() -> None:
    script = [
        calls(tool_call("calculate", SAME)),
        calls(tool_call("calculate", {"expression": "2**10"})),
        calls(tool_call("job_status", {"job": "sqrt(144) + 2**10"})),
        say("done"),
    ]
    agent, _ = _agent(script)
    messages = _ask(agent, "go")
    assert runs == [SAME["expression"], "2**10", "status sqrt(144) + 2**10"]
    assert all(m.status == "success" for m in _tool_results(messages))


def test_a_failed_call_may_be_retried_with_the_same_arguments() -> None:
    boom = {"expression": "boom"}
    script = [calls(tool_call("calculate", boom)), calls(tool_call("calculate", boom)), say("x")]
    agent, _ = _agent(script)
    agent_messages = _ask(agent, "go")
    assert runs == ["boom", "boom"]
    assert [m.status for m in _tool_results(agent_messages)] == ["error", "error"]
    assert all(ErrorCode.REPEATED_CALL not in str(m.content) for m in _tool_results(agent_messages))


def test_a_new_user_turn_starts_afresh() -> None:
    script = [
        calls(tool_call("calculate", SAME)),
        say("1036"),
        calls(tool_call("calculate", SAME)),
        say("still 1036"),
    ]
    agent, _ = _agent(script)
    _ask(agent, "first")
    messages = _ask(agent, "compute it again, please")
    assert runs == [SAME["expression"], SAME["expression"]]
    assert [m.status for m in _tool_results(messages)] == ["success", "success"]


def test_allowed_tools_repeat() -> None:
    poll = {"job": "42"}
    script = [
        calls(tool_call("job_status", poll)),
        calls(tool_call("job_status", poll)),
        say("running"),
    ]
    agent, _ = _agent(script, allow_repeat={"job_status"})
    _ask(agent, "is job 42 done?")
    assert runs == ["status 42", "status 42"]


def test_two_identical_calls_in_one_reply_run_once() -> None:
    script = [calls(tool_call("calculate", SAME), tool_call("calculate", SAME)), say("1036")]
    agent, _ = _agent(script)
    messages = _ask(agent, "go")
    assert runs == [SAME["expression"]]
    statuses = sorted(m.status for m in _tool_results(messages))
    assert statuses == ["error", "success"]
    refused = next(m for m in _tool_results(messages) if m.status == "error")
    assert "only the first call runs" in _body(refused)["message"]


def test_async_runs_refuse_the_same_way() -> None:
    script = [calls(tool_call("calculate", SAME)), calls(tool_call("calculate", SAME)), say("ok")]
    agent, _ = _agent(script)
    out = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "a"}})
    )
    assert runs == [SAME["expression"]]
    assert [m.status for m in _tool_results(out["messages"])] == ["success", "error"]


def test_a_hand_built_graph_refuses_the_repeat_in_its_tool_node() -> None:
    runs.clear()
    model = ScriptedChatModel(
        script=[calls(tool_call("calculate", SAME)), calls(tool_call("calculate", SAME)), say("ok")]
    )
    guard = RepeatedCallMiddleware()
    graph = StateGraph(MessagesState)
    graph.add_node("model", make_model_node(model, [calculate], middleware=[guard]))
    graph.add_node("tools", make_tool_node([calculate], middleware=[guard]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    assert [SAME["expression"]] == runs
    assert [m.status for m in _tool_results(out["messages"])] == ["success", "error"]


def test_the_earlier_result_is_cut_at_the_limit() -> None:
    earlier = ToolMessage("x" * 50, tool_call_id="c1", name="calculate")
    payload = repeat_payload(tool_call("calculate", SAME), Repeat("answered", earlier), limit=10)
    assert payload["result"] == "x" * 10 + "[... cut: 40 more characters]"


def test_find_repeat_takes_the_latest_good_result_of_the_turn() -> None:
    again = tool_call("calculate", SAME, id="c3")
    messages = [
        HumanMessage("go"),
        calls(tool_call("calculate", SAME, id="c1")),
        ToolMessage("1036", tool_call_id="c1", name="calculate"),
        calls(tool_call("calculate", SAME, id="c2")),
        ToolMessage("1036 (checked)", tool_call_id="c2", name="calculate"),
        calls(again),
    ]
    repeat = find_repeat(messages, again)
    assert repeat is not None and repeat.result is not None
    assert repeat.result.content == "1036 (checked)"
    # The same call as the turn's first one is new.
    assert find_repeat(messages[:2], tool_call("calculate", SAME, id="c1")) is None


def test_the_refusal_counts_as_nothing_run() -> None:
    assert ErrorCode.REPEATED_CALL in NOT_RUN_ERRORS


def test_result_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="result_chars"):
        RepeatedCallMiddleware(result_chars=0)
