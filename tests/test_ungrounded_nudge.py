"""An answer given without the tool the user's message needs: hidden, nudged once toward the
declared reads the core selector matched, then the model's answer stands (issue: scoping that
works with any model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.common.text import names_in_text
from attention_scoping.hesitation.middleware import HesitationMiddleware, is_nudge
from attention_scoping.hesitation.options import Grounding, preselected_tools
from attention_scoping.hesitation.pending import Pending, ungrounded_text
from attention_scoping.messages import current_turn, is_user_turn
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import Selection
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import Ledger
from tests.hesitation_support import (
    BOTH,
    MATH,
    Form,
    draft_then_tool,
    reading,
    scoped_agent,
    sent,
)


def think_events(agent: Any, text: str, thread: str = "t") -> list[dict[str, Any]]:
    config = {"configurable": {"thread_id": thread}}
    events: list[dict[str, Any]] = []
    inputs = {"messages": [HumanMessage(text)]}
    for mode, chunk in agent.stream(inputs, config, stream_mode=["custom", "updates"]):
        if mode == "custom" and chunk.get("type") == "think":
            events.append(chunk)
    return events


def selection(agent: Any, thread: str = "t") -> dict[str, Any]:
    """The pre-selection record the thread's last turn left in state."""
    record: dict[str, Any] = agent.get_state({"configurable": {"thread_id": thread}}).values[
        "scope_selection"
    ]
    return record


def last_sent(model: ScriptedChatModel, call: int) -> BaseMessage:
    return sent(model, call)[-1]


@BOTH
def test_an_answer_without_the_preselected_tool_is_nudged_into_the_call(
    scopes: list[Scope], ledger: Ledger, form: Form
) -> None:
    agent, model = draft_then_tool(scopes, form, "47 times 83 is 3821.")
    events = think_events(agent, MATH)
    assert ledger.names() == ["multiply"]
    nudge = last_sent(model, 1)
    assert is_nudge(nudge) and not is_user_turn(nudge)
    assert (
        "multiply(a: int, b: int)" in nudge.text and "answered without calling a tool" in nudge.text
    )
    assert model.recorded[1]["tools"] == model.recorded[0]["tools"]  # the same scoped call
    (event,) = events
    assert event["reason"] == "ungrounded" and event["action"] == "nudge"
    assert event["content"] == "47 times 83 is 3821." and event["tools"][0] == "multiply"
    state = agent.get_state({"configurable": {"thread_id": "t"}}).values
    shown = [m.text for m in state["messages"] if isinstance(m, AIMessage) and not m.tool_calls]
    assert shown == ["3901"]  # the wrong draft never reaches the user's history


@BOTH
def test_the_second_plain_answer_stands(scopes: list[Scope], form: Form) -> None:
    agent, model = scoped_agent(scopes, [say("It is 3901."), say("3901, no tool needed.")], form)
    events = think_events(agent, MATH)
    assert len(model.recorded) == 2 and len(events) == 1
    state = agent.get_state({"configurable": {"thread_id": "t"}}).values
    assert state["messages"][-1].text == "3901, no tool needed."


class CloseCall:
    """A selector that finds the message as close to `text` as to `math`, matching `shout` and
    `multiply` (declared reads of two scopes)."""

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        return Selection(None, "close_call", {"text": 0.6, "math": 0.58}, ("shout", "multiply"))


def test_a_close_call_names_nothing_and_the_plain_answer_stands(
    scopes: list[Scope], ledger: Ledger
) -> None:
    model = ScriptedChatModel(script=[say("HELLO 6"), say("unused")])
    scoping = AttentionScopingMiddleware(reading(scopes), selector=CloseCall())
    middleware: list[Any] = [scoping, HesitationMiddleware(reads=scoping.catalog)]
    tools = [t for s in scopes for t in s.tool_objects]
    agent = create_agent(model, tools=tools, middleware=middleware)
    result = agent.invoke({"messages": [HumanMessage("shout hello and multiply 2 by 3")]})
    assert result["scope_selection"]["reason"] == "close_call"
    assert sorted(model.recorded[0]["tools"]) == ["load_context", "multiply", "shout"]
    assert last_sent(model, 0).text == "shout hello and multiply 2 by 3"  # no hint
    assert len(model.recorded) == 1 and ledger.names() == []  # no nudge
    assert result["messages"][-1].text == "HELLO 6"


@BOTH
def test_a_reply_that_describes_the_call_is_nudged_again(
    scopes: list[Scope], ledger: Ledger, form: Form
) -> None:
    described = say("You can use the `multiply` tool with a=47 and b=83.")
    agent, model = scoped_agent(
        scopes,
        [say("3821"), described, calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")],
        form,
    )
    events = think_events(agent, MATH)
    assert [e["round"] for e in events] == [1, 2] and ledger.names() == ["multiply"]
    assert "names multiply but calls no tool" in events[1]["reasons"][0]
    second = last_sent(model, 2).text
    assert "Your last reply names `multiply` but calls no tool" in second


def test_a_claimed_call_that_never_ran_ends_with_an_honest_answer(scopes: list[Scope]) -> None:
    claim = say("I called `multiply` with 47 and 83. The result is 3901.")
    agent, model = scoped_agent(scopes, [claim, claim, claim])
    events = think_events(agent, MATH)
    assert [e["action"] for e in events] == ["nudge", "nudge", "give_up"]
    assert len(model.recorded) == 3  # bounded by max_nudges=2
    final = agent.get_state({"configurable": {"thread_id": "t"}}).values["messages"][-1].text
    assert final.startswith("Nothing was executed: I did not call multiply")


def test_names_in_text_matches_whole_identifiers() -> None:
    text = "Call `get_forecast` or GET_CURRENT_weather; get_forecasts is not a tool."
    names = ["get_current_weather", "get_forecast", "forecast", "summary"]
    assert names_in_text(text, names) == ["get_current_weather", "get_forecast"]
    assert names_in_text("", names) == [] and names_in_text(text, [""]) == []


def test_no_expectation_when_no_tool_matches(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("Hello!")])
    assert think_events(agent, "hello there") == []
    assert len(model.recorded) == 1


def test_a_text_answer_after_a_tool_ran_is_a_report(scopes: list[Scope], ledger: Ledger) -> None:
    agent, model = scoped_agent(
        scopes, [calls(tool_call("multiply", {"a": 47, "b": 83})), say("It is 3901.")]
    )
    assert think_events(agent, MATH) == []
    assert len(model.recorded) == 2 and ledger.names() == ["multiply"]


def test_a_selection_made_for_an_earlier_turn_expects_nothing(
    scopes: list[Scope], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[calls(tool_call("multiply", {"a": 2, "b": 3})), say("6"), say("You're welcome.")]
    )
    scoping = AttentionScopingMiddleware(reading(scopes))
    middleware: list[Any] = [scoping, HesitationMiddleware(reads=scoping.catalog)]
    tools = [t for s in scopes for t in s.tool_objects]
    agent = create_agent(model, tools=tools, middleware=middleware, checkpointer=InMemorySaver())
    think_events(agent, MATH)
    assert think_events(agent, "thanks a lot") == []  # the math selection was for turn one
    assert len(model.recorded) == 3


def test_expect_tool_call_none_turns_the_check_off(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("3901")], grounding="off")
    assert think_events(agent, MATH) == []
    assert len(model.recorded) == 1
    assert "multiply" in selection(agent)["reads"]  # there was an expectation to turn off


def needs_reverse(state: Any, messages: Sequence[BaseMessage]) -> list[str]:
    return ["reverse", "not_bound"] if "backwards" in messages[-1].text else []


def test_a_custom_expectation_works_without_scoping(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[say("olleh"), calls(tool_call("reverse", {"text": "hello"})), say("olleh")]
    )
    hesitation = HesitationMiddleware(
        grounding=Grounding(expect_tool_call=needs_reverse), reads=["reverse"]
    )
    agent = create_agent(model, tools=list(toolbox.values()), middleware=[hesitation])
    agent.invoke({"messages": [HumanMessage("write hello backwards")]})
    assert ledger.names() == ["reverse"]
    nudge = last_sent(model, 1).text
    assert "matches `reverse(text)`." in nudge and "not_bound" not in nudge


def test_a_custom_expectation_never_names_a_tool_nobody_declared_a_read(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    """Fail closed: `reverse` without its metadata (nobody declared it a read) may write; the
    expectation names it, yet neither the hint nor a nudge does."""
    toolbox["reverse"].metadata = {}
    model = ScriptedChatModel(script=[say("olleh"), say("unused")])
    hesitation = HesitationMiddleware(grounding=Grounding(expect_tool_call=needs_reverse))
    agent = create_agent(model, tools=list(toolbox.values()), middleware=[hesitation])
    result = agent.invoke({"messages": [HumanMessage("write hello backwards")]})
    assert len(model.recorded) == 1 and ledger.names() == []
    assert [m.text for m in sent(model, 0)] == ["write hello backwards"]  # no hint
    assert result["messages"][-1].text == "olleh"


def test_a_question_about_the_tools_is_not_nudged(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("multiply takes two integers a and b.")])
    assert think_events(agent, "what arguments does the multiply tool take?") == []
    assert len(model.recorded) == 1
    assert "multiply" in selection(agent)["reads"]  # matched, yet not nudged


def test_preselected_tools_reads_only_a_matching_record_of_this_turn() -> None:
    history = [HumanMessage("first", id="a"), AIMessage("ok"), HumanMessage("second", id="b")]
    turn = current_turn(history)[1]
    record = {"reason": "confident", "reads": ["multiply"], "turn": turn}
    assert preselected_tools({"scope_selection": record}, history) == ["multiply"]
    assert preselected_tools({"scope_selection": {**record, "turn": "0:a"}}, history) == []
    close = {**record, "reason": "close_call"}
    assert preselected_tools({"scope_selection": close}, history) == ["multiply"]
    assert preselected_tools({"scope_selection": {**record, "reason": "no_match"}}, history) == []
    assert preselected_tools({"scope_selection": {**record, "reads": "multiply"}}, history) == []
    assert preselected_tools({}, history) == []


def test_the_ungrounded_nudge_asks_for_one_call_and_names_two_alternatives() -> None:
    pending = [
        Pending(f"t{i}", "bound", {"name": f"t{i}", "parameters": {"required": ["q"]}})
        for i in range(5)
    ]
    text = ungrounded_text(pending)
    assert text.startswith("[Runtime note, automatic")
    assert "matches `t0(q)`; if `t1` or `t2` fits it better, call that one instead." in text
    assert "t3" not in text and "\n- " not in text  # no list of calls to make one by one
    assert "Make one tool call now" in text
    assert "give your answer again and call no tool" in text
    single = ungrounded_text(pending[:1], named=True)
    assert "names `t0` but calls no tool" in single and "matches `t0(q)`." in single
    assert "fits it better" not in single
    gateway = ungrounded_text(
        [Pending("refund", "gateway", {"name": "refund"}, executor="execute_tool")]
    )
    assert 'matches `execute_tool(tool_name="refund", arguments={...})`.' in gateway
    assert ungrounded_text([]).startswith("[Runtime note, automatic")  # nothing to name
