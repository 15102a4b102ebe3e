"""Scoping in a hand-built StateGraph through the node factories: the default options behave
as in `create_agent`, the state holds every key the middleware writes, and a state that cannot
is refused when the node is made."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Annotated, Any, NotRequired, TypedDict

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware, ExtendedModelResponse, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

from attention_scoping.errors import StateSchemaError
from attention_scoping.graph import (
    ScopedAgentState,
    agent_state,
    check_state_schema,
    make_model_node,
    make_tool_node,
    written_keys,
)
from attention_scoping.middleware import AttentionScopingMiddleware, ScopingState
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import Selection
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import NAVIGATION_ONLY, Ledger
from tests.import_graph import ROOT, modules


def build(
    model: ScriptedChatModel,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    state: type[Any] = ScopedAgentState,
    system_prompt: str | None = None,
) -> Any:
    """The README's hand-built agent: model node, tool node, `tools_condition`, a checkpointer."""
    graph = StateGraph(state)
    graph.add_node(
        "model",
        make_model_node(
            model, middleware=middleware, system_prompt=system_prompt, state_schema=state
        ),
    )
    graph.add_node("tools", make_tool_node(middleware=middleware, state_schema=state))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=InMemorySaver())


def thread(name: str, limit: int = 25) -> RunnableConfig:
    return {"configurable": {"thread_id": name}, "recursion_limit": limit}


def errors(messages: Sequence[BaseMessage]) -> dict[str, str]:
    return {
        m.tool_call_id: json.loads(str(m.content))["error"]
        for m in messages
        if isinstance(m, ToolMessage) and m.status == "error"
    }


# -- a close call: the matching reads of several scopes, unscoped --------------------------


class CloseCall:
    """A selector for which `reverse` and `add` match and no scope leads."""

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        return Selection(None, "close_call", {"text": 0.6, "math": 0.58}, ("reverse", "add"))


def calls_reverse_until_answered(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """A model that calls the offered `reverse` until a result comes back, as a real one does."""
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.status != "error":
        return say(f"reversed: {last.content}")
    if "reverse" not in tools:
        return say("I cannot reverse that.")
    return calls(tool_call("reverse", {"text": "abc"}, f"c{len(messages)}"))


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_a_close_call_read_runs_once_without_opening_its_scope(
    scopes: list[Scope], ledger: Ledger, run: str
) -> None:
    """The reads a close call shows stay in view for the turn and run when called; code opens
    no scope, so nothing else comes into view."""
    scoping = AttentionScopingMiddleware(scopes, selector=CloseCall())
    model = ScriptedChatModel(policy=calls_reverse_until_answered)
    app = build(model, [scoping])
    message = {"messages": [HumanMessage("reverse abc, then add 1 and 2")]}
    config = thread("loop", limit=12)
    result = app.invoke(message, config) if run == "sync" else await app.ainvoke(message, config)
    assert result["scope_selection"]["reason"] == "close_call"
    assert model.recorded[0]["tools"] == ["load_context", "add", "reverse"]
    assert model.recorded[1]["tools"] == model.recorded[0]["tools"]
    assert errors(result["messages"]) == {}
    assert ledger.ran == [("reverse", {"text": "abc"})]
    assert len(model.recorded) == 2
    assert result.get("active_context") is None
    assert result["messages"][-1].content == "reversed: cba"


def test_the_graph_runs_every_turn_as_create_agent_does(
    scopes: list[Scope], ledger: Ledger
) -> None:
    """Four turns under the defaults (the lexical selector): a selected scope,
    a new request that changes it, an off-topic message that keeps it, a close call while a
    scope is active. The graph shows the model the same tools and prompts, runs the same tools,
    refuses the same calls and ends each turn in the same state as `create_agent`."""
    turns = [
        ("multiply 6 by 7", [calls(tool_call("multiply", {"a": 6, "b": 7}, "c1")), say("42")]),
        (
            "now reverse the text abc",
            [calls(tool_call("reverse", {"text": "abc"}, "c2")), say("cba")],
        ),
        (
            "hello there",
            [calls(tool_call("shout", {"text": "hi"}, "c3")), say("HI")],
        ),
        (
            "reverse 12 and add 3",
            [calls(tool_call("add", {"a": 21, "b": 3}, "c4")), say("24")],
        ),
    ]
    script = [step for _, steps in turns for step in steps]
    runs: dict[str, tuple[ScriptedChatModel, list[dict[str, Any]], list[str]]] = {}
    for form in ("create_agent", "graph"):
        ledger.ran.clear()
        model = ScriptedChatModel(script=list(script))
        scoping = AttentionScopingMiddleware(scopes)
        app = (
            create_agent(model, middleware=[scoping], checkpointer=InMemorySaver())
            if form == "create_agent"
            else build(model, [scoping])
        )
        states = []
        for text, _ in turns:
            result = app.invoke({"messages": [HumanMessage(text)]}, thread(form))
            states.append(
                {"active_context": result.get("active_context")}
                | {
                    "opened_by": (result.get("scope_opened") or {}).get("by"),
                    "reason": result["scope_selection"]["reason"],
                    "errors": errors(result["messages"]),
                }
            )
        runs[form] = (model, states, ledger.names())
    agent_model, agent_states, agent_ran = runs["create_agent"]
    graph_model, graph_states, graph_ran = runs["graph"]
    assert [r["tools"] for r in graph_model.recorded] == [r["tools"] for r in agent_model.recorded]
    assert [r["system"] for r in graph_model.recorded] == [
        r["system"] for r in agent_model.recorded
    ]
    assert graph_states == agent_states
    assert graph_ran == agent_ran
    assert graph_states[0]["active_context"] == "math"  # pre-selected on the first call
    assert graph_states[1]["active_context"] == "text"  # a new request changed scope
    assert "multiply" in graph_ran and "reverse" in graph_ran


# -- navigation-only mode ------------------------------------------------------------------

NAVIGATION_SCRIPT = [
    calls(tool_call("add", {"a": 1, "b": 2}, "c1")),  # hidden: no scope yet
    calls(
        tool_call("load_context", {"name": "math"}, "c2"),
        tool_call("multiply", {"a": 6, "b": 7}, "c3"),  # same step as the switch
    ),
    calls(tool_call("multiply", {"a": 6, "b": 7}, "c4")),
    say("42"),
]


LAYERED_NAVIGATION: dict[str, Any] = {**NAVIGATION_ONLY, "layout": "layered"}
"""Navigation-only mode with the module in the system prompt (what `check_navigation` reads)."""


def check_navigation(model: ScriptedChatModel, result: dict[str, Any], ledger: Ledger) -> None:
    assert [r["tools"] for r in model.recorded] == [
        ["load_context"],
        ["load_context"],
        ["load_context", "add", "multiply"],
        ["load_context", "add", "multiply"],
    ]
    assert "Be brief." in model.recorded[0]["system"]
    assert "# Active context: math" in model.recorded[2]["system"]
    assert errors(result["messages"]) == {
        "c1": "tool_not_in_context",
        "c3": "context_switched_in_same_step",
    }
    assert ledger.ran == [("multiply", {"a": 6, "b": 7})]
    assert result["active_context"] == "math"


def test_navigation_only_mode_in_a_graph_sync(scopes: list[Scope], ledger: Ledger) -> None:
    """About navigation-only mode (`NAVIGATION_ONLY`): the model finds its scope with
    `load_context`; a hidden tool and a call in the switching step are refused."""
    model = ScriptedChatModel(script=list(NAVIGATION_SCRIPT))
    app = build(
        model, [AttentionScopingMiddleware(scopes, **LAYERED_NAVIGATION)], system_prompt="Be brief."
    )
    result = app.invoke({"messages": [HumanMessage("6*7")]}, thread("g1"))
    check_navigation(model, result, ledger)
    # The scope persists in the checkpoint for the next turn.
    model.script.append(say("still math"))
    app.invoke({"messages": [HumanMessage("and now?")]}, thread("g1"))
    assert model.recorded[-1]["tools"] == ["load_context", "add", "multiply"]


async def test_navigation_only_mode_in_a_graph_async(scopes: list[Scope], ledger: Ledger) -> None:
    """The same in an async run (navigation-only mode)."""
    model = ScriptedChatModel(script=list(NAVIGATION_SCRIPT))
    app = build(
        model, [AttentionScopingMiddleware(scopes, **LAYERED_NAVIGATION)], system_prompt="Be brief."
    )
    result = await app.ainvoke({"messages": [HumanMessage("6*7")]}, thread("g2"))
    check_navigation(model, result, ledger)


# -- the state schema ----------------------------------------------------------------------


class OldState(TypedDict):
    """The state README gave before: messages and the active scope only."""

    messages: Annotated[list[AnyMessage], add_messages]
    active_context: NotRequired[str | None]


def test_a_state_missing_the_middlewares_keys_fails_when_the_node_is_made(
    scopes: list[Scope],
) -> None:
    scoping = AttentionScopingMiddleware(scopes)
    model = ScriptedChatModel(script=[say("never called")])
    with pytest.raises(StateSchemaError, match=r"the graph state OldState has no key") as bad:
        make_model_node(model, middleware=[scoping], state_schema=OldState)
    text = str(bad.value)
    assert "'scope_opened' (needed by AttentionScopingMiddleware)" in text
    assert "'scope_selection'" in text
    assert "'active_context'" not in text
    assert "ScopedAgentState" in text
    assert isinstance(bad.value, ValueError)
    with pytest.raises(StateSchemaError, match=r"'scope_opened'"):
        make_tool_node(middleware=[scoping], state_schema=OldState)


class Counts(AgentMiddleware[Any, Any, Any]):
    """A middleware with a state key of its own."""

    class State(ScopingState[Any]):
        counted: NotRequired[int]

    state_schema = State


def test_each_middlewares_keys_are_required(scopes: list[Scope]) -> None:
    """A state with scoping's keys but not another middleware's fails naming that one; a state
    without `messages` fails for any node."""
    model = ScriptedChatModel(script=[say("never called")])
    scoping = AttentionScopingMiddleware(scopes)
    make_model_node(model, middleware=[scoping], state_schema=ScopingState)
    with pytest.raises(StateSchemaError, match=r"'counted' \(needed by Counts\)"):
        make_model_node(model, middleware=[scoping, Counts()], state_schema=ScopingState)

    class NoMessages(TypedDict):
        history: list[AnyMessage]

    with pytest.raises(StateSchemaError, match=r"'messages' \(needed by the node\)"):
        make_model_node(model, state_schema=NoMessages)


class WritesUndeclared(AgentMiddleware[Any, Any, Any]):
    """A middleware writing a key its (default) `state_schema` does not declare."""

    def wrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(
            model_response=handler(request), command=Command(update={"undeclared": 1})
        )


def test_a_write_to_an_undeclared_key_fails_the_run_not_silently() -> None:
    """The build-time check reads `state_schema`s; a write beyond its own declaration is
    caught when the node runs (LangGraph would drop it)."""
    model = ScriptedChatModel(script=[say("hi")])
    app = build(model, [WritesUndeclared()])  # builds: the default schema declares nothing new
    with pytest.raises(StateSchemaError, match=r"wrote 'undeclared', which the graph state"):
        app.invoke({"messages": [HumanMessage("hello")]}, thread("u"))


def test_a_subclass_and_a_built_state_keep_their_own_keys(
    scopes: list[Scope], ledger: Ledger
) -> None:
    class MyState(ScopedAgentState):
        user_id: NotRequired[str]

    class Own(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        user_id: NotRequired[str]

    built = agent_state(Own, AttentionScopingMiddleware, Counts, name="Built")
    check_state_schema(built, [AttentionScopingMiddleware, Counts])  # holds every key
    for state in (MyState, built):
        ledger.ran.clear()
        scoping = AttentionScopingMiddleware(scopes, selector=CloseCall())
        model = ScriptedChatModel(policy=calls_reverse_until_answered)
        app = build(model, [scoping], state=state)
        result = app.invoke(
            {"messages": [HumanMessage("reverse abc")], "user_id": "u1"}, thread("s", limit=12)
        )
        assert result["user_id"] == "u1"
        assert ledger.names() == ["reverse"]
        assert len(result["messages"]) == 4  # add_messages kept: user, call, result, answer


def test_the_graph_module_is_core_only() -> None:
    """The graph module loads no add-on (and no numpy, the gate extra's)."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from attention_scoping.graph import ScopedAgentState\n"
        "print(' '.join(sorted(ScopedAgentState.__annotations__)))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('attention_scoping.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent
    )
    keys, loaded = out.stdout.splitlines()
    assert {"active_context", "scope_opened", "scope_selection", "messages"} <= set(keys.split())
    assert all(m.count(".") == 1 for m in loaded.split())  # top-level core modules only


def shipped_middleware() -> list[type[Any]]:
    """Every `AgentMiddleware` class of the runtime package (its modules that name
    `AgentMiddleware`; a module needing an extra that is not installed is skipped)."""
    for name, path in modules().items():
        if "AgentMiddleware" not in path.read_text():
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    found: list[type[Any]] = []
    todo: list[type[Any]] = [AgentMiddleware]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("attention_scoping.") and sub not in found:
                found.append(sub)
    return found


def test_agent_state_holds_every_key_the_packages_middleware_writes() -> None:
    classes = shipped_middleware()
    assert "AttentionScopingMiddleware" in {c.__name__ for c in classes}
    check_state_schema(agent_state(ScopedAgentState, *classes), classes)
    keys = set(written_keys(AttentionScopingMiddleware))
    assert {"messages", "active_context", "scope_opened", "scope_selection"} <= keys
