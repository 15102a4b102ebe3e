"""`disclosure="allowed_tools"` end to end: a real `create_agent` with `ChatOpenAI` (Chat
Completions) against the scripted OpenAI server, which enforces `tool_choice` `allowed_tools`:
the tools array and the system prompt stay byte-identical, the visible set travels in
`tool_choice`, and a call outside it is refused and never runs."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping import AttentionScopingMiddleware, SummaryPool, ToolAttentionMiddleware
from tests import disclosure_support as support
from tests.openai_stub import OpenAIStub, ScriptEntry, allowed_tool_names

call = support.call

SESSION: list[support.Turn] = [
    *support.OPENING,
    *support.NOTES_AND_UNITS,
    ("Now reverse xyz.", {}, support.replies(
        call("reverse", "t9a", text="xyz"), call("load_context", "t9b", name="text"),
        call("reverse", "t9c", text="xyz"), answer="zyx",
    )),
    support.THANKS,
]  # fmt: skip
"""Ten user turns, five scope switches by the model, one by the application, and one call
outside the allowed tools (t9a: the stub records it, the scope gate refuses it)."""


def make_agent(
    stub: OpenAIStub,
    ran: list[str],
    scoping: dict[str, Any],
    gating: dict[str, Any],
    **agent_options: Any,
) -> Any:
    """An agent over `make_tools(ran)` whose scoping and gating middlewares both disclose
    through `allowed_tools` (`scoping` and `gating`: their further options)."""
    model = ChatOpenAI(
        model="stub-model", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
    )
    scopes = support.make_scopes(support.make_tools(ran))
    middleware: list[Any] = [
        AttentionScopingMiddleware(scopes, disclosure="allowed_tools", **scoping),
        ToolAttentionMiddleware(
            ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="allowed_tools"), **gating
        ),
    ]
    return create_agent(model, middleware=middleware, **agent_options)


def test_ten_turns_send_one_tools_array_and_the_scope_in_tool_choice() -> None:
    ran: list[str] = []
    script = support.script_of(SESSION)
    with OpenAIStub(script) as stub:
        agent = make_agent(
            stub,
            ran,
            {"navigation": "model"},
            {},
            system_prompt="Be terse.",
            checkpointer=InMemorySaver(),
        )
        events: list[dict[str, Any]] = []
        for text, state, _ in SESSION:
            inputs = {"messages": [("user", text)], **state}
            events += list(agent.stream(inputs, support.THREAD, stream_mode="custom"))
        messages = agent.get_state(support.THREAD).values["messages"]
    assert stub.rejections == [] and stub.remaining == 0
    assert len({json.dumps(b["tools"], sort_keys=True) for b in stub.requests}) == 1
    assert len({stub.system_text(i) for i in range(len(stub.requests))}) == 1
    assert sorted(stub.tool_names(0)) == sorted([*support.make_tools([]), "load_context"])
    allowed = [allowed_tool_names(b) for b in stub.requests]
    assert allowed[0] == {"load_context"}
    assert allowed[1] == {"load_context", "add"}  # math loaded; the gate ranks add first
    assert allowed[3] == {"load_context", "multiply", "add"}  # add is sticky from turn 1
    assert allowed[11] == {"load_context", "save_note"}  # a write of a scope the model loaded
    assert allowed[15] == {"load_context", "convert_km"}  # the application opened units
    assert len({frozenset(a or ()) for a in allowed}) >= 6
    gates = [e for e in events if e.get("type") == "gate"]
    assert {e["disclosure"] for e in events} == {"allowed_tools"}
    assert len({tuple(e["shown"]) for e in gates}) >= 6
    # the one call outside allowed_tools: recorded by the stub, refused, never run
    assert [v["problem"] for v in stub.violations] == [
        "reply calls 'reverse' outside allowed_tools"
    ]
    refused = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "t9a")
    assert refused.status == "error"
    assert json.loads(str(refused.content))["error"] == "tool_not_in_context"
    assert ran == [
        "add", "multiply", "shout", "reverse", "save_note", "list_notes", "convert_km", "add",
        "reverse",
    ]  # fmt: skip


def test_a_per_turn_gate_holds_its_allowed_set_for_the_turn() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("add", "a", a=2, b=3)]},
        {"tool_calls": [call("multiply", "b", a=2, b=3)]},
        {"tool_calls": [call("multiply", "c", a=2, b=3)]},
        {"content": "done"},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran, {"default_scope": "math"}, {"promotion": "per_turn"})
        agent.invoke({"messages": [("user", "Please add 2 and 3.")]})
    allowed = [allowed_tool_names(b) for b in stub.requests]
    assert allowed[0] == allowed[1] == {"load_context", "add"}
    assert allowed[2] == {"load_context", "add", "multiply"}  # refused once, so promoted
    assert [v["request"] for v in stub.violations] == [1]
    assert ran == ["add", "multiply"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1
