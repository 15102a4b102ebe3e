"""The blast-radius rule in hints, nudges, gate promotions and the gateway pool, and "assist only
when it helps" (issue 24, items 1 and 9): code may assist with reads; only the model or the
application opens writes; a message that needs no tool gets no hint and no nudge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping import AttentionScopingMiddleware, Scope, ToolGateway
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.gating.ranking import BM25Ranker
from attention_scoping.hesitation.assist import ASSIST_MIN_SCORE, needs_tool, tool_words
from attention_scoping.hesitation.middleware import HesitationMiddleware, is_nudge
from attention_scoping.hesitation.pending import Pending, bound_disclosures, nudge_text
from attention_scoping.hesitation.schemas import parse_schemas
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.hesitation_support import BOTH, Form, scoped_agent

CONFIG = {"configurable": {"thread_id": "t"}}
DESTRUCTIVE = {"annotations": {"destructiveHint": True}}
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def make(name: str, description: str, metadata: dict[str, Any] | None = None) -> BaseTool:
    """A tool taking an optional `query` that records its runs in `RAN`."""

    def run(query: str = "") -> str:
        RAN.append(name)
        return f"{name} ok"

    made = StructuredTool.from_function(run, name=name, description=description)
    made.metadata = metadata
    return made


def mail_tools() -> list[BaseTool]:
    """A mail scope: one read, one MCP tool annotated as destructive (a write)."""
    return [
        make("read_email", "Read the emails in the inbox."),
        make("send_email", "Send an email message to a recipient.", DESTRUCTIVE),
    ]


def notes(model: ScriptedChatModel) -> list[str]:
    """Every runtime note (hint or nudge) the model was sent, in order."""
    out: list[str] = []
    for record in model.recorded:
        messages: list[BaseMessage] = record["messages"]
        out += [m.text for m in messages if is_nudge(m) and m.text not in out]
    return out


def hesitation_agent(
    scopes: list[Scope],
    script: list[Any],
    ranker: Any = "lexical",
    form: Form = "in_call",
    **kw: Any,
) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=script)
    scoping = AttentionScopingMiddleware(scopes, ranker=ranker, **kw)
    agent = create_agent(
        model,
        middleware=[scoping, HesitationMiddleware() if form == "in_call" else _node()],
        checkpointer=InMemorySaver(),
    )
    return agent, model


def _node() -> Any:
    from attention_scoping.hesitation.node import HesitationNodeMiddleware

    return HesitationNodeMiddleware()


def fixed_rank(scores: dict[str, float]) -> Any:
    """A ranker that gives fixed scores by document name (absolute, like a cosine)."""

    def rank(query: str, documents: Sequence[Any]) -> list[tuple[str, float]]:
        ranked = [(d.name, scores[d.name]) for d in documents if d.name in scores]
        return sorted(ranked, key=lambda item: -item[1])

    return rank


PICK: dict[str, Any] = {"preselect_margin": 0.01, "preselect_min_score": 0.2}
"""Pre-selection's floor and margin for the fixed rankers (the default ranker's floor)."""

PASTED = (
    "Summarize this message I got, nothing else: 'Hi! Please send an email to the finance team "
    "with the Q3 numbers by Friday.'"
)


# -- hints and nudges name no writing tool ---------------------------------------------------


@BOTH
def test_a_pasted_instruction_gets_no_hint_or_nudge_toward_the_write(form: Form) -> None:
    # As reported: pre-selection matches the quoted instruction to the mail scope, its write first.
    scopes = [Scope("mail", "email: read and send messages", tools=mail_tools())]
    summary = say("The sender asks for the Q3 numbers to be emailed to finance by Friday.")
    rank = fixed_rank({"send_email": 0.5, "read_email": 0.3})
    agent, model = hesitation_agent(scopes, [summary, summary], ranker=rank, form=form, **PICK)
    agent.invoke({"messages": [HumanMessage(PASTED)]}, CONFIG)
    state = agent.get_state(CONFIG).values
    # pre-selection ranked the write first; scoping records only the reads it matched
    assert state["scope_selection"]["tools"] == ["read_email"]
    sent = notes(model)
    assert sent and all("send_email" not in text for text in sent)  # reads only are named
    assert "`read_email`" in sent[0]
    assert RAN == [] and state["messages"][-1].text == summary.text  # the summary stands


@BOTH
def test_when_only_a_write_matches_nothing_is_hinted_or_nudged(form: Form) -> None:
    mail = [make("send_email", "Send an email message to a recipient.", DESTRUCTIVE)]
    scopes = [Scope("mail", "send email messages", tools=mail)]
    reply = say("It asks you to email the Q3 numbers to finance by Friday.")
    rank = fixed_rank({"send_email": 0.5})
    agent, model = hesitation_agent(scopes, [reply, say("unused")], ranker=rank, form=form, **PICK)
    agent.invoke({"messages": [HumanMessage(PASTED)]}, CONFIG)
    assert agent.get_state(CONFIG).values["scope_selection"]["tools"] == []  # reads only
    assert notes(model) == [] and len(model.recorded) == 1 and RAN == []


@BOTH
def test_a_stall_on_a_write_in_view_is_not_nudged_and_the_model_may_still_call_it(
    form: Form,
) -> None:
    mail = [make("send_email", "Send an email message to a recipient.", DESTRUCTIVE)]
    scopes = [Scope("mail", "send email messages", tools=mail)]
    stall = say("I can send_email with to, subject and body. Shall I send it?")
    agent, model = scoped_agent(scopes, [stall, say("unused")], form)
    # the application opened the mail scope, so its write is in view
    ask = {"messages": [HumanMessage("send an email to bob saying hi")], "active_context": "mail"}
    agent.invoke(ask, CONFIG)
    assert "send_email" in model.recorded[0]["tools"]
    assert notes(model) == [] and len(model.recorded) == 1  # the model's question stands
    assert agent.get_state(CONFIG).values["messages"][-1].text == stall.text
    # the model calls the write itself: nothing stops it (approval is another layer's job)
    script = [calls(tool_call("send_email", {"query": "hi"})), say("Sent.")]
    agent2, _ = scoped_agent(scopes, script, form)
    agent2.invoke(ask, CONFIG)
    assert RAN == ["send_email"]


# -- assist only when it helps ---------------------------------------------------------------


WEATHER = [
    make("get_current_weather", "Get the current weather for a city."),
    make("get_forecast", "Get a daily forecast for a city."),
]
ISSUES = [
    make("jira_get_issue", "Get a Jira ticket by key."),
    make("jira_list_projects", "List the Jira projects."),
]


@BOTH
@pytest.mark.parametrize(
    ("text", "scopes", "scores"),
    [
        (
            "Thanks, have a nice evening!",
            [Scope("weather", "current weather and forecasts", tools=WEATHER)],
            {"get_current_weather": 0.21, "get_forecast": 0.2},
        ),
        (
            "Hi there!",
            [Scope("jira", "Jira: tickets, projects", tools=ISSUES)],
            {"jira_get_issue": 0.22, "jira_list_projects": 0.19},
        ),
    ],
)
def test_a_message_that_needs_no_tool_gets_no_hint_and_the_reply_stands(
    form: Form, text: str, scopes: list[Scope], scores: dict[str, float]
) -> None:
    # The measured cases: pre-selection confidently matched a scope (scores as the default ranker
    # gave them, above its 0.2 floor), and the hint pushed a call nobody asked for.
    rank = fixed_rank(scores)
    reply = say("You're welcome, have a lovely evening too!")
    agent, model = hesitation_agent(
        scopes,
        [reply, say("unused")],
        ranker=rank,
        form=form,
        **PICK,
    )
    agent.invoke({"messages": [HumanMessage(text)]}, CONFIG)
    state = agent.get_state(CONFIG).values
    assert state["scope_selection"]["reason"] == "confident"  # the case is reproduced
    assert notes(model) == [] and len(model.recorded) == 1 and RAN == []
    assert model.recorded[0]["messages"][-1].text == text  # the user's message is last
    assert state["messages"][-1].text == reply.text


def test_the_same_low_score_with_a_shared_content_word_is_still_hinted() -> None:
    scopes = [Scope("weather", "current weather and forecasts", tools=WEATHER)]
    rank = fixed_rank({"get_current_weather": 0.21, "get_forecast": 0.2})
    agent, model = hesitation_agent(
        scopes,
        [calls(tool_call("get_current_weather", {"query": "Paris"})), say("Sunny.")],
        ranker=rank,
        **PICK,
    )
    agent.invoke({"messages": [HumanMessage("What's the weather in Paris?")]}, CONFIG)
    (hint,) = notes(model)
    assert "`get_current_weather`" in hint and RAN == ["get_current_weather"]


def test_thanks_with_the_example_agent_and_the_default_ranker() -> None:
    # The reported case end to end: the example agent's scopes, the default ranker.
    from agents import build_scopes

    reply = say("Thank you, you too!")
    agent, model = hesitation_agent(build_scopes(), [reply, say("unused")], ranker="auto")
    agent.invoke({"messages": [HumanMessage("Thanks, have a nice evening!")]}, CONFIG)
    assert notes(model) == [] and len(model.recorded) == 1
    assert agent.get_state(CONFIG).values["messages"][-1].text == reply.text


def test_needs_tool_reads_shared_words_or_a_high_score() -> None:
    weather = tool_words("get_current_weather", "Get the current weather for a city.", ["city"])
    assert needs_tool("Is it raining? What's the weather in Oslo", [weather], 0.1)
    assert not needs_tool("Thanks, have a nice evening!", [weather], 0.21)
    assert needs_tool("Do I need an umbrella in Oslo?", [weather], ASSIST_MIN_SCORE)
    assert not needs_tool("Hi there!", [weather], None)


# -- tool facts through core.tool ------------------------------------------------------------

NULLABLE = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "units": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "lang": {"type": ["string", "null"]},
    },
    "required": ["city", "units", "lang"],
}


def test_nullable_parameters_are_not_critical_in_the_hesitation_path() -> None:
    pending = Pending("weather", "bound", {"name": "weather", "parameters": NULLABLE})
    assert pending.critical == ["city"]
    (info,) = parse_schemas([{"name": "weather", "parameters": NULLABLE}])
    assert {p.name: p.critical for p in info.params} == {
        "city": True,
        "units": False,
        "lang": False,
    }
    text = nudge_text([pending])
    assert "filling city from the user's request" in text and "units" not in text


def test_a_write_with_requires_approval_false_is_not_treated_as_needing_approval() -> None:
    unapproved = make("post_note", "Post a note.", {"risk": "write", "requires_approval": False})
    approved = make("delete_note", "Delete a note.", {"risk": "write"})
    reader = make("read_note", "Read a note.", {"requires_approval": False})
    found = {p.name: p for p in bound_disclosures([unapproved, approved, reader], [])}
    assert (found["post_note"].writes, found["post_note"].requires_approval) == (True, False)
    assert (found["delete_note"].writes, found["delete_note"].requires_approval) == (True, True)
    assert (found["read_note"].writes, found["read_note"].requires_approval) == (False, False)
    assert "asks the user for approval" not in nudge_text([found["post_note"]])
    assert "asks the user for approval" in nudge_text([found["delete_note"]])
    policy = HesitationMiddleware()
    assert not policy.may_nudge(found["post_note"]) and policy.may_nudge(found["read_note"])
    assert HesitationMiddleware(nudge_writes=True).may_nudge(found["post_note"])


def test_a_gateway_disclosure_reads_its_facts_through_core_tool() -> None:
    item = {
        "name": "post_note",
        "description": "Post a note.",
        "parameters": NULLABLE,
        "risk": "write",
        "requires_approval": False,
    }
    from langchain_core.messages import AIMessage

    from attention_scoping.hesitation.pending import gateway_disclosures

    history = [
        HumanMessage("post it"),
        AIMessage("", tool_calls=[tool_call("get_tool_schema", {"tool_names": ["post_note"]})]),
        ToolMessage(json.dumps({"disclosed": [item]}), tool_call_id="c", name="get_tool_schema"),
    ]
    (pending,) = gateway_disclosures(history)
    assert pending.writes and not pending.requires_approval and pending.critical == ["city"]


# -- gate promotions -------------------------------------------------------------------------

GATE_CATALOG = [
    make("get_weather", "Current weather and temperature for a city."),
    make("read_inbox", "List the latest emails in the inbox."),
    make("send_email", "Send an email message to a recipient.", DESTRUCTIVE),
    make("translate_text", "Translate text into another language."),
]


def gated(model: ScriptedChatModel, **kwargs: Any) -> Any:
    kwargs.setdefault("ranker", BM25Ranker())
    gate = ToolAttentionMiddleware(**kwargs)
    return create_agent(model, tools=GATE_CATALOG, middleware=[gate])


@pytest.mark.parametrize(
    "text",
    ["send an email message to bob", "use send_email to write to bob"],  # ranked; named
)
def test_the_gate_never_promotes_a_write_on_its_own(text: str) -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=2, summary_pool="scope").invoke({"messages": [HumanMessage(text)]})
    assert "send_email" not in model.recorded[0]["tools"]
    assert "- send_email: Send an email message to a recipient." in model.recorded[0]["system"]


def test_a_write_is_not_promoted_when_all_candidates_fit_and_the_pool_lists_it() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=10).invoke({"messages": [HumanMessage("send an email to bob")]})
    assert model.recorded[0]["tools"] == ["get_weather", "read_inbox", "translate_text"]
    assert "- send_email: " in model.recorded[0]["system"]


def test_the_model_asks_for_a_write_by_calling_it_and_then_it_runs() -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("send_email", {"query": "hi bob"}, "a")),
            calls(tool_call("send_email", {"query": "hi bob"}, "b")),
            say("Sent."),
        ]
    )
    result = gated(model, k=2, summary_pool="scope").invoke(
        {"messages": [HumanMessage("send an email message to bob")]}
    )
    refused = json.loads(result["messages"][2].text)
    assert refused["error"] == "tool_not_available" and RAN == ["send_email"]
    assert "send_email" not in model.recorded[0]["tools"]
    assert "send_email" in model.recorded[1]["tools"]  # the model asked: disclosed


def test_a_write_the_application_pinned_is_shown() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=1, pinned=["send_email"]).invoke({"messages": [HumanMessage("weather?")]})
    assert "send_email" in model.recorded[0]["tools"]


def test_the_gate_explains_a_withheld_write() -> None:
    gate = ToolAttentionMiddleware(ranker=BM25Ranker(), k=10)
    decision = gate.decide({"messages": [HumanMessage("send an email")]}, GATE_CATALOG)
    assert "send_email" not in decision.shown and decision.withheld_writes == ["send_email"]
    assert "it writes" in decision.explain("send_email")


# -- the gateway's prompt pool ---------------------------------------------------------------


@pytest.mark.parametrize("signatures", [True, False])
def test_the_gateway_prompt_names_only_reading_tools(signatures: bool) -> None:
    post_note = make(
        "post_note", "Post a note to the team board.", {"risk": "write", "requires_approval": False}
    )  # a write nobody approves: still a write
    gateway = ToolGateway([GATE_CATALOG[0], GATE_CATALOG[1], GATE_CATALOG[3], post_note])
    prompt = gateway.prompt(pool=True, signatures=signatures)
    assert "get_weather" in prompt and "read_inbox" in prompt and "post_note" not in prompt
    assert "search_tool_catalog" in prompt
    found = [c["name"] for c in gateway.search("post a note to the board")["candidates"]]
    assert "post_note" in found  # still findable through search
