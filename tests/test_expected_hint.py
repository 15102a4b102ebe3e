"""The expected tools' hint: before the turn's first reply, a runtime note names the tools the
user's message matched, so a model that would answer from memory calls one on its first reply
(issue: scoping that works with any model)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping.common.messages import hit_output_limit
from attention_scoping.hesitation.middleware import is_nudge
from attention_scoping.hesitation.options import Nudging
from attention_scoping.hesitation.pending import Pending, hint_text
from attention_scoping.messages import is_user_turn
from attention_scoping.scopes import Scope
from attention_scoping.testing import calls, say, tool_call
from tests.conftest import Ledger
from tests.hesitation_support import BOTH, MATH, Form, draft_then_tool, scoped_agent, sent

CONFIG = {"configurable": {"thread_id": "t"}}


def hints(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if "Tools that match the user's request" in m.text]


@BOTH
def test_the_first_call_of_a_turn_names_the_matched_tools(
    scopes: list[Scope], ledger: Ledger, form: Form
) -> None:
    agent, model = scoped_agent(
        scopes, [calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")], form
    )
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert ledger.names() == ["multiply"] and len(model.recorded) == 2
    first = sent(model, 0)
    note = first[-1]
    assert first[-2].text == MATH  # the user's message, then the note
    assert is_nudge(note) and not is_user_turn(note)
    assert note.text.startswith("[Runtime note, automatic: not written by the user")
    assert "Tools that match the user's request: `multiply`" in note.text
    assert "If one of them answers it, call that one now" in note.text
    assert hints(sent(model, 1)) == []  # after the tool ran: no hint
    state = agent.get_state(CONFIG).values
    assert hints(state["messages"]) == []  # never part of the state
    assert [m.text for m in state["messages"] if isinstance(m, HumanMessage)] == [MATH]


@BOTH
def test_a_reply_that_skips_the_hinted_tool_is_still_nudged_once(
    scopes: list[Scope], ledger: Ledger, form: Form
) -> None:
    agent, model = draft_then_tool(scopes, form, "3821")
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert ledger.names() == ["multiply"]
    retry = sent(model, 1)
    # in the call, the hint stays in the retry and is not repeated; the node form rebuilds the
    # request from the state, which never held it
    assert len(hints(retry)) == (1 if form == "in_call" else 0)
    assert "answered without calling a tool" in retry[-1].text


def test_hint_expected_false_sends_the_users_message_last(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(
        scopes, [calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")], grounding="check"
    )
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert sent(model, 0)[-1].text == MATH
    assert "multiply" in agent.get_state(CONFIG).values["scope_selection"]["reads"]


def test_no_hint_without_a_match_or_for_a_question_about_tools(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("Hi!"), say("It takes a and b.")])
    agent.invoke({"messages": [HumanMessage("hello there")]}, CONFIG)
    assert agent.get_state(CONFIG).values["scope_selection"]["reason"] == "no_match"
    assert sent(model, 0)[-1].text == "hello there"
    question = "what arguments does the multiply tool take?"
    agent.invoke({"messages": [HumanMessage(question)]}, CONFIG)
    assert "multiply" in agent.get_state(CONFIG).values["scope_selection"]["reads"]
    assert sent(model, 1)[-1].text == question


def test_each_user_turn_gets_its_own_hint(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(
        scopes,
        [
            calls(tool_call("multiply", {"a": 47, "b": 83})),
            say("3901"),
            calls(tool_call("shout", {"text": "hello"})),
            say("HELLO"),
        ],
    )
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    agent.invoke({"messages": [HumanMessage("shout hello (string transformations)")]}, CONFIG)
    second_turn = sent(model, 2)
    (note,) = hints(second_turn)  # the first turn's hint is not in the history
    assert note is second_turn[-1] and "`shout`" in note.text and "multiply" not in note.text


@pytest.fixture
def mailer(ledger: Ledger) -> BaseTool:
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        ledger.ran.append(("send_email", {"to": to, "body": body}))
        return "sent"

    send_email.metadata = {"risk": "write"}
    return send_email


@pytest.mark.parametrize("marked", [True, False])
def test_a_write_tool_is_never_hinted(mailer: BaseTool, marked: bool) -> None:
    """Code names only declared reads (`attention_scoping.risk`): the selector chooses the mail
    scope, but neither its matched reads nor the hint name `send_email`, whether it is marked
    a write or nobody classified it; the model opens it by loading the scope itself."""
    if not marked:
        mailer.metadata = None
    scopes = [Scope("mail", "send email messages", tools=[mailer])]
    agent, model = scoped_agent(scopes, [say("Done."), say("Done.")], declare_reads=False)
    agent.invoke({"messages": [HumanMessage("send an email message to bob")]}, CONFIG)
    state = agent.get_state(CONFIG).values
    assert state["active_context"] == "mail" and state["scope_selection"]["reads"] == []
    assert model.recorded[0]["tools"] == ["load_context"]
    assert hints(sent(model, 0)) == [] and len(model.recorded) == 1  # no hint, no nudge
    assert state["messages"][-1].text == "Done."


def test_the_system_role_sends_the_hint_as_a_system_message(scopes: list[Scope]) -> None:
    nudging = Nudging(role="system")
    agent, model = scoped_agent(scopes, [say("3901"), say("3901")], nudging=nudging)
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert sent(model, 0)[-1].type == "system" and hints(sent(model, 0))


def test_hint_text_names_three_tools_best_first_and_the_gateway_form() -> None:
    def pending(name: str, via: Literal["gateway", "bound"] = "bound") -> Pending:
        executor = "execute_tool" if via == "gateway" else None
        schema = {"name": name, "parameters": {}}
        return Pending(name=name, via=via, schema=schema, executor=executor)

    text = hint_text([pending("a"), pending("b"), pending("c"), pending("d")])
    assert "Tools that match the user's request: `a`, `b`, `c`." in text and "`d`" not in text
    assert "otherwise answer without a tool" in text
    gateway = hint_text([pending("send", "gateway")])
    assert "call it now through `execute_tool`" in gateway


@BOTH
def test_a_reply_cut_at_the_output_limit_is_shown_again_only_in_part(
    scopes: list[Scope], ledger: Ledger, form: Form
) -> None:
    runaway = "- Clear, 18 °C, humidity 60 %\n" * 40
    cut = AIMessage(content=runaway, response_metadata={"finish_reason": "length"})
    agent, model = scoped_agent(
        scopes, [cut, calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")], form
    )
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert ledger.names() == ["multiply"]
    retry = "\n".join(m.text for m in sent(model, 1))
    assert "[... cut: this reply reached the output limit]" in retry
    assert retry.count("humidity 60 %") < 20 < runaway.count("humidity 60 %")


def test_a_reply_that_ended_normally_is_shown_again_whole(scopes: list[Scope]) -> None:
    answer = "47 times 83 is 3821. " * 30
    agent, model = scoped_agent(scopes, [say(answer), say("3821")])
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    assert sent(model, 1)[-2].text == answer


@pytest.mark.parametrize(
    ("metadata", "cut"),
    [
        ({"finish_reason": "length"}, True),  # OpenAI, llama.cpp
        ({"stop_reason": "max_tokens"}, True),  # Anthropic
        ({"finish_reason": "MAX_TOKENS"}, True),  # Gemini
        ({"finish_reason": "stop"}, False),
        ({"stop_reason": "end_turn"}, False),
        ({}, False),
    ],
)
def test_hit_output_limit_reads_each_providers_finish_reason(
    metadata: dict[str, Any], cut: bool
) -> None:
    assert hit_output_limit(AIMessage(content="x", response_metadata=metadata)) is cut


def test_a_question_about_the_conversation_gets_no_hint_and_a_new_value_does(
    scopes: list[Scope],
) -> None:
    """A follow-up that refers back and brings nothing new is answered from the conversation:
    no hint. The same wording with a number the conversation has not seen is a new request."""
    script = [
        calls(tool_call("multiply", {"a": 47, "b": 83})),
        say("3901"),
        say("You asked me to multiply 47 and 83."),
        calls(tool_call("multiply", {"a": 47, "b": 9})),
        say("423"),
    ]
    agent, model = scoped_agent(scopes, script)
    agent.invoke({"messages": [HumanMessage(MATH)]}, CONFIG)
    recall = "Which numbers did I ask you to multiply (integer arithmetic)?"
    agent.invoke({"messages": [HumanMessage(recall)]}, CONFIG)
    assert sent(model, 2)[-1].text == recall and hints(sent(model, 2)) == []
    again = "Multiply 47 by 9 again, please (integer arithmetic)."
    agent.invoke({"messages": [HumanMessage(again)]}, CONFIG)
    (note,) = hints(sent(model, 3))
    assert "`multiply`" in note.text
