"""`OpenAI()` end to end: a real `create_agent` with `ChatOpenAI` against the scripted OpenAI
server, which enforces `tool_choice` `allowed_tools` (Chat Completions): the tools array and the
system prompt stay byte-identical, the callable set travels in `tool_choice`, and a call outside
it is refused by the record and never runs. With `use_responses_api=True` the Responses spelling
is sent."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping.disclosure import OpenAI, allowed_names
from attention_scoping.errors import ErrorCode
from attention_scoping.middleware import AttentionScopingMiddleware
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
outside the allowed tools (t9a: the stub records it, the record refuses it)."""


def make_agent(stub: OpenAIStub, ran: list[str], **model_options: Any) -> Any:
    """An agent over `make_tools(ran)` disclosing through `allowed_tools`."""
    model = ChatOpenAI(
        model="stub-model",
        base_url=stub.base_url,
        api_key=SecretStr("k"),
        max_retries=0,
        **model_options,
    )
    tools = support.make_tools(ran)
    scoping = AttentionScopingMiddleware(
        support.make_scopes(tools), selector=None, disclosure=OpenAI()
    )
    return create_agent(
        model,
        tools=list(tools.values()),
        system_prompt="Be terse.",
        middleware=[scoping],
        checkpointer=InMemorySaver(),
    )


def test_ten_turns_send_one_tools_array_and_the_scope_in_tool_choice() -> None:
    ran: list[str] = []
    with OpenAIStub(support.script_of(SESSION)) as stub:
        agent = make_agent(stub, ran)
        for text, state, _ in SESSION:
            agent.invoke({"messages": [("user", text)], **state}, support.THREAD)
        messages = agent.get_state(support.THREAD).values["messages"]
    assert stub.rejections == [] and stub.remaining == 0
    assert len({json.dumps(b["tools"], sort_keys=True) for b in stub.requests}) == 1
    assert len({stub.system_text(i) for i in range(len(stub.requests))}) == 1
    assert stub.tool_names(0) == sorted([*support.make_tools([]), "load_context"])
    allowed = [allowed_tool_names(b) for b in stub.requests]
    assert allowed[0] == {"load_context"}
    assert allowed[1] == {"load_context", "add", "multiply"}  # the model loaded math
    assert allowed[11] == {"load_context", "save_note", "list_notes"}  # its write too
    assert allowed[15] == {"load_context", "convert_km"}  # the application opened units
    # the one call outside allowed_tools: recorded by the stub, refused, never run
    assert [v["problem"] for v in stub.violations] == [
        "reply calls 'reverse' outside allowed_tools"
    ]
    refused = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "t9a")
    assert json.loads(str(refused.content))["error"] == ErrorCode.TOOL_NOT_IN_CONTEXT
    assert ran == [
        "add", "multiply", "shout", "reverse", "save_note", "list_notes", "convert_km", "add",
        "reverse",
    ]  # fmt: skip


def test_the_responses_api_gets_its_own_spelling() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "a", name="math")]},
        {"content": "ok"},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran, use_responses_api=True)
        agent.invoke({"messages": [("user", "math please")]}, support.THREAD)
    choices = [b["tool_choice"] for b in stub.requests]
    assert choices[1] == {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [
            {"type": "function", "name": "add"},
            {"type": "function", "name": "load_context"},
            {"type": "function", "name": "multiply"},
        ],
    }
    assert allowed_names(choices[1]) == ["add", "load_context", "multiply"]
    assert len({json.dumps(b["tools"], sort_keys=True) for b in stub.requests}) == 1
