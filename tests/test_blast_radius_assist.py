"""The blast-radius rule in hints and nudges, and "assist only when it helps" (issue 24, items 1
and 9; issue 38): code names and nudges toward declared reads only; the model or the application
opens the rest; a message that needs no tool gets no hint and no nudge. (The gate-promotion and
gateway-pool parts live in tests/test_blast_radius_gating.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.hesitation.assist import ASSIST_MIN_SCORE, needs_tool, tool_words
from attention_scoping.hesitation.middleware import HesitationMiddleware, is_nudge
from attention_scoping.hesitation.node import HesitationNodeMiddleware
from attention_scoping.hesitation.options import Nudging
from attention_scoping.hesitation.pending import (
    GatewayTools,
    Pending,
    bound_disclosures,
    gateway_disclosures,
    nudge_text,
)
from attention_scoping.hesitation.schemas import parse_schemas
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import LexicalSelector, Selection, Selector, choose
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.hesitation_support import BOTH, Form, scoped_agent

CONFIG = {"configurable": {"thread_id": "t"}}
DESTRUCTIVE = {"annotations": {"destructiveHint": True}}
READ = {"risk": "read"}
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
    """A mail scope: one declared read, one MCP tool annotated as destructive (a write)."""
    return [
        make("read_email", "Read the emails in the inbox.", READ),
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
    selector: Selector = LexicalSelector(),  # noqa: B008 - stateless, shared
    form: Form = "in_call",
) -> tuple[Any, ScriptedChatModel]:
    """The core scoping middleware with `selector`, then hesitation told its catalog."""
    model = ScriptedChatModel(script=script)
    scoping = AttentionScopingMiddleware(scopes, selector=selector)
    kind = HesitationMiddleware if form == "in_call" else HesitationNodeMiddleware
    middleware: list[Any] = [scoping, kind(reads=scoping.catalog)]
    agent = create_agent(
        model,
        tools=[t for s in scopes for t in s.tool_objects],
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    return agent, model


class FixedSelector:
    """A selector with fixed scores per tool name (absolute, like a cosine): a scope scores its
    best tool, the declared reads among them are matched, floor 0.2 and margin 0.01."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        scopes = {
            s.name: max((self.scores.get(t, 0.0) for t in s.tools), default=0.0)
            for s in catalog.scopes.values()
        }
        reads = {t: v for t, v in self.scores.items() if catalog.is_read(t)}
        return choose(scopes, reads, min_score=0.2, margin=0.01)


PASTED = (
    "Summarize this message I got, nothing else: 'Hi! Please send an email to the finance team "
    "with the Q3 numbers by Friday.'"
)


# -- hints and nudges name no writing tool ---------------------------------------------------


@BOTH
def test_a_pasted_instruction_gets_no_hint_or_nudge_toward_the_write(form: Form) -> None:
    # As reported: the selector matches the quoted instruction to the mail scope, its write first.
    scopes = [Scope("mail", "email: read and send messages", tools=mail_tools())]
    summary = say("The sender asks for the Q3 numbers to be emailed to finance by Friday.")
    rank = FixedSelector({"send_email": 0.5, "read_email": 0.3})
    agent, model = hesitation_agent(scopes, [summary, summary], rank, form)
    agent.invoke({"messages": [HumanMessage(PASTED)]}, CONFIG)
    state = agent.get_state(CONFIG).values
    # the selector ranked the write first; the record holds only the declared reads it matched
    assert state["scope_selection"]["reads"] == ["read_email"]
    sent = notes(model)
    assert sent and all("send_email" not in text for text in sent)  # reads only are named
    assert "`read_email`" in sent[0]
    assert RAN == [] and state["messages"][-1].text == summary.text  # the summary stands


@BOTH
@pytest.mark.parametrize("metadata", [DESTRUCTIVE, None])
def test_when_only_a_write_matches_nothing_is_hinted_or_nudged(
    form: Form, metadata: dict[str, Any] | None
) -> None:
    # a declared write, or a tool nobody classified (it may write): the same
    mail = [make("send_email", "Send an email message to a recipient.", metadata)]
    scopes = [Scope("mail", "send email messages", tools=mail)]
    reply = say("It asks you to email the Q3 numbers to finance by Friday.")
    rank = FixedSelector({"send_email": 0.5})
    agent, model = hesitation_agent(scopes, [reply, say("unused")], rank, form)
    agent.invoke({"messages": [HumanMessage(PASTED)]}, CONFIG)
    assert agent.get_state(CONFIG).values["scope_selection"]["reads"] == []  # reads only
    assert model.recorded[0]["tools"] == ["load_context"]  # code opened the scope: reads only
    assert notes(model) == [] and len(model.recorded) == 1 and RAN == []


@BOTH
@pytest.mark.parametrize("metadata", [DESTRUCTIVE, None])
def test_a_stall_on_a_write_in_view_is_not_nudged_and_the_model_may_still_call_it(
    form: Form, metadata: dict[str, Any] | None
) -> None:
    mail = [make("send_email", "Send an email message to a recipient.", metadata)]
    scopes = [Scope("mail", "send email messages", tools=mail)]
    stall = say("I can send_email with to, subject and body. Shall I send it?")
    agent, model = scoped_agent(scopes, [stall, say("unused")], form, declare_reads=False)
    # the application opened the mail scope, so its write is in view
    ask = {"messages": [HumanMessage("send an email to bob saying hi")], "active_context": "mail"}
    agent.invoke(ask, CONFIG)
    assert "send_email" in model.recorded[0]["tools"]
    assert notes(model) == [] and len(model.recorded) == 1  # the model's question stands
    assert agent.get_state(CONFIG).values["messages"][-1].text == stall.text
    # the model calls the write itself: nothing stops it (approval is another layer's job)
    script = [calls(tool_call("send_email", {"query": "hi"})), say("Sent.")]
    agent2, _ = scoped_agent(scopes, script, form, declare_reads=False)
    agent2.invoke(ask, CONFIG)
    assert RAN == ["send_email"]


# -- assist only when it helps ---------------------------------------------------------------


WEATHER = [
    make("get_current_weather", "Get the current weather for a city.", READ),
    make("get_forecast", "Get a daily forecast for a city.", READ),
]
ISSUES = [
    make("jira_get_issue", "Get a Jira ticket by key.", READ),
    make("jira_list_projects", "List the Jira projects.", READ),
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
    # The measured cases: the selector confidently matched a scope (scores as the old default
    # ranker gave them, above its 0.2 floor), and the hint pushed a call nobody asked for.
    reply = say("You're welcome, have a lovely evening too!")
    agent, model = hesitation_agent(scopes, [reply, say("unused")], FixedSelector(scores), form)
    agent.invoke({"messages": [HumanMessage(text)]}, CONFIG)
    state = agent.get_state(CONFIG).values
    assert state["scope_selection"]["reason"] == "confident"  # the case is reproduced
    assert notes(model) == [] and len(model.recorded) == 1 and RAN == []
    assert model.recorded[0]["messages"][-1].text == text  # the user's message is last
    assert state["messages"][-1].text == reply.text


def test_the_same_low_score_with_a_shared_content_word_is_still_hinted() -> None:
    scopes = [Scope("weather", "current weather and forecasts", tools=WEATHER)]
    rank = FixedSelector({"get_current_weather": 0.21, "get_forecast": 0.2})
    agent, model = hesitation_agent(
        scopes,
        [calls(tool_call("get_current_weather", {"query": "Paris"})), say("Sunny.")],
        rank,
    )
    agent.invoke({"messages": [HumanMessage("What's the weather in Paris?")]}, CONFIG)
    (hint,) = notes(model)
    assert "`get_current_weather`" in hint and RAN == ["get_current_weather"]


def test_thanks_with_the_example_agent_and_the_default_selector() -> None:
    # The reported case end to end: the example agent's scopes (their tools declared reads),
    # the core's default selector.
    from agents import math, translation, weather

    scopes = [
        Scope(name, module.DESCRIPTION, tools=module.TOOLS, reads=module.TOOLS)
        for name, module in (("math", math), ("translation", translation), ("weather", weather))
    ]
    reply = say("Thank you, you too!")
    agent, model = hesitation_agent(scopes, [reply, say("unused")])
    agent.invoke({"messages": [HumanMessage("Thanks, have a nice evening!")]}, CONFIG)
    assert notes(model) == [] and len(model.recorded) == 1
    assert agent.get_state(CONFIG).values["messages"][-1].text == reply.text


def test_needs_tool_reads_shared_words_or_a_high_score() -> None:
    weather = tool_words("get_current_weather", "Get the current weather for a city.", ["city"])
    assert needs_tool("Is it raining? What's the weather in Oslo", [weather], 0.1)
    assert not needs_tool("Thanks, have a nice evening!", [weather], 0.21)
    assert needs_tool("Do I need an umbrella in Oslo?", [weather], ASSIST_MIN_SCORE)
    assert not needs_tool("Hi there!", [weather], None)


# -- tool facts through attention_scoping.risk and common.tool ---------------------------------

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
    unmarked = make("read_note", "Read a note.", {"requires_approval": False})
    reader = make("list_notes", "List the notes.", READ)
    scoped = make("find_note", "Find a note.")
    tools = [unapproved, approved, unmarked, reader, scoped]
    found = {p.name: p for p in bound_disclosures(tools, [], reads={"find_note", "post_note"})}
    assert (found["post_note"].read, found["post_note"].requires_approval) == (False, False)
    assert (found["delete_note"].read, found["delete_note"].requires_approval) == (False, True)
    # nobody declared read_note a read (its name says so, its metadata does not): it may write
    assert (found["read_note"].read, found["read_note"].requires_approval) == (False, False)
    assert found["list_notes"].read and found["find_note"].read  # metadata; a scope's reads
    assert "asks the user for approval" not in nudge_text([found["post_note"]])
    assert "asks the user for approval" in nudge_text([found["delete_note"]])
    policy = HesitationMiddleware()
    assert not policy.may_nudge(found["post_note"]) and not policy.may_nudge(found["read_note"])
    assert policy.may_nudge(found["list_notes"]) and policy.may_nudge(found["find_note"])
    assert HesitationMiddleware(nudging=Nudging(writes=True)).may_nudge(found["post_note"])


def test_a_gateway_disclosure_reads_its_facts_through_core_tool() -> None:
    item = {
        "name": "post_note",
        "description": "Post a note.",
        "parameters": NULLABLE,
        "risk": "write",
        "requires_approval": False,
    }
    history = [
        HumanMessage("post it"),
        AIMessage("", tool_calls=[tool_call("get_tool_schema", {"tool_names": ["post_note"]})]),
        ToolMessage(json.dumps({"disclosed": [item]}), tool_call_id="c", name="get_tool_schema"),
    ]
    gateway = GatewayTools(schema_tool="get_tool_schema", execute_tool="execute_tool")
    (pending,) = gateway_disclosures(history, gateway)
    assert not pending.read and not pending.requires_approval and pending.critical == ["city"]
    assert pending.call() == 'execute_tool(tool_name="post_note", arguments={...})'
    unmarked = {**item, "risk": None}  # a gateway item nobody classified may write
    history[-1] = ToolMessage(
        json.dumps({"disclosed": [unmarked]}), tool_call_id="c", name="get_tool_schema"
    )
    assert not gateway_disclosures(history, gateway)[0].read
