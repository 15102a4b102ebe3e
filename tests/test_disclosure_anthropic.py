"""`disclosure="anthropic"` end to end: a real `create_agent` with `ChatAnthropic` against the
scripted Messages server (`tests/anthropic_stub.py`), which records the exact request JSON and
implements deferred tools, `tool_reference` expansion and prefix caching."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping import (
    AttentionScopingMiddleware,
    Navigation,
    SummaryPool,
    ToolAttentionMiddleware,
)
from attention_scoping.disclosure import SEARCH_TOOL
from attention_scoping.scoping.ranked import ScopeDisclosureOptions
from tests.anthropic_stub import AnthropicStub, ScriptEntry, segments, tokens
from tests.disclosure_support import (
    NOTES_AND_UNITS,
    OPENING,
    THANKS,
    THREAD,
    Turn,
    anthropic_chat,
    call,
    gate_tools,
    make_scopes,
    make_tools,
    replies,
    script_of,
    turn,
)


def chat_model(stub: AnthropicStub) -> ChatAnthropic:
    return anthropic_chat(stub.base_url, api_key=SecretStr("test-key"))


def scoped_agent(stub: AnthropicStub, ran: list[str], **scoping: Any) -> Any:
    tools = make_tools(ran)
    middleware: list[Any] = [
        AttentionScopingMiddleware(make_scopes(tools), navigation="model", **scoping),
        ToolAttentionMiddleware(ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="auto")),
        AnthropicPromptCachingMiddleware(),
    ]
    return create_agent(
        chat_model(stub),
        system_prompt="Be terse.",
        middleware=middleware,
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
opens units, and one call to another scope's (already disclosed) tool is refused (played with
`ScopeDisclosureOptions(scope_tools="whole")`: each scope discloses all its tools; "ranked" is
tests/test_disclosure_ranked.py)."""


@dataclass
class Session:
    """What one run of `SESSION` left: the stub's records, the thread, the runs."""

    stub: AnthropicStub
    messages: list[Any]
    contexts: list[str | None]
    ran: list[str]
    replies: int
    events: list[dict[str, Any]]


@pytest.fixture(scope="module")
def session() -> Session:
    """`SESSION` run once against the stub (the tests below read it)."""
    ran: list[str] = []
    script: list[ScriptEntry] = script_of(SESSION)
    with AnthropicStub(script, min_cache_tokens=64) as stub:
        agent = scoped_agent(stub, ran, disclosure=ScopeDisclosureOptions(scope_tools="whole"))
        contexts, events = [], []
        for text, state, _ in SESSION:
            inputs = {"messages": [("user", text)], **state}
            events += list(agent.stream(inputs, THREAD, stream_mode="custom"))
            contexts.append(agent.get_state(THREAD).values.get("active_context"))
        messages = agent.get_state(THREAD).values["messages"]
    return Session(stub, messages, contexts, ran, len(script), events)


def test_ten_turns_keep_tools_and_system_byte_identical(session: Session) -> None:
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
    first_tools = json.dumps(stub.requests[0]["tools"], sort_keys=True)
    first_system = json.dumps(stub.requests[0]["system"], sort_keys=True)
    for body in stub.requests:
        assert json.dumps(body["tools"], sort_keys=True) == first_tools
        assert json.dumps(body["system"], sort_keys=True) == first_system
    # every tool is sent; only load_context and the search tool are loaded, last
    assert stub.tool_names(0)[-2:] == ["load_context", SEARCH_TOOL]
    assert sorted(stub.deferred(0)) == sorted(make_tools([]).keys())
    deferred = [t for t in stub.requests[0]["tools"] if t.get("defer_loading")]
    assert deferred and all("cache_control" not in t for t in deferred)
    assert "cache_control" in stub.requests[0]["tools"][-1]  # the breakpoint on a loaded tool
    # the cached prefix (loaded tools and system prompt at least) is read on every later request
    parts, _ = segments(stub.requests[0])
    fixed = sum(tokens(p) for p in parts[: len(parts) - len(stub.requests[0]["messages"])])
    assert all(u["cache_read_input_tokens"] >= fixed for u in stub.usages[1:])
    assert sum(u["cache_read_input_tokens"] for u in stub.usages) > sum(
        u["input_tokens"] for u in stub.usages
    )


def test_the_gate_decides_anew_while_the_tools_array_stays(session: Session) -> None:
    gates = [e for e in session.events if e.get("type") == "gate"]
    scopes = [e for e in session.events if e.get("type") == "scope"]
    assert len(gates) == len(scopes) == session.replies
    assert {e["disclosure"] for e in gates + scopes} == {"anthropic"}
    assert len({tuple(e["shown"]) for e in gates}) >= 5
    callable_ = [sorted(session.stub.callable(i)) for i in range(len(session.stub.requests))]
    assert callable_[0] == ["load_context", SEARCH_TOOL]
    assert callable_[-1] == sorted([*make_tools([]), "load_context", SEARCH_TOOL])


def test_scopes_are_disclosed_by_load_context_results_and_a_pair(session: Session) -> None:
    stub, messages = session.stub, session.messages
    results = stub.tool_results(len(stub.requests) - 1)
    refs = {
        cid: [b["tool_name"] for b in content if b.get("type") == "tool_reference"]
        for cid, content in results.items()
        if isinstance(content, list)
    }
    assert refs["t1a"] == ["add", "multiply"]
    assert refs["t3a"] == ["shout", "reverse"]
    assert refs["t5a"] == ["save_note", "list_notes"]  # the model loaded it: its write too
    # loaded again: the definitions are already expanded in the prefix, nothing is re-referenced
    # (each reference would bill the scope again on every later call), the module still comes
    assert refs.get("t8a", []) == [] and refs.get("t9b", []) == []
    assert "prompt_module" in json.dumps(results["t8a"])
    text = next(b["text"] for b in results["t1a"] if b.get("type") == "text")
    assert json.loads(text)["prompt_module"].endswith("M.")
    # the application opened units: a load_context pair in front of the model's reply
    pair_ids = [
        str(c["id"])
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if str(c["id"]).startswith("toolu_disclose_")
    ]
    assert len(pair_ids) == 1 and refs[pair_ids[0]] == ["convert_km"]
    pair_call = next(
        m
        for m in messages
        if isinstance(m, AIMessage) and m.tool_calls and m.tool_calls[0]["id"] == pair_ids[0]
    )
    assert pair_call.tool_calls[0]["name"] == "load_context"
    assert pair_call.tool_calls[0]["args"] == {"name": "units"}
    # the call to another scope's tool was refused by the scope gate and did not run
    refused = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "t9a"]
    assert refused[0].status == "error"
    assert json.loads(str(refused[0].content))["error"] == "tool_not_in_context"
    assert session.ran.count("shout") == 2


def test_a_call_to_a_tool_never_disclosed_is_refused_and_not_run() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"tool_calls": [call("convert_km", "b", km=1), call("add", "c", a=1, b=2)]},
        {"content": "done"},
    ]
    with AnthropicStub(script) as stub:
        agent = scoped_agent(stub, ran)
        result = turn(agent, "Add 1 and 2, and convert 1 km.")
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers["b"].status == "error"
    assert json.loads(str(answers["b"].content))["error"] == "tool_not_available"
    assert ran == ["add"]
    assert [v["problem"] for v in stub.violations] == [
        "reply calls 'convert_km', which is not callable",
        "messages.3: tool_use of 'convert_km' before it loaded",
    ]


def test_the_gate_alone_discloses_by_search_pairs_and_its_search_tool() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("get_weather", "w", city="Paris")]},
        {"tool_calls": [call(SEARCH_TOOL, "s1", query="money currency convert")]},
        {"tool_calls": [call("convert_currency", "c", amount=3, to="EUR")]},
        {"tool_calls": [call(SEARCH_TOOL, "s2", query="send email message")]},
        {"tool_calls": [call(SEARCH_TOOL, "s3", query="send_email")]},
        {"tool_calls": [call("send_email", "e", to="a", body="b")]},
        {"content": "done"},
        {"tool_calls": [call("get_forecast", "f", city="Rome")]},
        {"content": "rain"},
    ]
    gate = ToolAttentionMiddleware(
        ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="anthropic")
    )
    with AnthropicStub(script) as stub:
        agent = create_agent(
            chat_model(stub),
            tools=gate_tools(ran),
            system_prompt="Be terse.",
            middleware=[gate],
            checkpointer=InMemorySaver(),
        )
        first = turn(agent, "What is the weather in Paris?")
        turn(agent, "And the forecast for tomorrow in Rome?")
    assert stub.rejections == [] and stub.violations == []
    assert ran == ["get_weather", "convert_currency", "send_email", "get_forecast"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1
    assert len({json.dumps(b["system"]) for b in stub.requests}) == 1
    results: dict[str, Any] = {
        m.tool_call_id: m.content for m in first["messages"] if isinstance(m, ToolMessage)
    }
    pair = [cid for cid in results if cid.startswith("toolu_disclose_")]
    assert len(pair) == 1
    assert results[pair[0]][0] == {"type": "tool_reference", "tool_name": "get_weather"}
    found = {cid: json.loads(results[cid][-1]["text"]) for cid in ("s1", "s2", "s3")}
    assert found["s1"]["loaded"] == ["convert_currency"]
    assert found["s2"]["loaded"] == [] and found["s2"]["writes_not_loaded"] == ["send_email"]
    assert found["s3"]["loaded"] == ["send_email"]  # a write loads by its exact name only
    last = stub.tool_results(len(stub.requests) - 1)
    new_turn = [c for cid, c in last.items() if cid.startswith("toolu_disclose_")]
    assert {"type": "tool_reference", "tool_name": "get_forecast"} in new_turn[-1]


def test_openai_mode_on_chat_anthropic_is_a_value_error() -> None:
    with AnthropicStub([]) as stub:
        scoping = AttentionScopingMiddleware(
            make_scopes(make_tools([])), navigation="model", disclosure="openai"
        )
        agent: Any = create_agent(chat_model(stub), middleware=[scoping])
        expected = (
            r"disclosure='openai' cannot be used with ChatAnthropic: .*; "
            r"use one of 'auto', 'rewrite' or 'anthropic'"
        )
        with pytest.raises(ValueError, match=expected):
            agent.invoke({"messages": [("user", "hi")]})
    assert stub.requests == []


def test_a_scope_code_opens_discloses_only_its_tools_that_read() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("list_notes", "a")]},
        {"tool_calls": [call("save_note", "b", title="x")]},
        {"content": "done"},
    ]
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(
        make_scopes(tools),
        navigation=Navigation(preselect="every_turn", ranker="lexical"),
        disclosure="anthropic",
    )
    with AnthropicStub(script) as stub:
        agent = create_agent(chat_model(stub), middleware=[scoping], checkpointer=InMemorySaver())
        result = turn(agent, "List the saved notes, please.")
    assert result["scope_opened"]["by"] == "code" and result["active_context"] == "notes"
    pair = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert str(pair.tool_call_id).startswith("toolu_disclose_")
    blocks: list[Any] = list(pair.content)
    assert [b for b in blocks if b["type"] == "tool_reference"] == [
        {"type": "tool_reference", "tool_name": "list_notes"}
    ]
    assert "save_note" not in stub.callable(1)
    refused = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "b"
    )
    assert refused.status == "error" and ran == ["list_notes"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1


async def test_the_async_path_discloses_and_searches_the_same_way() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call(SEARCH_TOOL, "s", query="convert currency money")]},
        {"tool_calls": [call("convert_currency", "c", amount=1, to="EUR")]},
        {"content": "done"},
    ]
    gate = ToolAttentionMiddleware(
        ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="anthropic")
    )
    with AnthropicStub(script) as stub:
        agent: Any = create_agent(chat_model(stub), tools=gate_tools(ran), middleware=[gate])
        result = await agent.ainvoke({"messages": [("user", "What is the weather in Paris?")]})
    assert stub.rejections == [] and stub.violations == []
    assert ran == ["convert_currency"]
    pair = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert str(pair.tool_call_id).startswith("toolu_disclose_")
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1
