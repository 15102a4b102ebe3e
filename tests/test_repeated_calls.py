"""`RepeatedCallMiddleware`: a call that repeats one already answered in the turn does not run
again; the model gets the earlier result and a note to answer from it. A read is forgotten after a
write, and any call of a tool nobody declared a read counts as a write (issue 38: fail closed);
calls are located by position, so ids a server reuses (`call_0`) do not mislead it."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from attention_scoping.errors import NOT_RUN_ERRORS, AttentionScopingError, ErrorCode
from attention_scoping.graph import make_model_node, make_tool_node
from attention_scoping.hesitation.repeats import (
    REPEAT_MARK,
    Repeat,
    RepeatedCallMiddleware,
    find_repeat,
    repeat_answer,
    repeat_payload,
)
from attention_scoping.scopes import LOAD_CONTEXT, Scope, ScopeCatalog
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import make_scheduled_jobs, other_tools

runs: list[str] = []


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    runs.append(expression)
    if expression == "boom":
        raise ToolException("cannot evaluate")
    return "1036"


calculate.handle_tool_error = True  # a failure comes back as an error ToolMessage
calculate.metadata = {"risk": "read"}


@tool
def job_status(job: str) -> str:
    """Status of a background job."""
    runs.append(f"status {job}")
    return "running"


job_status.metadata = {"risk": "read"}


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


def _ran(call: dict[str, Any], result: str) -> list[BaseMessage]:
    """A reply making `call` and the tool's `result` for it, as a history holds them."""
    return [calls(call), ToolMessage(result, tool_call_id=call["id"], name=call["name"])]


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
    # The earlier result as the content, a one-line note after it, not an error: a small model
    # answers from a result (after an error body, a 1.5B model replied with nothing).
    assert second.status == "success" and second.response_metadata[REPEAT_MARK] is True
    content = str(second.content)
    assert content.startswith("1036\n\n(Note: `calculate` already ran")
    assert "Answer the user with it now" in content
    # The model's third call saw the answer, and the run went on to the answer.
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
    results = _tool_results(out["messages"])
    assert [m.status for m in results] == ["success", "success"]
    assert results[1].response_metadata.get(REPEAT_MARK) is True


def test_a_hand_built_graph_refuses_the_repeat_in_its_tool_node() -> None:
    runs.clear()
    model = ScriptedChatModel(
        script=[calls(tool_call("calculate", SAME)), calls(tool_call("calculate", SAME)), say("ok")]
    )
    guard = RepeatedCallMiddleware()
    graph = StateGraph(MessagesState)
    node = make_model_node(model, [calculate], middleware=[guard], state_schema=MessagesState)
    graph.add_node("model", node)
    graph.add_node(
        "tools", make_tool_node([calculate], middleware=[guard], state_schema=MessagesState)
    )
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    assert [SAME["expression"]] == runs
    results = _tool_results(out["messages"])
    assert [m.status for m in results] == ["success", "success"]
    assert str(results[1].content).startswith("1036\n\n(Note:")


def test_the_earlier_result_is_cut_at_the_limit() -> None:
    earlier = ToolMessage("x" * 50, tool_call_id="c1", name="calculate")
    payload = repeat_payload(tool_call("calculate", SAME), Repeat("answered", earlier), limit=10)
    assert payload["result"] == "x" * 10 + "\n[... cut: 50 characters, showing the first 10]"


def test_find_repeat_takes_the_latest_good_result_of_the_turn() -> None:
    again = tool_call("calculate", SAME, id="c3")
    messages = [
        HumanMessage("go"),
        *_ran(tool_call("calculate", SAME, id="c1"), "1036"),
        *_ran(tool_call("calculate", SAME, id="c2"), "1036 (checked)"),
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
    with pytest.raises(AttentionScopingError, match="result_chars"):
        RepeatedCallMiddleware(result_chars=-1)
    with pytest.raises(TypeError, match="reads must be"):
        RepeatedCallMiddleware(reads="read_file")  # one name, not a collection


# -- writes in between, ids servers reuse ---------------------------------------------------

files: dict[str, str] = {}


@tool
def read_file(path: str) -> str:
    """Read a text file."""
    runs.append(f"read {path}")
    return files.get(path, "")


read_file.metadata = {"risk": "read"}


@tool
def write_file(path: str, text: str) -> str:
    """Write a text file."""
    runs.append(f"write {path}")
    files[path] = text
    return "written"


MARKED = pytest.mark.parametrize("marked", [True, False], ids=["write_marked", "unmarked"])
"""`write_file` declared a write, or nobody classified it (so it may write): the same."""


def _file_agent(script: list[AIMessage], marked: bool = True) -> tuple[Any, ScriptedChatModel]:
    runs.clear()
    files.clear()
    files["notes.txt"] = "teh cat"
    write_file.metadata = {"risk": "write"} if marked else None
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model,
        tools=[read_file, write_file, calculate],
        middleware=[RepeatedCallMiddleware()],
        checkpointer=InMemorySaver(),
    )
    return agent, model


READ = {"path": "notes.txt"}


@MARKED
def test_a_read_after_a_write_runs_again(marked: bool) -> None:
    """Read the file, fix the typo, read it again to check: the second read sees the fix, whether
    or not someone marked the write tool (issue 38, case 1)."""
    script = [
        calls(tool_call("read_file", READ)),
        calls(tool_call("write_file", {"path": "notes.txt", "text": "the cat"})),
        calls(tool_call("read_file", READ)),
        say("Fixed: it now reads 'the cat'."),
    ]
    agent, _ = _file_agent(script, marked)
    messages = _ask(agent, "read notes.txt, fix the typo, read it again to check")
    assert runs == ["read notes.txt", "write notes.txt", "read notes.txt"]
    first, _, again = _tool_results(messages)
    assert (first.content, again.content) == ("teh cat", "the cat")
    assert REPEAT_MARK not in again.response_metadata


def test_a_read_repeated_with_no_write_in_between_is_still_answered() -> None:
    script = [
        calls(tool_call("read_file", READ)),
        calls(tool_call("calculate", SAME)),  # another read between: nothing changed
        calls(tool_call("read_file", READ)),
        say("teh cat"),
    ]
    agent, _ = _file_agent(script)
    messages = _ask(agent, "read it")
    assert runs == ["read notes.txt", SAME["expression"]]
    assert _tool_results(messages)[-1].response_metadata[REPEAT_MARK] is True


def _reusing_ids(*names_args: tuple[str, dict[str, Any]]) -> list[AIMessage]:
    """Replies of a server that numbers calls per reply: every first call is `call_0`."""
    return [calls(tool_call(name, args, id="call_0")) for name, args in names_args]


@MARKED
def test_a_repeated_write_never_runs_again_when_ids_are_reused(marked: bool) -> None:
    """Used alone, with `call_0` in every reply: the repeated write is answered from its first
    result, and a read after the write runs (the ids do not match the wrong reply)."""
    write = {"path": "notes.txt", "text": "the cat"}
    script = [
        *_reusing_ids(("read_file", READ), ("write_file", write), ("write_file", write)),
        *_reusing_ids(("read_file", READ)),
        say("done"),
    ]
    agent, _ = _file_agent(script, marked)
    messages = _ask(agent, "fix the typo in notes.txt")
    assert runs == ["read notes.txt", "write notes.txt", "read notes.txt"]
    results = _tool_results(messages)
    assert results[2].response_metadata[REPEAT_MARK] is True  # the second write
    assert results[3].content == "the cat"


def test_find_repeat_reads_results_by_position_not_by_id() -> None:
    """Two replies both numbered `call_0`: each result belongs to the reply before it."""
    first = tool_call("calculate", {"expression": "1+1"}, id="call_0")
    second = tool_call("calculate", SAME, id="call_0")
    again = tool_call("calculate", {"expression": "1+1"}, id="call_0")
    messages = [HumanMessage("go"), *_ran(first, "2"), *_ran(second, "1036"), calls(again)]
    repeat = find_repeat(messages, again)
    assert repeat is not None and repeat.result is not None and repeat.result.content == "2"
    # A repeat of the second call finds its own result, not the first reply's.
    late = tool_call("calculate", SAME, id="call_0")
    found = find_repeat([*messages[:-1], calls(late)], late)
    assert found is not None and found.result is not None and found.result.content == "1036"


def test_find_repeat_forgets_reads_after_a_write_but_never_a_write() -> None:
    read = tool_call("read_file", READ, id="r1")
    write = tool_call("write_file", {"path": "p", "text": "t"}, id="w1")
    messages = [HumanMessage("go"), *_ran(read, "teh cat"), *_ran(write, "written")]

    def is_write(call: Any) -> bool:
        return bool(call["name"] == "write_file")

    read_again = tool_call("read_file", READ, id="r2")
    assert find_repeat([*messages, calls(read_again)], read_again, is_write) is None
    # Without knowing which calls write, the read is answered from before.
    assert find_repeat([*messages, calls(read_again)], read_again) is not None
    write_again = tool_call("write_file", {"path": "p", "text": "t"}, id="w2")
    late = [*messages, *_ran(read, "the cat")]
    repeat = find_repeat([*late, calls(write_again)], write_again, is_write)
    assert repeat is not None and repeat.result is not None and repeat.result.content == "written"


def test_a_refused_write_does_not_make_reads_stale() -> None:
    read = tool_call("read_file", READ, id="r1")
    write = tool_call("write_file", {"path": "p", "text": "t"}, id="w1")
    refused = json.dumps({"error": ErrorCode.TOOL_NOT_IN_CONTEXT, "message": "no"})
    read_again = tool_call("read_file", READ, id="r2")
    messages = [
        HumanMessage("go"),
        *_ran(read, "teh cat"),
        calls(write),
        ToolMessage(refused, tool_call_id="w1", name="write_file", status="error"),
        calls(read_again),
    ]
    assert find_repeat(messages, read_again, lambda c: c["name"] == "write_file") is not None


def test_a_second_identical_call_in_one_reply_gets_the_structured_error() -> None:
    call = tool_call("calculate", SAME, id="b")
    answer = repeat_answer(call, Repeat("same_step"))
    assert answer.status == "error" and _body(answer)["error"] == ErrorCode.REPEATED_CALL


@MARKED
def test_an_unknown_or_unclassified_tool_counts_as_a_write(marked: bool) -> None:
    write_file.metadata = {"risk": "write"} if marked else None
    guard = RepeatedCallMiddleware()
    guard.learn([read_file, write_file])
    assert not guard.writes_call({"name": "read_file", "args": READ})
    assert guard.writes_call({"name": "write_file", "args": {}})
    assert guard.writes_call({"name": "never_seen", "args": {}})
    assert guard.writes_call({"name": LOAD_CONTEXT, "args": {"name": "files"}})
    # no executor named: the gateway's tool is judged by its own name (unknown: a write)
    assert guard.writes_call({"name": "execute_tool", "args": {"tool_name": "read_file"}})


def test_a_scopes_declared_reads_count_as_reads() -> None:
    """`reads=` takes the scoping catalog: `Scope(..., reads=[...])` declares a read whose
    metadata says nothing; a declared write stays a write whatever a scope says."""
    write_file.metadata = None
    files_scope = Scope("files", "text files", tools=[read_file, write_file], reads=["write_file"])
    read_file.metadata = None
    try:
        guard = RepeatedCallMiddleware(reads=ScopeCatalog([files_scope]))
        guard.learn([read_file, write_file])
        assert not guard.writes_call({"name": "write_file", "args": {}})  # the scope said so
        assert guard.writes_call({"name": "read_file", "args": READ})  # nobody did
        write_file.metadata = {"risk": "write"}
        guard.learn([write_file])
        assert guard.writes_call({"name": "write_file", "args": {}})
    finally:
        read_file.metadata = {"risk": "read"}


def test_a_gateways_catalog_tells_reads_from_writes() -> None:
    """Given the catalog's tools and the executor's name, a declared read through
    `execute_tool` is a read; a write, or a tool nobody classified, stays a write."""
    weather, invoice, jobs = other_tools()
    weather.metadata = {"risk": "read"}
    jobs.metadata = {}  # nobody classified it here
    guard = RepeatedCallMiddleware(
        tools=[weather, invoice, jobs, make_scheduled_jobs([])], execute_tool="execute_tool"
    )

    def through(name: str) -> dict[str, Any]:
        return {"name": "execute_tool", "args": {"tool_name": name, "arguments": {}}}

    assert not guard.writes_call(through("get_weather"))
    assert guard.writes_call(through("scheduled_jobs"))
    assert guard.writes_call(through("list_jobs"))  # unclassified: may write
    assert guard.writes_call(through("not_in_the_catalog"))
    assert guard.writes_call({"name": "execute_tool", "args": {}})


def test_load_context_is_never_answered_as_a_repeat() -> None:
    """The model loading a scope is what opens its writes (issue 38, case 3): a second
    `load_context` with the same name runs, whatever came before it in the turn."""
    guard = RepeatedCallMiddleware()
    load = tool_call(LOAD_CONTEXT, {"name": "billing"}, id="l1")
    again = tool_call(LOAD_CONTEXT, {"name": "billing"}, id="l2")
    messages = [HumanMessage("refund it"), *_ran(load, "ok"), calls(again)]
    assert find_repeat(messages, again, guard.writes_call) is not None  # what find_repeat sees

    request = SimpleNamespace(tool_call=again, tool=None, state={"messages": messages})
    assert guard.review_tool_call(request) is None  # type: ignore[arg-type]
