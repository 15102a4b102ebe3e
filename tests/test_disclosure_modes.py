"""The disclosure modes on their own: what each sends for a visible set, how `"auto"` resolves,
and the configuration errors (offline, no server)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from attention_scoping import (
    AttentionScopingMiddleware,
    Scope,
    SummaryPool,
    ToolAttentionMiddleware,
)
from attention_scoping.disclosure import DisclosureSetting, auto_mode, resolve_disclosure
from attention_scoping.disclosure.allowed_tools import AllowedToolsDisclosure
from attention_scoping.disclosure.anthropic import MAX_DEFERRED, AnthropicDisclosure
from attention_scoping.disclosure.rewrite import RewriteDisclosure
from attention_scoping.testing import ScriptedChatModel, say
from tests.disclosure_support import make_scopes, make_tools

ANTHROPIC = ChatAnthropic(model="claude-stub", api_key=SecretStr("k"))  # type: ignore[call-arg]
OPENAI = ChatOpenAI(model="stub-model", api_key=SecretStr("k"))
RESPONSES = ChatOpenAI(model="stub-model", api_key=SecretStr("k"), use_responses_api=True)
VALID = "one of 'auto', 'rewrite', 'anthropic', 'openai' or 'allowed_tools'"


@pytest.fixture
def tools() -> list[BaseTool]:
    return list(make_tools([]).values())


def names(tools: list[Any]) -> list[str]:
    return [t.name if isinstance(t, BaseTool) else t["name"] for t in tools]


def test_auto_follows_the_chat_model_class() -> None:
    assert auto_mode(ANTHROPIC) == "anthropic"
    assert auto_mode(RESPONSES) == "openai"
    assert auto_mode(OPENAI) == "rewrite"
    assert auto_mode(ScriptedChatModel(script=[])) == "rewrite"
    assert resolve_disclosure("auto", ANTHROPIC).mode == "anthropic"
    assert resolve_disclosure("auto", OPENAI).mode == "rewrite"
    assert resolve_disclosure("allowed_tools", OPENAI).mode == "allowed_tools"


def test_unknown_modes_fail_at_construction_naming_the_valid_ones() -> None:
    scopes = make_scopes(make_tools([]))
    with pytest.raises(ValueError, match=f"disclosure must be {VALID}, not 'native'"):
        AttentionScopingMiddleware(scopes, disclosure="native")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"disclosure must be {VALID}, not 'claude'"):
        ToolAttentionMiddleware(summary_pool=SummaryPool(disclosure="claude"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"disclosure must be {VALID}, not 'x'"):
        resolve_disclosure("x", OPENAI)


def test_more_scoped_tools_than_anthropic_defers_fail_at_construction() -> None:
    """Scoping knows its tools when it is made: with `disclosure="anthropic"` and more scoped
    tools than the API defers, the error comes then, naming the count, the limit and the modes
    that fit; always-on tools are sent loaded and do not count; `"auto"` is checked at the first
    call (the chat model picks the mode)."""
    names = [f"tool_{i}" for i in range(MAX_DEFERRED + 1)]
    with pytest.raises(ValueError, match=r"disclosure='anthropic' would defer 10001 tools") as err:
        AttentionScopingMiddleware({"big": names}, disclosure="anthropic")
    assert "at most 10000" in str(err.value) and "'rewrite'" in str(err.value)
    assert "'anthropic'" not in str(err.value).split("use ", 1)[1]
    AttentionScopingMiddleware({"big": names}, always_on=[names[0]], disclosure="anthropic")
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    pinned = StructuredTool(
        name=names[0],
        description="A tool.",
        args_schema=schema,
        func=str,
        metadata={"pinned": True},
    )
    AttentionScopingMiddleware([Scope("big", tools=[pinned, *names[1:]])], disclosure="anthropic")
    AttentionScopingMiddleware({"big": names}, disclosure="auto")
    AttentionScopingMiddleware({"big": names}, disclosure="openai")


def test_a_gate_given_more_tools_than_anthropic_defers_fails_at_construction() -> None:
    """The gate knows its tools when they are given to it (`tools=`): the same error then;
    pinned tools are sent loaded and do not count."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    many = [
        StructuredTool(name=f"tool_{i}", description="A tool.", args_schema=schema, func=str)
        for i in range(MAX_DEFERRED + 1)
    ]
    pool = SummaryPool(disclosure="anthropic")
    with pytest.raises(ValueError, match=r"disclosure='anthropic' would defer 10001 tools"):
        ToolAttentionMiddleware(ranker="bm25", tools=many, summary_pool=pool)
    ToolAttentionMiddleware(ranker="bm25", tools=many, pinned=["tool_0"], summary_pool=pool)


def test_modes_the_model_cannot_carry_are_value_errors() -> None:
    with pytest.raises(ValueError, match="disclosure='anthropic' cannot be used with ChatOpenAI"):
        resolve_disclosure("anthropic", OPENAI)
    with pytest.raises(
        ValueError, match=r"'allowed_tools' cannot be used with ChatAnthropic: .*OpenAI"
    ):
        resolve_disclosure("allowed_tools", ANTHROPIC)
    with pytest.raises(ValueError, match="disclosure='openai' cannot be used with ChatAnthropic"):
        resolve_disclosure("openai", ANTHROPIC)


def test_the_mode_in_use_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    setting = DisclosureSetting("auto", "Gate")
    with caplog.at_level(logging.INFO, logger="attention_scoping.disclosure.base"):
        for _ in range(3):
            assert setting.for_model(ANTHROPIC).mode == "anthropic"
    assert [r.getMessage() for r in caplog.records] == [
        "Gate: disclosure='auto' -> 'anthropic' for ChatAnthropic"
    ]
    assert setting.last is not None and setting.last.mode == "anthropic"


def test_rewrite_sends_only_the_visible_tools(tools: list[BaseTool]) -> None:
    shaped = RewriteDisclosure().shape(
        tools, visible={"add"}, loaded={"shout"}, tool_choice={"name": "reverse"}
    )
    assert names(shaped.tools) == ["add", "shout"] and shaped.tool_choice == "required"


def test_anthropic_defers_all_but_the_loaded_in_one_order(tools: list[BaseTool]) -> None:
    mode = AnthropicDisclosure()
    one = mode.shape(tools, visible={"add"}, loaded={"shout", "add"})
    two = mode.shape(list(reversed(tools)), visible={"reverse"}, loaded={"add", "shout"})
    assert names(one.tools) == names(two.tools)
    assert names(one.tools)[-2:] == ["add", "shout"]  # loaded last, where a breakpoint goes
    deferred = [t.name for t in one.tools if isinstance(t, BaseTool) and t.extras]
    assert sorted(deferred) == sorted(n for n in names(tools) if n not in {"add", "shout"})
    assert all(t.extras == {"defer_loading": True} for t in one.tools[:-2])  # type: ignore[union-attr]
    # the same tool objects every call, so indexes keyed by identity stay warm
    assert [id(t) for t in one.tools] == [id(t) for t in two.tools]


def test_anthropic_moves_a_breakpoint_off_a_deferred_tool(tools: list[BaseTool]) -> None:
    marked = [*tools[:-1], tools[-1].model_copy(update={"extras": {"cache_control": {"x": 1}}})]
    shaped = AnthropicDisclosure().shape(marked, visible=(), loaded={"add"})
    extras = {t.name: t.extras for t in shaped.tools if isinstance(t, BaseTool)}
    assert extras["add"] == {"cache_control": {"x": 1}}
    assert all("cache_control" not in (e or {}) for n, e in extras.items() if n != "add")


def test_anthropic_tool_choice_names_a_visible_tool_or_becomes_any(tools: list[BaseTool]) -> None:
    mode = AnthropicDisclosure()
    on = {"reverse"}
    assert mode.shape(tools, visible={"add"}, loaded=on, tool_choice="add").tool_choice == "add"
    assert mode.shape(tools, visible={"add"}, loaded=on, tool_choice="shout").tool_choice == "any"


def test_anthropic_refuses_too_many_deferred_or_none_loaded(tools: list[BaseTool]) -> None:
    mode = AnthropicDisclosure()
    many = [{"name": f"t{i}", "defer_loading": True} for i in range(MAX_DEFERRED + 1)]
    with pytest.raises(ValueError, match="would defer 10001 tools; Anthropic accepts at most"):
        mode.check([*many, tools[0]], loaded={tools[0].name})
    mode.check([*many[:MAX_DEFERRED], tools[0]], loaded={tools[0].name})
    with pytest.raises(ValueError, match="needs at least one tool that is not deferred"):
        mode.shape(tools, visible=(), loaded=())


def test_anthropic_discloses_and_reads_back_tool_references() -> None:
    mode = AnthropicDisclosure()
    content = mode.content(["add", "shout"], "module text")
    assert content == [
        {"type": "tool_reference", "tool_name": "add"},
        {"type": "tool_reference", "tool_name": "shout"},
        {"type": "text", "text": "module text"},
    ]
    history = [
        HumanMessage("hi"),
        ToolMessage(content, tool_call_id="a"),
        HumanMessage([{"type": "tool_result", "tool_use_id": "b", "content": [
            {"type": "tool_reference", "tool_name": "reverse"}]}]),
        ToolMessage("plain", tool_call_id="c"),
    ]  # fmt: skip
    assert mode.disclosed(history) == {"add", "shout", "reverse"}
    pair = mode.announce(["add"], tool="load_context", args={"name": "math"}, call_id="x")
    assert [m.type for m in pair] == ["ai", "tool"]
    assert pair[1].content == [{"type": "tool_reference", "tool_name": "add"}]
    assert AllowedToolsDisclosure().announce(["add"], tool="t", args={}, call_id="x") == []


def test_allowed_tools_in_both_openai_spellings(tools: list[BaseTool]) -> None:
    chat = resolve_disclosure("allowed_tools", OPENAI)
    shaped = chat.shape(tools, visible={"shout", "add"}, loaded={"reverse"})
    assert names(shaped.tools) == ["reverse", *sorted(n for n in names(tools) if n != "reverse")]
    assert shaped.tool_choice == {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "auto",
            "tools": [
                {"type": "function", "function": {"name": "reverse"}},
                {"type": "function", "function": {"name": "add"}},
                {"type": "function", "function": {"name": "shout"}},
            ],
        },
    }
    responses = resolve_disclosure("allowed_tools", RESPONSES)
    required = responses.shape(tools, visible={"add"}, loaded=(), tool_choice="required")
    assert required.tool_choice == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "add"}],
    }
    assert chat.shape(tools, visible={"add"}, loaded=(), tool_choice="add").tool_choice == "add"
    assert chat.shape(tools, visible=(), loaded=()).tool_choice == "none"


def test_rewrite_events_say_their_mode() -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    model = ScriptedChatModel(script=[say("hi")])
    agent: Any = create_agent(
        model,
        middleware=[
            AttentionScopingMiddleware([Scope("s", "pings", tools=[ping])], default_scope="s")
        ],
    )
    events = list(agent.stream({"messages": [("user", "hi")]}, stream_mode="custom"))
    assert [e["disclosure"] for e in events if e["type"] == "scope"] == ["rewrite"]
    assert model.recorded[0]["tools"] == ["load_context", "ping"]
