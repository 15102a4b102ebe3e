"""Earlier turns reach the model as a digest in front of the new question; the state keeps them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from attention_scoping.errors import AttentionScopingError
from attention_scoping.graph import make_model_node
from attention_scoping.history import TurnDigestMiddleware, digest_request_messages
from attention_scoping.history.digest import DIGEST_HEADER, NOW_HEADER
from attention_scoping.middleware import AttentionScopingMiddleware, Disclosed, Rewrite
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import Ledger

NOTE = HumanMessage("[Runtime note] call add", additional_kwargs={"synthetic": True})


def _thread() -> list[AnyMessage]:
    return [
        SystemMessage("be brief"),
        HumanMessage("add 2 and 3", id="u1"),
        NOTE,
        AIMessage("", tool_calls=[tool_call("add", {"a": 2, "b": 3}, "c1")]),
        ToolMessage("5", tool_call_id="c1"),
        AIMessage("2 + 3 = 5."),
        HumanMessage("now shout it", id="u2"),
        NOTE,
    ]


def test_the_first_turn_is_sent_as_it_is() -> None:
    messages: list[AnyMessage] = [HumanMessage("add 2 and 3"), NOTE]
    assert digest_request_messages(messages) is messages


def test_earlier_turns_fold_into_the_new_question() -> None:
    folded = digest_request_messages(_thread())
    assert [type(m).__name__ for m in folded] == ["SystemMessage", "HumanMessage", "HumanMessage"]
    question = folded[1]
    assert question.id == "u2"
    assert question.content == "\n".join(
        [
            DIGEST_HEADER,
            "User: add 2 and 3",
            "You answered: 2 + 3 = 5.",
            "",
            NOW_HEADER,
            "now shout it",
        ]
    )
    assert folded[2] is NOTE  # the current turn's notes stay after the question


def test_the_current_turn_keeps_its_calls_and_results() -> None:
    thread = [
        *_thread(),
        AIMessage("", tool_calls=[tool_call("shout", {"text": "5"}, "c2")]),
        ToolMessage("5!", tool_call_id="c2"),
    ]
    folded = digest_request_messages(thread)
    assert [type(m).__name__ for m in folded[2:]] == ["HumanMessage", "AIMessage", "ToolMessage"]


def test_a_long_answer_is_clipped() -> None:
    thread = _thread()
    thread[5] = AIMessage("x" * 5_000)
    text = str(digest_request_messages(thread, limit=100)[1].content)
    answer = next(line for line in text.splitlines() if line.startswith("You answered: "))
    assert len(answer) <= len("You answered: ") + 100


def test_an_image_block_stays_with_the_question() -> None:
    thread = _thread()
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    thread[6] = HumanMessage([{"type": "text", "text": "now shout it"}, image], id="u2")
    content: Any = digest_request_messages(thread)[1].content
    assert content[1] == image and content[0]["text"].endswith("now shout it")


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars must be >= 1"):
        TurnDigestMiddleware(max_chars=0)
    with pytest.raises(AttentionScopingError, match="max_chars must be >= 1"):
        TurnDigestMiddleware(max_chars=-5)


def test_the_model_sees_the_digest_and_the_state_keeps_every_message(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("add", {"a": 2, "b": 3})),
            say("5"),
            calls(tool_call("shout", {"text": "five"})),
            say("FIVE"),
        ]
    )
    agent: Any = create_agent(
        model,
        tools=[toolbox["add"], toolbox["shout"]],
        middleware=[TurnDigestMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [("user", "add 2 and 3")]}, config)
    out = agent.invoke({"messages": [("user", "shout five")]}, config)
    assert ledger.names() == ["add", "shout"]
    second_turn = model.recorded[2]["messages"]
    assert [type(m).__name__ for m in second_turn] == ["HumanMessage"]
    assert str(second_turn[0].content).endswith(f"{NOW_HEADER}\nshout five")
    assert "You answered: 5" in str(second_turn[0].content)
    assert len(out["messages"]) == 8  # two turns of user, call, result, answer


def test_a_hand_built_model_node_sends_the_digest() -> None:
    model = ScriptedChatModel(script=[say("FIVE")])
    node = make_model_node(model, middleware=[TurnDigestMiddleware()], state_schema=MessagesState)
    graph = StateGraph(MessagesState)
    graph.add_node("model", node)
    graph.add_edge(START, "model")
    graph.add_edge("model", END)
    out = graph.compile().invoke({"messages": _thread()[1:]})
    sent = model.recorded[0]["messages"]
    assert str(sent[0].content).startswith(DIGEST_HEADER)
    assert out["messages"][-1].content == "FIVE"
    assert out["messages"][0].content == "add 2 and 3"  # the state keeps the message as it was


def test_history_mode_reads_native_disclosures_from_tools_and_history() -> None:
    from attention_scoping.disclosure.in_history import history_mode

    plain: list[Any] = [{"type": "function", "function": {"name": "add"}}]
    assert history_mode(plain, _thread()) is None
    assert history_mode([{"name": "add", "defer_loading": True}], []) == "anthropic"
    assert history_mode([{"type": "namespace", "name": "math", "tools": []}], []) == "openai"
    loaded = ToolMessage(
        [{"type": "tool_reference", "tool_name": "add"}], tool_call_id="c9", name="load_context"
    )
    assert history_mode(plain, [*_thread(), loaded]) == "anthropic"


class Deferring:
    """A disclosure (the core's protocol) that also sends the other scoped tools deferred, as
    Anthropic's native mode does: more tools sent than callable, never more callable."""

    def disclose(self, request: ModelRequest[Any], shown: Any) -> Disclosed:
        sent = Rewrite().disclose(request, shown).request
        names = {t.name for t in sent.tools if not isinstance(t, dict)}
        deferred = [
            {"name": t.name, "defer_loading": True}
            for t in request.tools
            if not isinstance(t, dict) and t.name not in names
        ]
        return Disclosed(sent.override(tools=[*sent.tools, *deferred]), "deferring")


def test_the_digest_refuses_a_native_disclosure_mode_before_the_model_runs(
    toolbox: dict[str, BaseTool], ledger: Ledger
) -> None:
    """The digest drops earlier tool results, where the native modes disclose tools: the first
    model call stops with an error naming the mode, and no request reaches the model."""
    scopes = [Scope("math", "integer arithmetic", tools=[toolbox["add"], toolbox["multiply"]])]
    model = ScriptedChatModel(script=[say("hi")])
    middleware = [
        AttentionScopingMiddleware(scopes, disclosure=Deferring()),
        TurnDigestMiddleware(),
    ]
    agent = create_agent(
        model, tools=list(toolbox.values()), middleware=middleware, checkpointer=InMemorySaver()
    )
    with pytest.raises(AttentionScopingError, match="disclosure='anthropic'"):
        agent.invoke(
            {"messages": [HumanMessage("add 2 and 3")]}, {"configurable": {"thread_id": "d"}}
        )
    assert model.recorded == [] and ledger.names() == []
