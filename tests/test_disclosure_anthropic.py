"""`Anthropic()` end to end: a real `create_agent` with `ChatAnthropic` against the scripted
Messages server (`tests/anthropic_stub.py`), which records the exact request JSON and implements
deferred tools, `tool_reference` expansion and prefix caching."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ProviderToolSearchMiddleware
from langchain_anthropic import ChatAnthropic
from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping.disclosure import Anthropic
from attention_scoping.disclosure.native import PAIR_PREFIX
from attention_scoping.errors import ErrorCode
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.select import Selector
from tests.anthropic_stub import AnthropicStub, ScriptEntry
from tests.disclosure_support import (
    NOTES_AND_UNITS,
    OPENING,
    THANKS,
    THREAD,
    Turn,
    anthropic_chat,
    call,
    make_scopes,
    make_tools,
    replies,
    script_of,
    turn,
)


def chat_model(stub: AnthropicStub) -> ChatAnthropic:
    return anthropic_chat(stub.base_url, api_key=SecretStr("test-key"))


def scoped_agent(stub: AnthropicStub, ran: list[str], *, selector: Selector | None = None) -> Any:
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(
        make_scopes(tools), selector=selector, disclosure=Anthropic()
    )
    return create_agent(
        chat_model(stub),
        tools=list(tools.values()),
        system_prompt="Be terse.",
        middleware=[cast(Any, scoping), AnthropicPromptCachingMiddleware()],
        checkpointer=InMemorySaver(),
    )


SESSION: list[Turn] = [
    *OPENING,
    *NOTES_AND_UNITS,
    ("Shout bye.", {}, replies(
        call("shout", "t9a", text="bye"), call("load_context", "t9b", name="text"),
        call("shout", "t9c", text="bye"), answer="BYE!",
    )),
    THANKS,
]  # fmt: skip
"""Ten user turns: the model loads math, text, notes, math and text itself, the application
opens units, and one call to another scope's (already disclosed) tool is refused."""


@dataclass
class Session:
    """What one run of `SESSION` left: the stub's records, the thread, the runs."""

    stub: AnthropicStub
    messages: list[Any]
    contexts: list[str | None]
    ran: list[str]
    replies: int


@pytest.fixture(scope="module")
def session() -> Session:
    """`SESSION` run once against the stub (the tests below read it)."""
    ran: list[str] = []
    script: list[ScriptEntry] = script_of(SESSION)
    with AnthropicStub(script, min_cache_tokens=64) as stub:
        agent = scoped_agent(stub, ran)
        contexts = []
        for text, state, _ in SESSION:
            agent.invoke({"messages": [("user", text)], **state}, THREAD)
            contexts.append(agent.get_state(THREAD).values.get("active_context"))
        messages = agent.get_state(THREAD).values["messages"]
    return Session(stub, messages, contexts, ran, len(script))


def without_breakpoints(value: Any) -> Any:
    """`value` with every `cache_control` key dropped (the caching middleware moves its
    breakpoint to the newest message on every call)."""
    if isinstance(value, dict):
        return {k: without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_breakpoints(v) for v in value]
    return value


def references(stub: AnthropicStub, i: int) -> dict[str, list[str]]:
    """`tool_use_id` -> tool names referenced in its result, in request `i`."""
    return {
        cid: [b["tool_name"] for b in content if b.get("type") == "tool_reference"]
        for cid, content in stub.tool_results(i).items()
        if isinstance(content, list)
    }


def test_ten_turns_keep_tools_system_and_every_earlier_message_byte_identical(
    session: Session,
) -> None:
    stub = session.stub
    assert not stub.script and len(stub.requests) == session.replies
    assert stub.rejections == [] and stub.violations == []
    assert session.contexts == [
        "math", "math", "text", "text", "notes", "notes", "units", "math", "text", "text"
    ]  # fmt: skip
    assert session.ran == [
        "add", "multiply", "shout", "reverse", "save_note", "list_notes", "convert_km", "add",
        "shout",
    ]  # fmt: skip
    first = stub.requests[0]
    for body in stub.requests:
        assert json.dumps(body["tools"], sort_keys=True) == json.dumps(
            first["tools"], sort_keys=True
        )
        assert json.dumps(body["system"], sort_keys=True) == json.dumps(
            first["system"], sort_keys=True
        )
    for before, after in zip(stub.requests, stub.requests[1:], strict=False):
        earlier = without_breakpoints(before["messages"])
        assert without_breakpoints(after["messages"])[: len(earlier)] == earlier
    # every tool sent; only load_context loaded, last, and the breakpoint on it
    assert stub.tool_names(0)[-1] == "load_context"
    assert sorted(stub.deferred(0)) == sorted(make_tools([]))
    deferred = [t for t in first["tools"] if t.get("defer_loading")]
    assert all("cache_control" not in t for t in deferred)
    # the cached prefix is read on every later request
    assert all(u["cache_read_input_tokens"] > 0 for u in stub.usages[1:])


def test_scopes_are_disclosed_in_load_context_results_and_an_unsaved_pair(
    session: Session,
) -> None:
    stub, last = session.stub, len(session.stub.requests) - 1
    refs = references(stub, last)
    assert refs["t1a"] == ["add", "multiply"]
    assert refs["t3a"] == ["reverse", "shout"]
    assert refs["t5a"] == ["list_notes", "save_note"]  # the model loaded it: its write too
    # loaded again: already expanded in the prefix, nothing referenced twice
    assert "t8a" not in refs and "t9b" not in refs
    text = next(b["text"] for b in stub.tool_results(last)["t1a"] if b.get("type") == "text")
    assert "M." in text  # the load_context result keeps the scope's module
    # the application opened units: a load_context pair in the request, never in state
    pairs = [cid for cid in refs if cid.startswith(PAIR_PREFIX)]
    assert len(pairs) == 1 and refs[pairs[0]] == ["convert_km"]
    uses = [
        b
        for m in stub.requests[last]["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "tool_use" and b["id"] == pairs[0]
    ]
    assert [(u["name"], u["input"]) for u in uses] == [("load_context", {})]
    saved_ids = {
        c["id"] for m in session.messages if isinstance(m, AIMessage) for c in m.tool_calls
    }
    assert not any(str(i).startswith(PAIR_PREFIX) for i in saved_ids)
    # the provider could still call shout at t9a (referenced in turn 3); the record refused it
    refused = [
        m for m in session.messages if isinstance(m, ToolMessage) and m.tool_call_id == "t9a"
    ]
    assert json.loads(str(refused[0].content))["error"] == ErrorCode.TOOL_NOT_IN_CONTEXT
    assert session.ran.count("shout") == 2


def refusals(messages: Sequence[BaseMessage]) -> dict[str, str]:
    return {
        m.tool_call_id: json.loads(str(m.content))["error"]
        for m in messages
        if isinstance(m, ToolMessage) and m.status == "error"
    }


def test_a_call_to_a_tool_never_disclosed_is_refused_and_not_run() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"tool_calls": [call("convert_km", "b", km=1), call("add", "c", a=1, b=2)]},
        {"content": "done"},
    ]
    with AnthropicStub(script) as stub:
        result = turn(scoped_agent(stub, ran), "Add 1 and 2, and convert 1 km.")
    assert refusals(result["messages"]) == {"b": ErrorCode.TOOL_NOT_IN_CONTEXT}
    assert ran == ["add"]
    assert [v["problem"] for v in stub.violations] == [
        "reply calls 'convert_km', which is not callable",
        "messages.3: tool_use of 'convert_km' before it loaded",
    ]


def test_a_scope_code_opens_discloses_only_its_tools_that_read() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("list_notes", "a")]},
        {"tool_calls": [call("save_note", "b", title="x")]},
        {"content": "done"},
    ]
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(make_scopes(tools), disclosure=Anthropic())
    with AnthropicStub(script) as stub:
        agent = create_agent(
            chat_model(stub),
            tools=list(tools.values()),
            middleware=[scoping],
            checkpointer=InMemorySaver(),
        )
        result = turn(agent, "List the saved notes, please.")
    assert result["scope_opened"]["by"] == "code" and result["active_context"] == "notes"
    pairs = {c: r for c, r in references(stub, 0).items() if c.startswith(PAIR_PREFIX)}
    assert list(pairs.values()) == [["list_notes"]]
    assert "save_note" not in stub.callable(1)
    assert refusals(result["messages"]) == {"b": ErrorCode.TOOL_NOT_IN_CONTEXT}
    assert ran == ["list_notes"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1


async def test_the_async_path_discloses_the_same_way() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"tool_calls": [call("add", "b", a=1, b=2)]},
        {"content": "3"},
    ]
    with AnthropicStub(script) as stub:
        agent = scoped_agent(stub, ran)
        result = await agent.ainvoke({"messages": [("user", "Add 1 and 2.")]}, THREAD)
    assert stub.rejections == [] and stub.violations == []
    assert ran == ["add"] and refusals(result["messages"]) == {}
    assert references(stub, 1)["a"] == ["add", "multiply"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1


def test_langchains_provider_tool_search_stacks_inside_and_finds_nothing_callable() -> None:
    """`ProviderToolSearchMiddleware` after ours sees our deferrals and appends Anthropic's
    server-side search; a tool the provider could find that way is still refused unless the
    reply's record names it."""
    ran: list[str] = []
    tools = make_tools(ran)
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"tool_calls": [call("convert_km", "b", km=1)]},
        {"content": "done"},
    ]
    scoping = AttentionScopingMiddleware(make_scopes(tools), selector=None, disclosure=Anthropic())
    with AnthropicStub(script) as stub:
        agent: Any = create_agent(
            chat_model(stub),
            tools=list(tools.values()),
            middleware=[cast(Any, scoping), ProviderToolSearchMiddleware()],
        )
        result = agent.invoke({"messages": [("user", "Convert 1 km.")]})
    assert stub.rejections == []
    sent = [(t["name"], t.get("defer_loading", False)) for t in stub.requests[0]["tools"]]
    assert sent[-2:] == [("load_context", False), ("tool_search_tool_bm25", False)]
    assert all(deferred for name, deferred in sent[:-2])
    assert refusals(result["messages"]) == {"b": ErrorCode.TOOL_NOT_IN_CONTEXT}
    assert ran == []


def test_a_default_scope_is_disclosed_by_a_pair_that_stays_the_same() -> None:
    """A default scope is in force with no `active_context` in state: the pair disclosing it is
    rebuilt from the reply's record on later calls, byte for byte."""
    ran: list[str] = []
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(
        make_scopes(tools), default_scope="units", selector=None, disclosure=Anthropic()
    )
    script: list[ScriptEntry] = [
        {"tool_calls": [call("convert_km", "a", km=2)]},
        {"content": "1.24 miles"},
        {"tool_calls": [call("convert_km", "b", km=3)]},
        {"content": "1.86 miles"},
    ]
    with AnthropicStub(script) as stub:
        agent = create_agent(
            chat_model(stub),
            tools=list(tools.values()),
            middleware=[scoping],
            checkpointer=InMemorySaver(),
        )
        turn(agent, "Convert 2 km.")
        turn(agent, "And 3 km?")
    assert stub.rejections == [] and stub.violations == []
    assert ran == ["convert_km", "convert_km"]
    for before, after in zip(stub.requests, stub.requests[1:], strict=False):
        assert after["messages"][: len(before["messages"])] == before["messages"]
    pairs = [c for c in references(stub, 3) if c.startswith(PAIR_PREFIX)]
    assert [references(stub, 3)[c] for c in pairs] == [["convert_km"]]
