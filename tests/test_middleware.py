"""AttentionScopingMiddleware in create_agent, driven by a scripted model that records each call."""

from __future__ import annotations

import json
import logging
from typing import Any, cast

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.errors import ScopeConfigError, UnknownScopeError
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.prompt import build_layers
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.conftest import NAVIGATION_ONLY, Ledger


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def payload(message: ToolMessage) -> dict[str, Any]:
    return json.loads(message.content)  # type: ignore[arg-type]


def run(scopes: list[Scope], script: list[Any], **kwargs: Any) -> tuple[ScriptedChatModel, dict]:
    model = ScriptedChatModel(script=script)
    agent = create_agent(
        model,
        system_prompt=kwargs.pop("system_prompt", None),
        middleware=[
            AttentionScopingMiddleware(
                scopes, **{"layout": "layered", **NAVIGATION_ONLY, **kwargs.pop("mw", {})}
            )
        ],
    )
    # The middleware's state keys (e.g. active_context) are agent input at run time; the
    # agent's static input type names only `messages`.
    result = agent.invoke(cast(Any, {"messages": [HumanMessage("go")], **kwargs}))
    return model, result


def math_then_text() -> list[Any]:
    """Load math, multiply, load text, answer: a session that switches scope once."""
    return [
        calls(tool_call("load_context", {"name": "math"}, "c1")),
        calls(tool_call("multiply", {"a": 47, "b": 83}, "c2")),
        calls(tool_call("load_context", {"name": "text"}, "c3")),
        say("done"),
    ]


def test_tools_per_call_before_and_after_load_context(scopes: list[Scope], ledger: Ledger) -> None:
    model, result = run(scopes, math_then_text())
    assert [r["tools"] for r in model.recorded] == [
        ["load_context"],
        ["load_context", "add", "multiply"],
        ["load_context", "add", "multiply"],
        ["load_context", "shout", "reverse"],
    ]
    assert result["active_context"] == "text"
    assert ledger.names() == ["multiply"]
    crumb = payload(tool_messages(result)[0])
    assert crumb["active_context"] == "math" and crumb["previous_context"] is None
    assert crumb["tools_now_available"] == ["add", "multiply", "load_context"]
    assert "next_step" in crumb
    assert payload(tool_messages(result)[2])["previous_context"] == "math"


def test_load_context_schema_enumerates_scopes(scopes: list[Scope]) -> None:
    model, _ = run(scopes, [say("hi")])
    (schema,) = model.recorded[0]["schemas"]
    params = schema["function"]["parameters"]
    assert params["properties"]["name"]["enum"] == ["math", "text"]
    assert params["required"] == ["name"]
    assert set(params["properties"]) == {"name"}  # injected arguments stay hidden
    # With a single scope the schema is still an enum (pydantic alone would emit `const`).
    model, _ = run(scopes[:1], [say("hi")])
    name = model.recorded[0]["schemas"][0]["function"]["parameters"]["properties"]["name"]
    assert name["enum"] == ["math"] and "const" not in name


def test_three_prompt_layers_per_scope_and_stable_prefix(scopes: list[Scope]) -> None:
    model, _ = run(
        scopes,
        [calls(tool_call("load_context", {"name": "math"}, "c1")), say("ok")],
        system_prompt="You are Ada, a terse assistant.",
    )
    first, second = (r["system"] for r in model.recorded)
    for prompt in (first, second):
        assert prompt.startswith("# Capabilities")
        assert "- math: integer arithmetic" in prompt and "- text: string transformations" in prompt
        assert "You are Ada, a terse assistant." in prompt  # user's prompt kept in the core
        order = [prompt.index(s) for s in ("# Core", "You are Ada", "# Active context")]
        assert order == sorted(order)
    assert "# Active context: none" in first
    assert "# Active context: math\nUse add and multiply for arithmetic." in second
    assert "Use shout and reverse" not in second  # other modules stay out
    prefix = first[: first.index("# Active context")]
    assert second.startswith(prefix)  # only the module layer changed: cache-friendly


def test_unknown_scope_is_refused_with_valid_scopes(scopes: list[Scope]) -> None:
    model, result = run(
        scopes, [calls(tool_call("load_context", {"name": "maths"}, "c1")), say("sorry")]
    )
    (msg,) = tool_messages(result)
    assert msg.status == "error"
    body = payload(msg)
    assert body["error"] == "unknown_context"
    assert body["valid_contexts"] == ["math", "text"]
    assert "did you mean 'math'" in body["message"]
    assert result.get("active_context") is None
    assert model.recorded[1]["tools"] == ["load_context"]


def test_hidden_tool_is_refused_and_never_executed(scopes: list[Scope], ledger: Ledger) -> None:
    _, result = run(
        scopes,
        [
            calls(tool_call("load_context", {"name": "math"}, "c1")),
            calls(tool_call("shout", {"text": "hi"}, "c2")),
            say("ok"),
        ],
    )
    refusal = tool_messages(result)[1]
    assert refusal.status == "error" and refusal.tool_call_id == "c2"
    body = payload(refusal)
    assert body["error"] == "tool_not_in_context"
    assert body["available_tools"] == ["load_context", "add", "multiply"]
    assert body["contexts"] == ["text"]
    assert "call load_context('text') first, then shout" in body["next_step"]
    assert ledger.ran == []
    assert result["active_context"] == "math"


def test_invented_tool_is_refused_without_listing_hidden_tools(
    scopes: list[Scope], ledger: Ledger
) -> None:
    _, result = run(
        scopes,
        [
            calls(tool_call("load_context", {"name": "math"}, "c1")),
            calls(tool_call("ad", {"a": 1, "b": 2}, "c2")),
            say("ok"),
        ],
    )
    body = payload(tool_messages(result)[1])
    assert body["error"] == "unknown_tool"
    assert "did you mean 'add'" in body["message"]
    assert "shout" not in json.dumps(body) and "reverse" not in json.dumps(body)
    assert ledger.ran == []


def test_parallel_load_context_and_new_scope_tool(scopes: list[Scope], ledger: Ledger) -> None:
    model, result = run(
        scopes,
        [
            calls(
                tool_call("load_context", {"name": "text"}, "c1"),
                tool_call("shout", {"text": "bonjour"}, "c2"),
            ),
            calls(tool_call("shout", {"text": "bonjour"}, "c3")),
            say("BONJOUR"),
        ],
    )
    by_id = {m.tool_call_id: m for m in tool_messages(result)}
    assert by_id["c1"].status == "success"
    assert by_id["c2"].status == "error"
    body = payload(by_id["c2"])
    assert body["error"] == "context_switched_in_same_step"
    assert body["next_step"] == "Now that the context is loaded, call shout again."
    assert by_id["c3"].content == "BONJOUR"
    assert ledger.names() == ["shout"]  # only the retried call ran
    assert model.recorded[1]["tools"] == ["load_context", "shout", "reverse"]


def test_two_switches_in_one_step_keep_the_first(scopes: list[Scope]) -> None:
    _, result = run(
        scopes,
        [
            calls(
                tool_call("load_context", {"name": "math"}, "c1"),
                tool_call("load_context", {"name": "text"}, "c2"),
            ),
            say("ok"),
        ],
    )
    by_id = {m.tool_call_id: m for m in tool_messages(result)}
    assert by_id["c1"].status == "success"
    assert payload(by_id["c2"])["error"] == "one_context_per_step"
    assert result["active_context"] == "math"


def test_tool_of_current_scope_runs_beside_a_switch(scopes: list[Scope], ledger: Ledger) -> None:
    _, result = run(
        scopes,
        [
            calls(
                tool_call("add", {"a": 2, "b": 3}, "c2"),
                tool_call("load_context", {"name": "text"}, "c3"),
            ),
            say("5"),
        ],
        active_context="math",
    )
    assert ledger.names() == ["add"]
    assert result["active_context"] == "text"


def test_active_context_from_input_and_default_scope(scopes: list[Scope]) -> None:
    model, _ = run(scopes, [say("hi")], active_context="text")
    assert model.recorded[0]["tools"] == ["load_context", "shout", "reverse"]
    model, result = run(scopes, [say("hi")], mw={"default_scope": "math"})
    assert model.recorded[0]["tools"] == ["load_context", "add", "multiply"]
    assert "# Active context: math" in model.recorded[0]["system"]
    assert result.get("active_context") is None  # the default is not written to state


def test_unknown_active_context_in_input_is_a_clear_error(scopes: list[Scope]) -> None:
    """A state naming no scope (a stale checkpoint, a typo in the input) is an error naming
    the valid scopes, never a silent fallback to some scope."""
    with pytest.raises(UnknownScopeError, match=r"'weather'.*valid scopes: 'math', 'text'"):
        model = ScriptedChatModel(script=[say("hi")])
        agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes)])
        agent.invoke(cast(Any, {"messages": [HumanMessage("go")], "active_context": "weather"}))


def test_always_on_tools_and_unscoped_policy(
    scopes: list[Scope], toolbox: dict[str, BaseTool], ledger: Ledger, caplog: Any
) -> None:
    knowledge = toolbox["get_knowledge"]
    script = [calls(tool_call("get_knowledge", {"topic": "x"}, "c1")), say("ok")]

    model = ScriptedChatModel(script=list(script))
    agent = create_agent(
        model,
        middleware=[AttentionScopingMiddleware(scopes, always_on=[knowledge])],
    )
    agent.invoke({"messages": [HumanMessage("go")]})
    assert model.recorded[0]["tools"] == ["load_context", "get_knowledge"]
    assert ledger.names() == ["get_knowledge"]

    # Registered with the agent but in no scope: hidden (warned once) and refused.
    ledger.ran.clear()
    model = ScriptedChatModel(script=list(script))
    agent = create_agent(
        model, tools=[knowledge], middleware=[AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)]
    )
    with caplog.at_level(logging.WARNING, logger="attention_scoping"):
        result = agent.invoke({"messages": [HumanMessage("go")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert payload(tool_messages(result)[0])["error"] == "unknown_tool"
    assert ledger.ran == []
    assert sum("get_knowledge" in r.message for r in caplog.records) == 1

    # Named in always_on by name, registered with the agent: shown and runnable everywhere.
    model = ScriptedChatModel(script=list(script))
    agent = create_agent(
        model,
        tools=[knowledge],
        middleware=[AttentionScopingMiddleware(scopes, always_on=["get_knowledge"])],
    )
    agent.invoke({"messages": [HumanMessage("go")]})
    assert model.recorded[0]["tools"] == ["load_context", "get_knowledge"]
    assert ledger.names() == ["get_knowledge"]


def test_names_only_scopes_validate_against_registered_tools(
    toolbox: dict[str, BaseTool],
) -> None:
    tools = list(toolbox.values())
    good = AttentionScopingMiddleware({"math": {"add", "multiply"}, "text": {"shout"}})
    model = ScriptedChatModel(script=[calls(tool_call("load_context", {"name": "math"})), say("")])
    create_agent(model, tools=tools, middleware=[good]).invoke({"messages": [HumanMessage("x")]})
    assert model.recorded[1]["tools"] == ["load_context", "add", "multiply"]

    bad = AttentionScopingMiddleware({"math": {"add", "divide"}})
    agent = create_agent(ScriptedChatModel(script=[say("")]), tools=tools, middleware=[bad])
    with pytest.raises(ScopeConfigError, match="unknown tool 'divide'"):
        agent.invoke({"messages": [HumanMessage("x")]})


def test_provider_tool_dicts_pass_through(scopes: list[Scope]) -> None:
    web = {"type": "function", "function": {"name": "web_search", "parameters": {}}}
    model = ScriptedChatModel(script=[say("ok")])
    agent = create_agent(
        model, tools=[web], middleware=[AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)]
    )
    agent.invoke({"messages": [HumanMessage("x")]})
    assert model.recorded[0]["tools"] == ["load_context", "web_search"]


def test_active_context_survives_turns_with_a_checkpointer(
    scopes: list[Scope], ledger: Ledger
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "math"}, "c1")),
            calls(tool_call("add", {"a": 1, "b": 2}, "c2")),
            say("3"),
            calls(tool_call("multiply", {"a": 3, "b": 3}, "c3")),
            say("9"),
        ]
    )
    agent = create_agent(
        model,
        middleware=[AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [HumanMessage("1+2")]}, config)
    second = agent.invoke({"messages": [HumanMessage("times 3")]}, config)
    assert model.recorded[3]["tools"] == ["load_context", "add", "multiply"]  # no re-switch
    assert second["active_context"] == "math"
    assert agent.get_state(config).values["active_context"] == "math"
    assert ledger.names() == ["add", "multiply"]
    # A new thread starts unscoped.
    model.script.append(say("fresh"))
    agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t2"}})
    assert model.recorded[-1]["tools"] == ["load_context"]


async def test_async_invoke_and_stream(scopes: list[Scope], ledger: Ledger) -> None:
    script = [
        calls(tool_call("load_context", {"name": "text"}, "c1")),
        calls(tool_call("reverse", {"text": "abc"}, "c2")),
        calls(tool_call("add", {"a": 1, "b": 1}, "c3")),
        say("cba"),
    ]
    model = ScriptedChatModel(script=list(script))
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)])
    result = await agent.ainvoke({"messages": [HumanMessage("reverse abc")]})
    assert [r["tools"] for r in model.recorded][1] == ["load_context", "shout", "reverse"]
    assert ledger.names() == ["reverse"]
    assert payload(tool_messages(result)[2])["error"] == "tool_not_in_context"

    model = ScriptedChatModel(script=list(script))
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes, **NAVIGATION_ONLY)])
    events: list[dict[str, Any]] = []
    final: dict[str, Any] = {}
    mode: str  # with a list of stream modes, LangGraph yields (mode, chunk) pairs
    chunk: Any
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("reverse abc")]}, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    scope_events = [e for e in events if e["type"] == "scope"]
    assert [e["active_context"] for e in scope_events] == [None, "text", "text", "text"]
    assert scope_events[1]["tools"] == ["load_context", "shout", "reverse"]
    assert scope_events[1]["opened_by"] == "model"
    assert final["active_context"] == "text"
    assert isinstance(final["messages"][-1], AIMessage)


def test_two_named_instances_compose(scopes: list[Scope], toolbox: dict[str, BaseTool]) -> None:
    outer = AttentionScopingMiddleware(scopes, name="outer")
    inner = AttentionScopingMiddleware(
        [Scope("extra", tools=[toolbox["get_knowledge"]])], name="inner"
    )
    assert (outer.name, inner.name) == ("outer", "inner")
    create_agent(ScriptedChatModel(script=[]), middleware=[outer, inner])  # no duplicate-name error


def test_module_in_load_context_keeps_the_system_prompt_byte_identical(
    scopes: list[Scope], ledger: Ledger
) -> None:
    """The stable layout: index, rules and your prompt never change; the scope's module arrives
    in the load_context result, so every call of the session sees the same system prompt."""
    model, result = run(
        scopes,
        math_then_text(),
        system_prompt="You are concise.",
        mw={"layout": "stable"},
    )
    systems = {r["system"] for r in model.recorded}
    assert len(systems) == 1
    (system,) = systems
    assert "You are concise." in system and "Use add and multiply" not in system
    crumbs = [payload(m) for m in tool_messages(result) if m.name == "load_context"]
    assert (
        crumbs[0]["prompt_module"] == "# Active context: math\nUse add and multiply for arithmetic."
    )
    assert crumbs[1]["prompt_module"].startswith("# Active context: text")
    assert [r["tools"] for r in model.recorded][1] == ["load_context", "add", "multiply"]
    assert ledger.names() == ["multiply"]


def test_layered_layout_swaps_the_module_and_bad_values_fail(scopes: list[Scope]) -> None:
    model, result = run(
        scopes,
        [calls(tool_call("load_context", {"name": "math"}, "c1")), say("done")],
    )
    assert "Use add and multiply" in model.recorded[1]["system"]
    assert "prompt_module" not in payload(tool_messages(result)[0])
    with pytest.raises(ScopeConfigError, match=r"layout='messages' is not valid.*'compact'"):
        AttentionScopingMiddleware(scopes, layout="messages")  # type: ignore[arg-type]


def test_compact_layout_is_your_prompt_alone_and_load_context_describes_scopes(
    scopes: list[Scope], ledger: Ledger
) -> None:
    """Compact layout: the system prompt is the user's prompt, unchanged on every call; the
    scopes are described in load_context's schema and the module travels in its result."""
    model, result = run(
        scopes,
        [
            calls(tool_call("load_context", {"name": "math"}, "c1")),
            calls(tool_call("multiply", {"a": 47, "b": 83}, "c2")),
            say("done"),
        ],
        system_prompt="You are concise.",
        mw={"layout": "compact"},
    )
    assert {r["system"] for r in model.recorded} == {"You are concise."}
    schema = model.recorded[0]["schemas"][0]
    assert "math (integer arithmetic); text (string transformations)" in json.dumps(schema)
    (crumb,) = [payload(m) for m in tool_messages(result) if m.name == "load_context"]
    assert crumb["prompt_module"] == "# Active context: math\nUse add and multiply for arithmetic."
    assert [r["tools"] for r in model.recorded][1] == ["load_context", "add", "multiply"]
    assert ledger.names() == ["multiply"]


def test_compact_layout_layers_and_bad_values(scopes: list[Scope]) -> None:
    """Compact (the default) is your prompt alone; the layered layout names no scope
    description in load_context's schema (its index carries them); unknown options fail."""
    compact = AttentionScopingMiddleware(scopes)
    layers = build_layers(compact.catalog, "math", compact.layout, "Be brief.")
    assert (layers.index, layers.core, layers.module) == ("", "Be brief.", "")
    layered = AttentionScopingMiddleware(scopes, layout="layered").tools[0]
    assert "integer arithmetic" not in layered.args["name"]["description"]
    with pytest.raises(ScopeConfigError, match="layout='short' is not valid"):
        AttentionScopingMiddleware(scopes, layout="short")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prompt_layout"):
        AttentionScopingMiddleware(scopes, prompt_layout="compact")  # type: ignore[call-arg]
