"""`scope_tools="ranked"` (the default in the native modes) end to end: a real
`create_agent` with `ChatAnthropic` / `ChatOpenAI(use_responses_api=True)` against the scripted
servers. A scope discloses only the tools the request names or ranks best (at its load and at
each new turn); the rest load through the search tool, restricted to the active scope, and a
call to one of them before that is refused and never runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping import AttentionScopingMiddleware, Navigation, Scope
from attention_scoping.disclosure import SEARCH_TOOL
from attention_scoping.scoping.ranked import SCOPE_DISCLOSURES, ScopeDisclosureOptions
from tests.anthropic_stub import AnthropicStub, ScriptEntry
from tests.disclosure_support import (
    RANKED_SESSION,
    anthropic_chat,
    call,
    make_scopes,
    make_tools,
    turn,
)
from tests.openai_stub import OpenAIStub


def anthropic_model(stub: AnthropicStub) -> ChatAnthropic:
    return anthropic_chat(stub.base_url)


def scoping(tools: dict[str, BaseTool], **options: Any) -> AttentionScopingMiddleware:
    return AttentionScopingMiddleware(
        make_scopes(tools), navigation=Navigation(preselect="off", ranker="lexical"), **options
    )


def references(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        b["tool_name"] for b in content if isinstance(b, dict) and b.get("type") == "tool_reference"
    ]


def run_anthropic(ran: list[str]) -> tuple[AnthropicStub, list[Any]]:
    script = [reply for _, replies in RANKED_SESSION for reply in replies]
    with AnthropicStub(script, min_cache_tokens=64) as stub:
        agent = create_agent(
            anthropic_model(stub),
            system_prompt="Be terse.",
            middleware=[scoping(make_tools(ran))],
            checkpointer=InMemorySaver(),
        )
        for text, _ in RANKED_SESSION:
            turn(agent, text)
        messages = agent.get_state({"configurable": {"thread_id": "disclosure"}}).values["messages"]
    return stub, messages


def test_ranked_scope_discloses_what_the_request_needs_and_searches_the_rest() -> None:
    ran: list[str] = []
    stub, messages = run_anthropic(ran)
    assert not stub.script and stub.rejections == []
    # the prefix never changes: every tool sent, deferred but load_context and the search tool
    tools = {json.dumps(b["tools"], sort_keys=True) for b in stub.requests}
    systems = {json.dumps(b["system"], sort_keys=True) for b in stub.requests}
    assert len(tools) == 1 and len(systems) == 1
    assert sorted(stub.tool_names(0)[-2:]) == sorted(["load_context", SEARCH_TOOL])
    assert sorted(stub.deferred(0)) == sorted(make_tools([]))
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    # the model's load of math discloses the request's tool only; the other is named
    assert references(results["r1a"].content) == ["add"]
    text = next(
        b["text"] for b in results["r1a"].content if isinstance(b, dict) and b["type"] == "text"
    )
    payload = json.loads(text)
    assert payload["other_tools"] == ["multiply"] and payload["prompt_module"].endswith("M.")
    # the next turn: a search pair in front of the model's reply discloses multiply
    pairs = [
        m for m in messages if isinstance(m, AIMessage) and m.tool_calls
        and str(m.tool_calls[0]["id"]).startswith("toolu_disclose_")
    ]  # fmt: skip
    assert [p.tool_calls[0]["name"] for p in pairs] == [SEARCH_TOOL]
    assert references(results[str(pairs[0].tool_calls[0]["id"])].content) == ["multiply"]
    # text: only reverse disclosed at the load; shout refused, never run, until searched
    assert references(results["r3a"].content) == ["reverse"]
    assert results["r3c"].status == "error"
    assert json.loads(str(results["r3c"].content))["error"] == "tool_not_available"
    assert references(results["r3d"].content) == ["shout"]
    assert ran == ["add", "multiply", "reverse", "shout"]
    assert [v["problem"] for v in stub.violations][:1] == [
        "reply calls 'shout', which is not callable"
    ]
    assert all("'shout'" in v["problem"] for v in stub.violations)


def test_the_search_stays_in_the_active_scope_and_loads_only_what_is_new() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"tool_calls": [call(SEARCH_TOOL, "b", query="reverse a text")]},
        {"tool_calls": [call(SEARCH_TOOL, "c", query="add two integers")]},
        {"tool_calls": [call("reverse", "d", text="x")]},
        {"content": "done"},
    ]
    with AnthropicStub(script) as stub:
        agent = create_agent(
            anthropic_model(stub),
            middleware=[scoping(make_tools(ran))],
            checkpointer=InMemorySaver(),
        )
        result = turn(agent, "Add 2 and 3.")
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert references(answers["a"].content) == ["add"]
    assert references(answers["b"].content) == []  # reverse is in another scope
    # add is already loaded: not referenced (billed) again; multiply matches "integers"
    assert references(answers["c"].content) == ["multiply"]
    assert answers["d"].status == "error" and ran == []


def test_whole_discloses_the_scope_and_a_bad_value_fails_at_construction() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"content": "done"},
    ]
    with AnthropicStub(script) as stub:
        agent = create_agent(
            anthropic_model(stub),
            middleware=[
                scoping(make_tools(ran), disclosure=ScopeDisclosureOptions(scope_tools="whole"))
            ],
            checkpointer=InMemorySaver(),
        )
        result = turn(agent, "Add 2 and 3.")
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert references(answers["a"].content) == ["add", "multiply"]
    assert SEARCH_TOOL not in stub.tool_names(0)
    with pytest.raises(ValueError, match="scope_tools") as err:
        ScopeDisclosureOptions(scope_tools="some")  # type: ignore[arg-type]
    assert all(v in str(err.value) for v in SCOPE_DISCLOSURES)


def test_code_opened_scope_discloses_only_ranked_tools_that_read() -> None:
    ran: list[str] = []
    tools = make_tools(ran)
    script: list[ScriptEntry] = [
        {"tool_calls": [call("save_note", "a", title="x")]},
        {"tool_calls": [call(SEARCH_TOOL, "b", query="save_note")]},
        {"content": "done"},
    ]
    with AnthropicStub(script) as stub:
        agent = create_agent(
            anthropic_model(stub),
            middleware=[
                AttentionScopingMiddleware(
                    make_scopes(tools),
                    navigation=Navigation(preselect="unscoped", ranker="lexical"),
                )
            ],
            checkpointer=InMemorySaver(),
        )
        result = turn(agent, "List my notes and save a note.")
    pair = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "load_context"
    )
    assert references(pair.content) == ["list_notes"]  # save_note writes: not opened by code
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers["a"].status == "error" and ran == []
    # nor does a search by its exact name load it: the model loads the scope itself for writes
    assert references(answers["b"].content) == []
    text = next(b["text"] for b in answers["b"].content if isinstance(b, dict))
    assert "load_context" in json.loads(text)["writes_step"]


def test_openai_ranked_scope_through_the_responses_api() -> None:
    ran: list[str] = []
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("load_context", "o1", name="math")]},
        {"tool_calls": [call("add", "o2", a=2, b=3)]},
        {"content": "5"},
        {"tool_calls": [call("multiply", "o3", a=4, b=5)]},
        {"content": "20"},
    ]
    with OpenAIStub(script, prompt_cache=True) as stub:
        model = ChatOpenAI(
            model="stub-model",
            base_url=stub.base_url,
            api_key=SecretStr("test-key"),
            use_responses_api=True,
        )
        agent = create_agent(
            model, middleware=[scoping(make_tools(ran))], checkpointer=InMemorySaver()
        )
        turn(agent, "Please add 2 and 3.")
        turn(agent, "Now multiply 4 by 5.")
    assert stub.rejections == [] and stub.errors == [] and not stub.script
    view = stub.responses
    n = len(stub.requests)
    assert len({view.tools_json(i) for i in range(n)}) == 1
    assert len({view.system_json(i) for i in range(n)}) == 1
    loaded = [
        [f["name"] for t in out["tools"] for f in t["tools"]]
        for out in view.items(n - 1, "tool_search_output")
    ]
    assert loaded == [["add"], ["multiply"]]
    assert ran == ["add", "multiply"]


def test_ranked_is_the_default() -> None:
    tools: dict[str, BaseTool] = {}

    @tool
    def noop() -> str:
        """Do nothing."""
        return ""

    tools["noop"] = noop
    mw = AttentionScopingMiddleware([Scope("s", "a scope", tools=[noop])])
    assert mw.scope_disclosure == "ranked"


def _add_turn(hesitation: Any) -> tuple[AnthropicStub, list[str]]:
    """One turn, "Please add 2 and 3 (integer arithmetic).", through the anthropic mode with
    pre-selection (it opens math) and `hesitation` after it; the model calls `add`, answers 5.
    Returns the stub (its recorded requests) and the tools that ran."""
    ran: list[str] = []
    tools = make_tools(ran)
    script: list[ScriptEntry] = [
        {"tool_calls": [call("add", "h1", a=2, b=3)]},
        {"content": "5"},
    ]
    with AnthropicStub(script) as stub:
        middleware: list[Any] = [
            AttentionScopingMiddleware(
                make_scopes(tools), navigation=Navigation(ranker="lexical"), disclosure="anthropic"
            ),
            hesitation,
        ]
        agent = create_agent(
            anthropic_model(stub), middleware=middleware, checkpointer=InMemorySaver()
        )
        turn(agent, "Please add 2 and 3 (integer arithmetic).")
    return stub, ran


def test_a_scope_code_disclosed_still_gets_the_hint_on_the_first_call() -> None:
    """Pre-selection opens math and its pair discloses `add` before the first call; that pair
    is not a reply, so the first call still carries the hint naming the tool (it used to count
    as one, and native modes never got the hint)."""
    from attention_scoping import HesitationMiddleware

    stub, ran = _add_turn(HesitationMiddleware())
    assert ran == ["add"]
    first = stub.requests[0]["messages"]
    assert [m["role"] for m in first] == ["user", "assistant", "user"]
    texts = [b.get("text", "") for b in first[-1]["content"] if isinstance(b, dict)]
    assert any("Tools that match the user's request: `add`" in t for t in texts), texts


def _hinted(request: dict[str, Any]) -> list[str]:
    """The tools the hint of a recorded request names (none without a hint)."""
    body = json.dumps(request)
    start = body.find("Tools that match the user's request")
    hint = body[start : body.find(".", start)] if start >= 0 else ""
    return [n for n in ("add", "multiply", "shout", "reverse") if f"`{n}`" in hint]


def _hesitation_expecting(*names: str) -> Any:
    """A hesitation middleware whose expectation names `names` whatever the message."""
    from attention_scoping import HesitationMiddleware
    from attention_scoping.hesitation import Grounding

    return HesitationMiddleware(
        grounding=Grounding(expect_tool_call=lambda state, messages: list(names))
    )


def test_the_hint_names_only_tools_the_model_can_call_now() -> None:
    """In the anthropic mode every tool is in `tools`, most of them deferred: an expectation
    naming a tool the history has not disclosed (`shout`, of a scope nobody opened) is not
    hinted, since a call to it would be refused; `add`, disclosed by the math pair, is. Without
    the rule the hint named both."""
    stub, ran = _add_turn(_hesitation_expecting("shout", "add"))
    assert ran == ["add"]
    first = stub.requests[0]
    assert "shout" not in references(first["messages"][-1]["content"][0]["content"])
    assert _hinted(first) == ["add"]


def test_the_openai_hint_names_only_functions_a_search_output_loaded() -> None:
    """The same in the openai mode: the functions sit deferred in namespaces; the hint names
    `add`, which the math pair loaded, and not `shout`, which nothing loaded. (The hint never
    came in this mode before: the pair's `tool_search_call` item counted as a reply, and the
    namespaces hid their functions from the hesitation middleware.)"""
    ran: list[str] = []
    tools = make_tools(ran)
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("add", "o1", a=2, b=3)]},
        {"content": "5"},
    ]
    with OpenAIStub(script) as stub:
        model = ChatOpenAI(
            model="stub-model",
            base_url=stub.base_url,
            api_key=SecretStr("test-key"),
            use_responses_api=True,
        )
        middleware: list[Any] = [
            AttentionScopingMiddleware(
                make_scopes(tools), navigation=Navigation(ranker="lexical"), disclosure="openai"
            ),
            _hesitation_expecting("shout", "add"),
        ]
        agent = create_agent(model, middleware=middleware, checkpointer=InMemorySaver())
        turn(agent, "Please add 2 and 3 (integer arithmetic).")
    assert stub.rejections == [] and ran == ["add"]
    assert _hinted(stub.requests[0]) == ["add"]
