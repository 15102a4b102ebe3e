"""Manifests and two-phase writes in real agents (create_agent, scripted models)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.safety import (
    Capability,
    CapabilityManifest,
    IntentGuard,
    IntentStatus,
    ManifestConfigError,
    ManifestMiddleware,
    create_manifest_agent,
    manifest_scope,
    manifest_tools,
)
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.manifest_agent_support import bodies, last_body, two_phase
from tests.safety_support import (
    COMMENT_SCHEMA,
    FakeClock,
    Tracker,
    deploy_manifest,
    make_guard,
    repo_manifest,
)


@pytest.fixture
def guard(clock: FakeClock) -> IntentGuard:
    return make_guard(clock)


def worker(model: ScriptedChatModel, tracker: Tracker, guard: IntentGuard, **kw: Any) -> Any:
    return create_manifest_agent(model, [repo_manifest(tracker)], guard=guard, **kw)


def run(agent: Any, **kw: Any) -> dict[str, Any]:
    result: dict[str, Any] = agent.invoke(
        {"messages": [HumanMessage("label issue 1 as bug")]}, **kw
    )
    return result


def test_two_phase_write_through_an_agent(tracker: Tracker, guard: IntentGuard) -> None:
    model = ScriptedChatModel(policy=two_phase("repo__add_label", {"issue": 1, "label": "bug"}))
    result = run(worker(model, tracker, guard), context={"account": "acme"})
    (preview, executed) = bodies(result)
    assert preview[1] == "success" and preview[2]["status"] == "confirmation_required"
    assert preview[2]["preview"] == {"issue": 1, "labels_before": [], "labels_after": ["bug"]}
    assert "confirmation_code" in preview[2]["next_step"]
    assert executed[1] == "success" and executed[2]["status"] == "executed"
    assert executed[2]["affected_ids"] == ["issue/1"]
    assert executed[2]["intent_sha256"] == preview[2]["intent_sha256"]
    assert tracker.mutations == [("add_label", {"issue": 1, "label": "bug"})]
    tm = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
    assert tm.artifact["intent"]["status"] == "succeeded"
    record = guard.record(tm.artifact["intent"]["intent_id"])
    assert record is not None and record.intent.account == "acme"
    assert result["messages"][-1].content == "final: executed"
    assert "two steps" in (model.recorded[0]["system"] or "")


def test_changed_arguments_on_confirmation_are_refused(
    tracker: Tracker, guard: IntentGuard
) -> None:
    policy = two_phase(
        "repo__add_label", {"issue": 1, "label": "bug"}, confirm_with={"issue": 2, "label": "bug"}
    )
    result = run(worker(ScriptedChatModel(policy=policy), tracker, guard))
    _, refused = bodies(result)
    assert refused[1] == "error" and refused[2]["error"] == "confirmation_intent_mismatch"
    assert "without confirmation_code" in refused[2]["next_step"]
    assert tracker.mutations == []


def test_expired_and_reused_codes_are_refused(
    tracker: Tracker, guard: IntentGuard, clock: FakeClock
) -> None:
    codes: list[str] = []

    def policy(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        step = sum(isinstance(m, ToolMessage) for m in messages)
        args = {"issue": 1, "body": "on it"}
        if step == 0:
            return calls(tool_call("repo__comment", args))
        body = last_body(messages)
        if step == 1:
            codes.append(body["confirmation_code"])
            clock.advance(301)  # the model dawdled past the code's lifetime
            return calls(tool_call("repo__comment", {**args, "confirmation_code": codes[0]}))
        if step == 2:
            assert body["error"] == "confirmation_expired"
            return calls(tool_call("repo__comment", args))
        if step == 3:
            codes.append(body["confirmation_code"])
            return calls(tool_call("repo__comment", {**args, "confirmation_code": codes[1]}))
        if step == 4:
            assert body["status"] == "executed"
            return calls(tool_call("repo__comment", {**args, "confirmation_code": codes[1]}))
        return say("done")

    result = run(worker(ScriptedChatModel(policy=policy), tracker, guard))
    errors = [b["error"] for _, status, b in bodies(result) if status == "error"]
    assert errors == ["confirmation_expired", "confirmation_replayed"]
    assert tracker.issues[1]["comments"] == ["on it"]


def test_duplicate_of_a_recent_change_is_refused(tracker: Tracker, guard: IntentGuard) -> None:
    args = {"issue": 2, "body": "duplicate of #1"}
    for _ in range(2):
        model = ScriptedChatModel(policy=two_phase("repo__comment", args))
        result = run(worker(model, tracker, guard))
    (refused,) = bodies(result)
    assert refused[2]["error"] == "duplicate_intent"
    assert refused[2]["previous"]["status"] == "succeeded"
    assert "already done" in refused[2]["next_step"]
    assert tracker.issues[2]["comments"] == ["duplicate of #1"]


def test_preflight_refusal_reaches_the_model(tracker: Tracker, guard: IntentGuard) -> None:
    model = ScriptedChatModel(policy=two_phase("repo__add_label", {"issue": 2, "label": "perf"}))
    (refused,) = bodies(run(worker(model, tracker, guard)))
    assert refused[2]["error"] == "preflight_refused" and refused[2]["field"] == "label"
    assert "already has label 'perf'" in refused[2]["message"]


def test_timeout_is_reconciled_not_retried(tracker: Tracker, guard: IntentGuard) -> None:
    tracker.timeout_next = True
    model = ScriptedChatModel(policy=two_phase("repo__comment", {"issue": 1, "body": "shipped"}))
    _, settled = bodies(run(worker(model, tracker, guard)))
    assert settled[2]["status"] == "executed" and settled[2]["reconciled"] is True
    assert "reconciliation found it was applied" in settled[2]["message"]
    assert tracker.issues[1]["comments"] == ["shipped"]  # applied once, not retried


def test_unreconciled_timeout_blocks_the_same_change(tracker: Tracker, guard: IntentGuard) -> None:
    tracker.timeout_next = True
    manifest = repo_manifest(tracker, reconcile=False)
    args = {"issue": 1, "body": "shipped"}
    model = ScriptedChatModel(policy=two_phase("repo__comment", args))
    agent = create_manifest_agent(model, [manifest], guard=guard)
    _, unknown = bodies(run(agent))
    assert unknown[1] == "error" and unknown[2]["error"] == "outcome_unknown"
    assert "Do not call it again" in unknown[2]["next_step"]
    model2 = ScriptedChatModel(policy=two_phase("repo__comment", args))
    (blocked,) = bodies(run(create_manifest_agent(model2, [manifest], guard=guard)))
    assert blocked[2]["error"] == "unresolved_intent"
    assert len(tracker.mutations) == 1
    (pending,) = guard.unresolved()
    assert pending.status is IntentStatus.OUTCOME_UNKNOWN


def test_code_does_not_cross_accounts(tracker: Tracker, guard: IntentGuard) -> None:
    args = {"issue": 1, "label": "bug"}
    model = ScriptedChatModel(script=[calls(tool_call("repo__add_label", args)), say("ok")])
    first = run(worker(model, tracker, guard), context={"account": "acme"})
    code = bodies(first)[0][2]["confirmation_code"]
    thief = ScriptedChatModel(
        script=[
            calls(tool_call("repo__add_label", {**args, "confirmation_code": code})),
            say("ok"),
        ]
    )
    (refused,) = bodies(run(worker(thief, tracker, guard), context={"account": "mallory"}))
    assert refused[2]["error"] == "confirmation_intent_mismatch"
    assert tracker.mutations == []


def test_invalid_arguments_name_the_field(tracker: Tracker, guard: IntentGuard) -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("repo__add_label", {"issue": "one", "label": "bug"})),
            calls(tool_call("repo__add_label", {"issue": 1, "label": "wontfix"})),
            calls(tool_call("repo__get_issue", {})),
            say("sorry"),
        ]
    )
    errors = [b for _, status, b in bodies(run(worker(model, tracker, guard))) if status == "error"]
    assert [(e["error"], e["field"]) for e in errors] == [
        ("invalid_arguments", "issue"),
        ("invalid_arguments", "label"),
        ("invalid_arguments", "issue"),
    ]
    assert "'label' must be one of" in errors[1]["message"]
    assert tracker.mutations == [] and tracker.reads == []


def test_worker_sees_and_runs_only_its_manifests(tracker: Tracker, guard: IntentGuard) -> None:
    deployed: list[str] = []
    ran: list[str] = []

    @tool
    def shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "ran"

    class Extras(AgentMiddleware):  # a middleware that brings its own tools
        def __init__(self) -> None:
            super().__init__()
            self.tools = [shell, *manifest_tools(deploy_manifest(deployed))]

    model = ScriptedChatModel(
        script=[
            calls(
                tool_call("shell", {"command": "rm -rf /"}),
                tool_call("deploy__release", {"version": "9.9"}),
                tool_call("repo__delete_issue", {"issue": 1}),
                tool_call("repo__get_isue", {"issue": 1}),
            ),
            say("ok"),
        ]
    )
    result = run(worker(model, tracker, guard, middleware=[Extras()]))
    assert model.recorded[0]["tools"] == ["repo__get_issue", "repo__add_label", "repo__comment"]
    errors = {name: b for name, status, b in bodies(result) if status == "error"}
    assert errors["shell"]["error"] == "tool_not_in_manifest"
    assert errors["deploy__release"]["error"] == "tool_not_in_manifest"
    assert "deploy__release" not in errors["shell"]["available_tools"]
    assert errors["repo__delete_issue"]["error"] == "unknown_tool"
    assert "did you mean 'repo__get_issue'" in errors["repo__get_isue"]["message"]
    assert ran == [] and deployed == [] and tracker.reads == []


def test_allow_lets_one_foreign_tool_through(tracker: Tracker, guard: IntentGuard) -> None:
    @tool
    def now() -> str:
        """The current time."""
        return "12:00"

    class Extras(AgentMiddleware):
        def __init__(self) -> None:
            super().__init__()
            self.tools = [now]

    model = ScriptedChatModel(script=[calls(tool_call("now", {})), say("ok")])
    result = run(worker(model, tracker, guard, middleware=[Extras()], allow=["now"]))
    assert "now" in model.recorded[0]["tools"]
    assert bodies(result)[0][2] == {"text": "12:00"}


def test_configuration_errors(tracker: Tracker) -> None:
    with pytest.raises(ManifestConfigError, match="need two-phase confirmation"):
        ManifestMiddleware([repo_manifest(tracker)])
    with pytest.raises(ManifestConfigError, match="do not pass tools="):
        create_manifest_agent(ScriptedChatModel(), [repo_manifest(tracker)], tools=[])


def test_async_agent_with_async_handlers(clock: FakeClock) -> None:
    posted: list[str] = []

    async def post(channel: str, text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        posted.append(text)
        return {"channel": channel, "ts": len(posted)}

    async def preview(channel: str, text: str) -> dict[str, Any]:
        return {"channel": channel, "will_post": text}

    schema = {
        "type": "object",
        "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
        "required": ["channel", "text"],
    }
    chat = CapabilityManifest(
        "chat",
        [
            Capability(
                "post",
                "Post a message.",
                schema,
                post,
                write=True,
                target="channel",
                preflight=preview,
            )
        ],
    )
    guard = make_guard(clock)
    args = {"channel": "ops", "text": "deploy done"}
    agent = create_manifest_agent(
        ScriptedChatModel(policy=two_phase("chat__post", args)), [chat], guard=guard
    )
    result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("tell ops")]}))
    preview_body, executed = (b for _, _, b in bodies(result))
    assert preview_body["preview"] == {"channel": "ops", "will_post": "deploy done"}
    assert executed["result"] == {"channel": "ops", "ts": 1} and posted == ["deploy done"]

    sync_agent = create_manifest_agent(
        ScriptedChatModel(script=[calls(tool_call("chat__post", args)), say("ok")]),
        [chat],
        guard=guard,
    )
    (refused,) = bodies(sync_agent.invoke({"messages": [HumanMessage("tell ops")]}))
    assert refused[2]["error"] == "async_tool_in_sync_run" and posted == ["deploy done"]


def test_manifests_as_scopes_with_attention_scoping(tracker: Tracker, guard: IntentGuard) -> None:
    deployed: list[str] = []
    repo, deploy = repo_manifest(tracker), deploy_manifest(deployed)
    steps = iter(
        [
            calls(tool_call("load_context", {"name": "repo"})),
            calls(tool_call("repo__add_label", {"issue": 1, "label": "docs"})),
        ]
    )

    def policy(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        step = next(steps, None)
        if step is not None:
            return step
        body = last_body(messages)
        if body.get("status") == "confirmation_required":
            args = {"issue": 1, "label": "docs", "confirmation_code": body["confirmation_code"]}
            return calls(tool_call("repo__add_label", args))
        return say("done")

    model = ScriptedChatModel(policy=policy)
    agent = create_agent(
        model,
        middleware=list[Any](
            [
                AttentionScopingMiddleware(
                    [manifest_scope(repo), manifest_scope(deploy)], selector=None
                ),
                ManifestMiddleware([repo, deploy], guard=guard, exclusive=False),
            ]
        ),
    )
    result = agent.invoke({"messages": [HumanMessage("label issue 1 docs")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert model.recorded[1]["tools"] == [
        "load_context",
        "repo__get_issue",
        "repo__add_label",
        "repo__comment",
    ]
    statuses = [b.get("status") for _, _, b in bodies(result)]
    assert statuses == ["ok", "confirmation_required", "executed"]
    assert tracker.issues[1]["labels"] == ["docs"] and deployed == []
    assert result["active_context"] == "repo"


def test_scoping_gate_still_refuses_other_scopes_tools(
    tracker: Tracker, guard: IntentGuard
) -> None:
    deployed: list[str] = []
    repo, deploy = repo_manifest(tracker), deploy_manifest(deployed)
    model = ScriptedChatModel(
        script=[calls(tool_call("deploy__release", {"version": "1"})), say("ok")]
    )
    agent = create_agent(
        model,
        middleware=list[Any](
            [
                AttentionScopingMiddleware(
                    [manifest_scope(repo), manifest_scope(deploy)],
                    default_scope="repo",
                    selector=None,
                ),
                ManifestMiddleware([repo, deploy], guard=guard, exclusive=False),
            ]
        ),
    )
    (refused,) = bodies(agent.invoke({"messages": [HumanMessage("ship it")]}))
    assert refused[2]["error"] == "tool_not_in_context" and deployed == []


def test_comment_schema_is_what_the_model_gets(tracker: Tracker, guard: IntentGuard) -> None:
    model = ScriptedChatModel(script=[say("hi")])
    run(worker(model, tracker, guard))
    schemas = {s["function"]["name"]: s["function"] for s in model.recorded[0]["schemas"]}
    params = schemas["repo__comment"]["parameters"]
    assert params["required"] == COMMENT_SCHEMA["required"]
    assert set(params["properties"]) == {"issue", "body", "confirmation_code"}


def test_empty_confirmation_code_is_a_first_call(tracker: Tracker, guard: IntentGuard) -> None:
    args = {"issue": 1, "label": "bug", "confirmation_code": ""}
    model = ScriptedChatModel(script=[calls(tool_call("repo__add_label", args)), say("ok")])
    (preview,) = bodies(run(worker(model, tracker, guard)))
    assert preview[2]["status"] == "confirmation_required" and tracker.mutations == []


def test_hand_built_graph_with_the_same_middleware(tracker: Tracker, guard: IntentGuard) -> None:
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import tools_condition

    from attention_scoping.graph import ScopedAgentState, make_model_node, make_tool_node

    binding = ManifestMiddleware([repo_manifest(tracker)], guard=guard)
    model = ScriptedChatModel(policy=two_phase("repo__add_label", {"issue": 1, "label": "bug"}))
    graph = StateGraph(ScopedAgentState)
    graph.add_node(
        "model", make_model_node(model, middleware=[binding], state_schema=ScopedAgentState)
    )
    graph.add_node("tools", make_tool_node(middleware=[binding], state_schema=ScopedAgentState))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    result = graph.compile().invoke({"messages": [HumanMessage("label issue 1 as bug")]})
    statuses = [b.get("status") for _, _, b in bodies(result)]
    assert statuses == ["confirmation_required", "executed"]
    assert model.recorded[0]["tools"] == ["repo__get_issue", "repo__add_label", "repo__comment"]
    assert tracker.mutations == [("add_label", {"issue": 1, "label": "bug"})]
