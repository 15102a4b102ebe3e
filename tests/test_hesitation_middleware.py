"""The hesitation nudge in both forms (in-call retry and post-model node), in create_agent and in
a hand-built StateGraph, alone and composed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

from attention_scoping.approval.middleware import ApprovalGate, ApprovalMiddleware
from attention_scoping.errors import AttentionScopingError
from attention_scoping.gateway.tools import EXECUTE_TOOL, GET_TOOL_SCHEMA, SEARCH_TOOL_CATALOG
from attention_scoping.graph import agent_state, make_model_node, make_tool_node
from attention_scoping.hesitation.middleware import (
    HesitationGraphState,
    HesitationMiddleware,
    HesitationPolicy,
    is_nudge,
)
from attention_scoping.hesitation.node import HesitationNodeMiddleware, make_hesitation_node
from attention_scoping.hesitation.options import Nudging, Radar
from attention_scoping.hesitation.pending import GatewayTools
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import (
    ARGS,
    SECRET,
    SEED_STALL,
    FakeClock,
    make_gateway,
    make_scheduled_jobs,
)

Form = Literal["in_call", "node"]
Builder = Literal["create_agent", "graph"]
FORMS: list[Form] = ["in_call", "node"]
BUILDERS: list[Builder] = ["create_agent", "graph"]
BOTH = pytest.mark.parametrize("form", FORMS)
EVERYWHERE = pytest.mark.parametrize(("form", "builder"), [(f, b) for f in FORMS for b in BUILDERS])

STALL_2 = "Before I proceed, please confirm the title and message for the reminder."
STALL_3 = "Shall I go ahead and schedule it with schedule_time +30m and folder reminders?"
PROMISE = "I'll schedule the reminder to verify approvals on PR 482 now."
GATEWAY = Radar(
    gateway=GatewayTools(
        schema_tool=GET_TOOL_SCHEMA, execute_tool=EXECUTE_TOOL, search_tool=SEARCH_TOOL_CATALOG
    )
)
"""The radar of a gateway agent: the kit knows no gateway's tool names by itself."""
OPT_IN = Nudging(writes=True)
"""scheduled_jobs schedules a job (it may write, nobody declared it a read): a stall's nudge
pushes toward it only because the application opts in."""


def hesitation(form: Form, **kwargs: Any) -> HesitationPolicy[Any, Any]:
    """The hesitation middleware of one form."""
    if form == "in_call":
        return HesitationMiddleware(**kwargs)
    return HesitationNodeMiddleware(**kwargs)


def build(
    model: ScriptedChatModel,
    tools: list[Any],
    form: Form,
    builder: Builder = "create_agent",
    *,
    before: list[Any] | None = None,
    after: list[Any] | None = None,
    **kwargs: Any,
) -> Any:
    """An agent with the hesitation middleware of `form`, by `create_agent` or by hand."""
    hes = hesitation(form, **kwargs)
    middleware = [*(before or []), hes, *(after or [])]
    if builder == "create_agent":
        return create_agent(model, tools=tools, middleware=middleware, checkpointer=InMemorySaver())
    schema = agent_state(HesitationGraphState, *middleware)
    graph = StateGraph(schema)
    graph.add_node(
        "model", make_model_node(model, tools, middleware=middleware, state_schema=schema)
    )
    graph.add_node("tools", make_tool_node(tools, middleware=middleware, state_schema=schema))
    graph.add_edge(START, "model")
    graph.add_edge("tools", "model")
    if isinstance(hes, HesitationNodeMiddleware):
        node: Any = make_hesitation_node(hes, tools)
        graph.add_node("hesitation", node, destinations=("model", "tools", END))
        graph.add_edge("model", "hesitation")
    else:
        graph.add_conditional_edges("model", tools_condition)
    return graph.compile(checkpointer=InMemorySaver())


def stream(agent: Any, inputs: Any, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for mode, chunk in agent.stream(inputs, config, stream_mode=["custom", "updates"]):
        if mode == "custom" and chunk.get("type") == "think":
            events.append(chunk)
    return events


def config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def visible(messages: list[BaseMessage]) -> list[str]:
    """Message types a UI shows: nudges hidden."""
    return [type(m).__name__ for m in messages if not is_nudge(m)]


def jobs_agent(
    script: list[Any], runs: list[dict[str, Any]], form: Form, builder: Builder = "create_agent",
    **kwargs: Any,
) -> tuple[ScriptedChatModel, Any]:  # fmt: skip
    model = ScriptedChatModel(script=script)
    kwargs.setdefault("nudging", OPT_IN)
    return model, build(model, [make_scheduled_jobs(runs)], form, builder, **kwargs)


def stall_then_call() -> list[Any]:
    """The script of most nudge tests: a stall, then the call, then the answer."""
    return [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")]


def schema_then_stall() -> list[Any]:
    """Through the gateway: the model fetches the write tool's schema, then stalls."""
    return [
        calls(tool_call("get_tool_schema", {"tool_names": ["scheduled_jobs"]}, "g")),
        say(SEED_STALL),
    ]


def make_send_email(sent: list[dict[str, Any]]) -> BaseTool:
    """A side-effecting tool (`risk="write"`) that records every email really sent."""

    @tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email now.

        Args:
            to: Recipient address.
            subject: Subject line.
            body: Plain-text body.
        """
        sent.append({"to": to, "subject": subject, "body": body})
        return "sent"

    send_email.metadata = {"risk": "write"}
    return send_email


EMAIL_ARGS = {"to": "bob@acme.io", "subject": "Meeting moved", "body": "It is at 3pm now."}
EMAIL_DRAFT = (
    "Here's the email:\n\nTo: bob@acme.io\nSubject: Meeting moved\nBody: Hi Bob, the meeting "
    "is at 3pm now.\n\nShall I send it?"
)


# -- the nudge loop ------------------------------------------------------------------------------


@EVERYWHERE
def test_bound_tool_stall_is_nudged_into_a_call(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent(stall_then_call(), runs, form, builder)
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("1"))
    assert [e["action"] for e in events] == ["nudge"]
    assert len(runs) == 1
    nudge = model.recorded[1]["messages"][-1]
    assert is_nudge(nudge)
    assert "Call scheduled_jobs(...), filling title, message from the user's request" in nudge.text
    messages = agent.get_state(config("1")).values["messages"]
    assert visible(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert all(SEED_STALL not in m.text for m in messages if not is_nudge(m))
    # In-call: nothing of the retry is in the state. Node: the nudge turn is, marked.
    assert sum(map(is_nudge, messages)) == (1 if form == "node" else 0)


@EVERYWHERE
def test_the_bound_leaves_the_models_answer_as_it_is(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent([say(SEED_STALL), say(STALL_2), say(STALL_3)], runs, form, builder)
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("2"))
    assert len(model.recorded) == 3  # one call and two nudged retries, no more
    assert [e["action"] for e in events] == ["nudge", "nudge"]
    assert [e["round"] for e in events] == [1, 2]
    state = agent.get_state(config("2")).values
    final = state["messages"][-1]
    assert final.text == STALL_3  # the model's question stands: nothing glued onto it
    assert "Nothing was executed" not in final.text
    assert state["hesitation"]["nudges"] == 2
    assert runs == []

    # A new user turn gets a fresh budget.
    model.script += [say(SEED_STALL), calls(tool_call("scheduled_jobs", ARGS, "c9")), say("ok")]
    events = stream(agent, {"messages": [HumanMessage("use the defaults")]}, config("2"))
    assert [e["action"] for e in events] == ["nudge"]
    assert len(runs) == 1


@EVERYWHERE
def test_an_announced_action_that_never_ran_gets_an_honest_answer(
    form: Form, builder: Builder
) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent([say(PROMISE)] * 3, runs, form, builder)
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("3"))
    assert len(model.recorded) == 3
    assert [e["action"] for e in events] == ["nudge", "nudge", "give_up"]
    assert len({e["message_id"] for e in events}) == 3 or form == "node"
    final = agent.get_state(config("3")).values["messages"][-1]
    assert final.text.startswith("Nothing was executed: I did not call scheduled_jobs.")
    assert PROMISE in final.text
    assert final.response_metadata["hesitation"] == "gave_up"
    assert runs == []


@BOTH
def test_max_nudges_zero_never_nudges(form: Form) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent([say(SEED_STALL)], runs, form, max_nudges=0)
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("4"))
    assert events == [] and len(model.recorded) == 1
    assert agent.get_state(config("4")).values["messages"][-1].text == SEED_STALL
    model, agent = jobs_agent([say(PROMISE)], runs, form, max_nudges=0)
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("4b"))
    assert [e["action"] for e in events] == ["give_up"] and len(model.recorded) == 1


@EVERYWHERE
def test_a_model_that_keeps_its_answer_keeps_it_untouched(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent(
        [say(SEED_STALL), say(SEED_STALL), say("unused")], runs, form, builder
    )
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("5"))
    assert [e["action"] for e in events] == ["nudge"] and len(model.recorded) == 2
    final = agent.get_state(config("5")).values["messages"][-1]
    assert final.text == SEED_STALL and "Nothing was executed" not in final.text


@EVERYWHERE
def test_legitimate_answers_pass_untouched(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    clarifying = "Which pull request is this for? There are two open ones, #482 and #497."
    model, agent = jobs_agent([say(clarifying)], runs, form, builder)
    events = stream(agent, {"messages": [HumanMessage("remind me about the PR")]}, config("6"))
    assert events == [] and len(model.recorded) == 1
    values = agent.get_state(config("6")).values
    assert values["messages"][-1].text == clarifying
    assert "nudges" not in values.get("hesitation", {})


@BOTH
def test_offer_after_a_real_result_is_not_a_stall(form: Form) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent(
        [
            calls(tool_call("scheduled_jobs", ARGS, "c1")),
            say("Done. Would you like me to proceed with another reminder for the release?"),
        ],
        runs,
        form,
    )
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("7"))
    assert events == [] and len(model.recorded) == 2


@EVERYWHERE
def test_question_about_the_tool_is_not_judged(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    listing = "It takes title, message, schedule_time, folder and notify_email."
    model, agent = jobs_agent([say(listing)], runs, form, builder)
    question = HumanMessage("What parameters does scheduled_jobs take?")
    events = stream(agent, {"messages": [question]}, config("8"))
    assert events == [] and len(model.recorded) == 1


@BOTH
def test_no_disclosed_schema_no_judging(form: Form) -> None:
    model = ScriptedChatModel(script=[say("Would you like me to proceed?")])
    agent = create_agent(model, middleware=[hesitation(form)])
    result = agent.invoke({"messages": [HumanMessage("hi")]})
    assert result["messages"][-1].text == "Would you like me to proceed?"
    assert len(model.recorded) == 1


@BOTH
async def test_async_nudge_loop(form: Form) -> None:
    runs: list[dict[str, Any]] = []
    _model, agent = jobs_agent(stall_then_call(), runs, form)
    events = []
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("remind me")]}, config("9"), stream_mode=["custom", "updates"]
    ):
        if mode == "custom" and chunk.get("type") == "think":
            events.append(chunk)
    assert [e["action"] for e in events] == ["nudge"] and len(runs) == 1


@EVERYWHERE
def test_think_event_id_matches_the_streamed_message(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    _model, agent = jobs_agent(stall_then_call(), runs, form, builder)
    streamed: dict[str, str] = {}
    think: list[dict[str, Any]] = []
    for mode, chunk in agent.stream(
        {"messages": [HumanMessage("remind me")]},
        config("10"),
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


@EVERYWHERE
def test_a_stall_on_a_disclosed_gateway_write_stands_without_the_apps_opt_in(
    form: Form, builder: Builder
) -> None:
    runs: list[dict[str, Any]] = []
    gateway = make_gateway(runs, FakeClock())
    model = ScriptedChatModel(script=schema_then_stall())
    # scheduled_jobs writes: code does not push toward it, even though a human approves it.
    app = build(model, list(gateway.tools), form, builder, radar=GATEWAY)
    events = stream(app, {"messages": [HumanMessage("remind me")]}, config("g"))
    assert events == [] and len(model.recorded) == 2 and runs == []
    assert app.get_state(config("g")).values["messages"][-1].text == SEED_STALL


@EVERYWHERE
def test_gateway_disclosure(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    gateway = make_gateway(runs, FakeClock())
    model = ScriptedChatModel(
        script=[
            *schema_then_stall(),
            calls(
                tool_call("execute_tool", {"tool_name": "scheduled_jobs", "arguments": ARGS}, "x")
            ),
            say("Scheduled."),
        ]
    )
    # scheduled_jobs is a write: nudged toward only because the application opted in.
    app = build(model, list(gateway.tools), form, builder, radar=GATEWAY, nudging=OPT_IN)
    events = stream(app, {"messages": [HumanMessage("remind me")]}, config("g"))
    assert [e["action"] for e in events] == ["nudge"]
    assert events[0]["tools"] == ["scheduled_jobs"]
    assert "asks the user for approval by itself" in model.recorded[2]["messages"][-1].text
    assert app.get_state(config("g")).values["hesitation"]["nudges"] == 1
    (interrupt,) = app.get_state(config("g")).interrupts
    assert runs == []
    app.invoke(Command(resume=interrupt.value["approval_token"]), config("g"))
    assert len(runs) == 1
    assert app.get_state(config("g")).values["messages"][-1].text == "Scheduled."


@BOTH
def test_composition_with_scoping_and_hitl_per_call(form: Form) -> None:
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
    agent = build(model, [jobs, get_weather], form, before=[scoping], after=[hitl], nudging=OPT_IN)
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("c"))
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
    (interrupt,) = agent.get_state(config("c")).interrupts
    assert interrupt.value["name"] == "scheduled_jobs" and runs == []
    agent.invoke(Command(resume={interrupt.id: {"type": "approve"}}), config("c"))
    assert len(runs) == 1
    assert agent.get_state(config("c")).values["messages"][-1].text == "Scheduled."


def test_middleware_validation_and_names() -> None:
    with pytest.raises(AttentionScopingError, match="max_nudges must be >= 0"):
        HesitationMiddleware(max_nudges=-1)
    with pytest.raises(ValueError, match="role must be 'user' or 'system'"):
        HesitationNodeMiddleware(nudging=Nudging(role="assistant"))  # type: ignore[arg-type]
    with pytest.raises(AttentionScopingError, match="valid: 'hint', 'check', 'off'"):
        HesitationMiddleware(grounding="hints")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="radar must be a Radar"):
        HesitationMiddleware(radar={"threshold": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword"):
        HesitationMiddleware(nudge_writes=True)  # type: ignore[call-arg]  # the 0.1 spelling
    assert HesitationMiddleware(name="h2").name == "h2"
    assert HesitationMiddleware().name == "HesitationMiddleware"
    assert HesitationNodeMiddleware().name == "HesitationNodeMiddleware"


@BOTH
def test_the_radar_reads_the_users_request(form: Form) -> None:
    """The same draft-and-confirm message is a stall after "remind me", and what the user
    asked for after "let me review it before you schedule it"."""
    draft = (
        "Here's the reminder:\n- title: PR 482 follow-up\n- message: verify approvals, merge\n"
        "- schedule_time: +30m\n\nShall I schedule it?"
    )
    review = "Draft a reminder about PR 482, but let me review it before you schedule it."
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent([say(draft)], runs, form)
    events = stream(agent, {"messages": [HumanMessage(review)]}, config("r1"))
    assert events == [] and len(model.recorded) == 1
    assert agent.get_state(config("r1")).values["messages"][-1].text == draft

    model, agent = jobs_agent(
        [say(draft), calls(tool_call("scheduled_jobs", ARGS, "c1")), say("Scheduled.")],
        runs,
        form,
    )
    events = stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("r2"))
    assert [e["action"] for e in events] == ["nudge"] and len(runs) == 1


# -- no nudge into writes nobody asked for ------------------------------------------------------


_USER_VOICE = re.compile(r"\b(?:I|me|my|mine|I'm|I've)\b")


@EVERYWHERE
def test_the_nudge_is_a_runtime_note_never_the_users_voice(form: Form, builder: Builder) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent(stall_then_call(), runs, form, builder)
    stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("v"))
    nudge = model.recorded[1]["messages"][-1]
    assert is_nudge(nudge)
    note = nudge.text.split("Your hidden reply was:")[0]  # the node form quotes the stall
    assert note.startswith("[Runtime note")
    assert "not written by the user" in note and "not their approval" in note
    assert not _USER_VOICE.search(note), _USER_VOICE.findall(note)
    assert "confirm" not in note.replace("asking the user to confirm", "")


@BOTH
def test_the_nudge_can_be_a_system_message(form: Form) -> None:
    runs: list[dict[str, Any]] = []
    nudging = Nudging(role="system", writes=True)
    model, agent = jobs_agent(stall_then_call(), runs, form, nudging=nudging)
    stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("s"))
    nudge = model.recorded[1]["messages"][-1]
    assert isinstance(nudge, SystemMessage) and is_nudge(nudge) and len(runs) == 1


LISTING_ANSWERS = [
    (
        "Give me the wording for a reminder about renewing the TLS certs; I'll add it myself.",
        "Title: Renew TLS certificates\nMessage: The certificates expire in 14 days. Renew and "
        "deploy them.\nSchedule time: a week before expiry\nFolder: reminders",
    ),
    (
        "Translate the reminder form's fields into German for our docs.",
        "- title → Titel\n- message → Nachricht\n- schedule_time → Zeitpunkt\n- folder → Ordner\n"
        "- notify_email → E-Mail-Benachrichtigung",
    ),
    (
        "How do reminders work here? What happens if I don't give a time?",
        "A reminder has a title and a message. If you don't give a time, schedule_time defaults "
        "to +30m; it is filed in the reminders folder and notify_email is off unless you ask.",
    ),
    (
        "Explain what happens when a reminder fires, step by step.",
        "When a reminder fires:\n1. The title and message are shown as a notification.\n2. If "
        "notify_email is on, an email goes out too.\n3. The job stays in its folder (reminders "
        "by default) until you delete it.\n4. With a schedule_time like +30m it fires once.",
    ),
    (
        "Write the help text for the reminder command.",
        "## remind\n- `title` (required): a short title\n- `message` (required): the text\n"
        "- `schedule_time` (default `+30m`)\n- `folder` (default `reminders`)",
    ),
]


@EVERYWHERE
@pytest.mark.parametrize(("request_text", "answer"), LISTING_ANSWERS)
def test_a_request_for_text_is_answered_not_nudged(
    form: Form, builder: Builder, request_text: str, answer: str
) -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent([say(answer), say("unused")], runs, form, builder)
    events = stream(agent, {"messages": [HumanMessage(request_text)]}, config("t"))
    assert events == [] and len(model.recorded) == 1 and runs == []
    assert agent.get_state(config("t")).values["messages"][-1].text == answer


@EVERYWHERE
def test_a_draft_the_user_sends_themselves_is_not_sent(form: Form, builder: Builder) -> None:
    sent: list[dict[str, Any]] = []
    model = ScriptedChatModel(
        script=[say(EMAIL_DRAFT), calls(tool_call("send_email", EMAIL_ARGS, "e1")), say("Sent.")]
    )
    agent = build(model, [make_send_email(sent)], form, builder, nudging=OPT_IN)
    request = HumanMessage("Draft an email to Bob that the meeting moved to 3pm, I'll send it.")
    events = stream(agent, {"messages": [request]}, config("d"))
    assert events == [] and sent == [] and len(model.recorded) == 1


@EVERYWHERE
def test_no_nudge_toward_a_write_tool_without_approval(form: Form, builder: Builder) -> None:
    sent: list[dict[str, Any]] = []
    model = ScriptedChatModel(
        script=[say(EMAIL_DRAFT), calls(tool_call("send_email", EMAIL_ARGS, "e1")), say("Sent.")]
    )
    agent = build(model, [make_send_email(sent)], form, builder)
    request = HumanMessage("Email Bob that the meeting moved to 3pm.")
    events = stream(agent, {"messages": [request]}, config("w"))
    # The model asked before a side effect and nobody approves writes: its question stands.
    assert events == [] and sent == [] and len(model.recorded) == 1
    assert agent.get_state(config("w")).values["messages"][-1].text == EMAIL_DRAFT


@EVERYWHERE
@pytest.mark.parametrize("opt_in", [False, True])
def test_a_write_tool_is_nudged_only_when_the_app_opts_in(
    form: Form, builder: Builder, opt_in: bool
) -> None:
    sent: list[dict[str, Any]] = []
    model = ScriptedChatModel(
        script=[say(EMAIL_DRAFT), calls(tool_call("send_email", EMAIL_ARGS, "e1")), say("Sent.")]
    )
    send_email = make_send_email(sent)
    gate = ApprovalGate(TokenIssuer(SECRET, clock=FakeClock()))
    approval = [ApprovalMiddleware(gate, tools=["send_email"])]
    agent = build(
        model,
        [send_email],
        form,
        builder,
        after=approval,
        nudging=Nudging(writes=opt_in),
    )
    request = HumanMessage("Email Bob that the meeting moved to 3pm.")
    events = stream(agent, {"messages": [request]}, config("o"))
    if not opt_in:
        assert events == [] and sent == [] and len(model.recorded) == 1
        assert agent.get_state(config("o")).values["messages"][-1].text == EMAIL_DRAFT
        return
    assert [e["action"] for e in events] == ["nudge"]
    note = model.recorded[1]["messages"][-1].text
    assert "send_email asks the user for approval by itself" in note
    (interrupt,) = agent.get_state(config("o")).interrupts  # the human decides
    assert sent == [] and interrupt.value["name"] == "send_email"


class _AfterModelProbe(AgentMiddleware):
    """Another middleware with an `after_model` hook (its node sits next to the hesitation
    node): the jump back to the model must not be lost, wherever the two sit."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def after_model(self, state: Any, runtime: Any) -> None:
        self.seen.append(type(state["messages"][-1]).__name__)


@pytest.mark.parametrize("probe_first", [True, False])
def test_the_node_jumps_back_to_the_model_next_to_other_after_model_hooks(
    probe_first: bool,
) -> None:
    runs: list[dict[str, Any]] = []
    probe = _AfterModelProbe()
    model = ScriptedChatModel(script=stall_then_call())
    hes = HesitationNodeMiddleware(nudging=OPT_IN)
    middleware: list[Any] = [probe, hes] if probe_first else [hes, probe]
    agent = create_agent(
        model, tools=[make_scheduled_jobs(runs)], middleware=middleware,
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    events = stream(agent, {"messages": [HumanMessage("remind me")]}, config("j"))
    assert [e["action"] for e in events] == ["nudge"] and len(runs) == 1
    assert len(model.recorded) == 3
    assert agent.get_state(config("j")).values["messages"][-1].text == "Scheduled."


def test_the_node_keeps_the_nudge_in_the_history_marked_and_quoting_the_stall() -> None:
    runs: list[dict[str, Any]] = []
    model, agent = jobs_agent(stall_then_call(), runs, "node")
    stream(agent, {"messages": [HumanMessage("remind me about PR 482")]}, config("h"))
    messages = agent.get_state(config("h")).values["messages"]
    (nudge,) = [m for m in messages if is_nudge(m)]
    assert messages.index(nudge) == 1  # right after the user's message, where the stall was
    mark = nudge.additional_kwargs["hesitation_nudge"]
    assert mark["round"] == 1 and mark["stalled"] == SEED_STALL and mark["stalled_message_id"]
    assert SEED_STALL in nudge.text  # the model sees what it said, though it left the history
    # The next user turn starts after the nudge: the nudge is not the user's turn.
    model.script += [say("Anything else is fine.")]
    stream(agent, {"messages": [HumanMessage("thanks")]}, config("h"))
    assert agent.get_state(config("h")).values["messages"][-1].text == "Anything else is fine."
