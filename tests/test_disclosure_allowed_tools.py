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
from tests.disclosure_support import THREAD, call, make_scopes, make_tools
from tests.openai_stub import OpenAIStub, ScriptEntry, allowed_tool_names

SESSION: list[tuple[str, dict[str, Any], list[ScriptEntry]]] = [
    ("Please add 2 and 3.", {}, [
        {"tool_calls": [call("load_context", "t1a", name="math")]},
        {"tool_calls": [call("add", "t1b", a=2, b=3)]},
        {"content": "5"},
    ]),
    ("Now multiply 4 by 5.", {}, [
        {"tool_calls": [call("multiply", "t2a", a=4, b=5)]},
        {"content": "20"},
    ]),
    ("Shout hello.", {}, [
        {"tool_calls": [call("load_context", "t3a", name="text")]},
        {"tool_calls": [call("shout", "t3b", text="hello")]},
        {"content": "HELLO!"},
    ]),
    ("Reverse abc.", {}, [
        {"tool_calls": [call("reverse", "t4a", text="abc")]},
        {"content": "cba"},
    ]),
    ("Save a note called groceries.", {}, [
        {"tool_calls": [call("load_context", "t5a", name="notes")]},
        {"tool_calls": [call("save_note", "t5b", title="groceries")]},
        {"content": "saved"},
    ]),
    ("List my notes.", {}, [
        {"tool_calls": [call("list_notes", "t6a")]},
        {"content": "groceries"},
    ]),
    ("Convert 5 km to miles.", {"active_context": "units"}, [
        {"tool_calls": [call("convert_km", "t7a", km=5)]},
        {"content": "3.1 miles"},
    ]),
    ("Add 1 and 1 again.", {}, [
        {"tool_calls": [call("load_context", "t8a", name="math")]},
        {"tool_calls": [call("add", "t8b", a=1, b=1)]},
        {"content": "2"},
    ]),
    ("Now reverse xyz.", {}, [
        {"tool_calls": [call("reverse", "t9a", text="xyz")]},
        {"tool_calls": [call("load_context", "t9b", name="text")]},
        {"tool_calls": [call("reverse", "t9c", text="xyz")]},
        {"content": "zyx"},
    ]),
    ("Thanks.", {}, [{"content": "You are welcome."}]),
]  # fmt: skip
"""Ten user turns, five scope switches by the model, one by the application, and one call
outside the allowed tools (t9a: the stub records it, the scope gate refuses it)."""


def make_agent(stub: OpenAIStub, ran: list[str]) -> Any:
    tools = make_tools(ran)
    model = ChatOpenAI(
        model="stub-model", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
    )
    middleware: list[Any] = [
        AttentionScopingMiddleware(
            make_scopes(tools), navigation="model", disclosure="allowed_tools"
        ),
        ToolAttentionMiddleware(
            ranker="bm25", k=1, summary_pool=SummaryPool(disclosure="allowed_tools")
        ),
    ]
    return create_agent(
        model, system_prompt="Be terse.", middleware=middleware, checkpointer=InMemorySaver()
    )


def test_ten_turns_send_one_tools_array_and_the_scope_in_tool_choice() -> None:
    ran: list[str] = []
    script = [reply for _, _, replies in SESSION for reply in replies]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran)
        events: list[dict[str, Any]] = []
        for text, state, _ in SESSION:
            inputs = {"messages": [("user", text)], **state}
            events += list(agent.stream(inputs, THREAD, stream_mode="custom"))
        messages = agent.get_state(THREAD).values["messages"]
    assert stub.rejections == [] and stub.remaining == 0
    assert len({json.dumps(b["tools"], sort_keys=True) for b in stub.requests}) == 1
    assert len({stub.system_text(i) for i in range(len(stub.requests))}) == 1
    assert sorted(stub.tool_names(0)) == sorted([*make_tools([]), "load_context"])
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
    tools = make_tools(ran)
    script: list[ScriptEntry] = [
        {"tool_calls": [call("add", "a", a=2, b=3)]},
        {"tool_calls": [call("multiply", "b", a=2, b=3)]},
        {"tool_calls": [call("multiply", "c", a=2, b=3)]},
        {"content": "done"},
    ]
    with OpenAIStub(script) as stub:
        model = ChatOpenAI(
            model="stub-model", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
        )
        middleware: list[Any] = [
            AttentionScopingMiddleware(
                make_scopes(tools), default_scope="math", disclosure="allowed_tools"
            ),
            ToolAttentionMiddleware(
                ranker="bm25",
                k=1,
                promotion="per_turn",
                summary_pool=SummaryPool(disclosure="allowed_tools"),
            ),
        ]
        agent: Any = create_agent(model, middleware=middleware)
        agent.invoke({"messages": [("user", "Please add 2 and 3.")]})
    allowed = [allowed_tool_names(b) for b in stub.requests]
    assert allowed[0] == allowed[1] == {"load_context", "add"}
    assert allowed[2] == {"load_context", "add", "multiply"}  # refused once, so promoted
    assert [v["request"] for v in stub.violations] == [1]
    assert ran == ["add", "multiply"]
    assert len({json.dumps(b["tools"]) for b in stub.requests}) == 1
