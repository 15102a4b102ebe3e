"""End to end over HTTP: the real `ChatOpenAI` client against a scripted OpenAI-compatible server.

A fake chat model cannot catch serialization bugs (tool schemas the API rejects, tool results
that are not strings, tool messages missing for a tool call, ...). Here every model call goes
through `langchain_openai` + `openai` + httpx to `tests/openai_stub.py`, which validates the
request like the real API and records what it received.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, wrap_model_call
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from tests.openai_stub import OpenAIStub, ScriptEntry, auth_error
from tests.toolbox_support import Ran, make_toolbox

USER_PROMPT = "You are a terse test assistant. Sign answers with -- stub."
SCOPE_NAMES = ["math", "text", "notes"]


def call(tool: str, call_id: str, /, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call."""
    return {"name": tool, "id": call_id, "arguments": arguments}


def make_scoping(tools: dict[str, Any], **options: Any) -> AttentionScopingMiddleware:
    """Scoping over `math`, `text` and `notes`, the layered prompt, no selector (the model
    navigates with `load_context`)."""
    options = {"layout": "layered", "selector": None, **options}
    scopes = [
        Scope(
            "math",
            "integer arithmetic",
            tools=[tools["add"], tools["multiply"]],
            prompt="Use add and multiply for arithmetic.",
        ),
        Scope(
            "text",
            "string transformations",
            tools=[tools["shout"], tools["reverse"]],
            prompt="Use shout and reverse for text.",
        ),
        Scope("notes", "saving notes", tools=[tools["save_note"]]),
    ]
    return AttentionScopingMiddleware(scopes, **options)


def chat_model(stub: OpenAIStub, **kwargs: Any) -> ChatOpenAI:
    options: dict[str, Any] = {"api_key": "test-key", "max_retries": 0, "timeout": 10}
    options.update(kwargs)
    return ChatOpenAI(model="stub-model", base_url=stub.base_url, **options)


def make_agent(
    stub: OpenAIStub,
    ran: Ran,
    *,
    model_kwargs: dict[str, Any] | None = None,
    scoping: dict[str, Any] | None = None,
    **agent_kwargs: Any,
) -> Any:
    tools = make_toolbox(ran)
    return create_agent(
        chat_model(stub, **(model_kwargs or {})),
        tools=list(tools.values()),
        system_prompt=USER_PROMPT,
        middleware=[make_scoping(tools, **(scoping or {}))],
        **agent_kwargs,
    )


def payload(content: Any) -> dict[str, Any]:
    """A tool message content the server received, parsed as the JSON it must be."""
    assert isinstance(content, str), f"tool message content is not a string: {content!r}"
    return json.loads(content)


def assert_clean(stub: OpenAIStub) -> None:
    """The server rejected nothing and every scripted reply was used."""
    assert stub.rejections == [], stub.rejections
    assert stub.errors == [], stub.errors
    assert stub.remaining == 0, f"{stub.remaining} scripted replies unused"


# -- the synchronous flow --------------------------------------------------------------------


def test_switch_use_and_refuse_hidden_tool() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="math")]},
        {"tool_calls": [call("add", "c_add", a=2, b=3), call("multiply", "c_mul", a=4, b=5)]},
        {"tool_calls": [call("shout", "c_shout", text="secret")]},
        {"content": "2+3=5 and 4*5=20. -- stub"},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran)
        result = agent.invoke({"messages": [("user", "What are 2+3 and 4*5?")]})
    assert_clean(stub)
    assert len(stub.requests) == 4

    # Request 1: only the navigation tool, with the scope names as an enum.
    assert stub.tool_names(0) == ["load_context"]
    params = stub.tool_schema(0, "load_context")["parameters"]
    assert list(params["properties"]) == ["name"]  # injected args are not sent
    assert params["properties"]["name"]["enum"] == SCOPE_NAMES
    assert params["required"] == ["name"]
    system0 = stub.system_text(0)
    assert "- math: integer arithmetic" in system0
    assert "- text: string transformations" in system0
    assert "- notes: saving notes" in system0
    assert USER_PROMPT in system0
    assert "# Active context: none" in system0
    assert [m["role"] for m in stub.requests[0]["messages"]] == ["system", "user"]

    # Request 2: the math tools are loaded and the breadcrumb came back as a JSON string.
    assert set(stub.tool_names(1)) == {"load_context", "add", "multiply"}
    assert len(stub.tool_names(1)) == 3
    assert stub.tool_schema(1, "add")["parameters"]["required"] == ["a", "b"]
    system1 = stub.system_text(1)
    assert "# Active context: math" in system1
    assert "Use add and multiply for arithmetic." in system1
    assert USER_PROMPT in system1
    assert system1.startswith(system0.split("# Active context")[0])  # stable prefix
    loaded = payload(stub.tool_messages(1)["c_load"])
    assert loaded["status"] == "ok"
    assert loaded["active_context"] == "math"
    assert loaded["tools_now_available"] == ["add", "multiply", "load_context"]

    # Request 3: the real tool results, as strings, for both parallel calls.
    assert stub.tool_messages(2) == {
        "c_load": stub.tool_messages(1)["c_load"],
        "c_add": "5",
        "c_mul": "20",
    }
    assert set(stub.tool_names(2)) == {"load_context", "add", "multiply"}

    # Request 4: the hidden tool was refused with a structured error and never ran.
    refusal = payload(stub.tool_messages(3)["c_shout"])
    assert refusal["error"] == "tool_not_in_context"
    assert refusal["tool"] == "shout"
    assert refusal["available_tools"] == ["load_context", "add", "multiply"]
    assert refusal["contexts"] == ["text"]
    assert "load_context('text')" in refusal["next_step"]
    assert "message" in refusal
    assert sorted(ran) == [
        ("add", {"a": 2, "b": 3}),
        ("multiply", {"a": 4, "b": 5}),
    ]  # parallel: any order

    # Final state.
    assert result["active_context"] == "math"
    final = result["messages"][-1]
    assert isinstance(final, AIMessage)
    assert final.text == "2+3=5 and 4*5=20. -- stub"
    shout_msg = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c_shout"
    )
    assert shout_msg.status == "error"


def test_parallel_switch_and_new_scope_tool_asks_to_call_again() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {
            "tool_calls": [
                call("load_context", "c_load", name="text"),
                call("reverse", "c_rev1", text="stressed"),
            ]
        },
        {"tool_calls": [call("reverse", "c_rev2", text="stressed")]},
        {"content": "desserts"},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran)
        result = agent.invoke({"messages": [("user", "Reverse 'stressed'.")]})
    assert_clean(stub)

    # Both calls of the parallel step were answered (else the server would have said 400).
    answers = stub.tool_messages(1)
    assert set(answers) == {"c_load", "c_rev1"}
    assert payload(answers["c_load"])["active_context"] == "text"
    again = payload(answers["c_rev1"])
    assert again["error"] == "context_switched_in_same_step"
    assert again["tool"] == "reverse"
    assert again["next_step"] == "Now that the context is loaded, call reverse again."
    assert set(stub.tool_names(1)) == {"load_context", "shout", "reverse"}

    # The repeated call ran.
    assert stub.tool_messages(2)["c_rev2"] == "desserts"
    assert ran == [("reverse", {"text": "stressed"})]
    assert result["active_context"] == "text"


def test_unknown_scope_and_dict_result_round_trip() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_bad", name="weather")]},
        {"tool_calls": [call("load_context", "c_notes", name="notes")]},
        {"tool_calls": [call("save_note", "c_save", title="t1", body="hello")]},
        {"content": "Saved."},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran)
        result = agent.invoke({"messages": [("user", "Save a note t1: hello")]})
    assert_clean(stub)

    bad = payload(stub.tool_messages(1)["c_bad"])
    assert bad["error"] == "unknown_context"
    assert bad["valid_contexts"] == SCOPE_NAMES
    assert stub.tool_names(1) == ["load_context"]  # still no scope loaded
    assert set(stub.tool_names(2)) == {"load_context", "save_note"}
    # A dict tool result reaches the API as a JSON string.
    assert payload(stub.tool_messages(3)["c_save"]) == {"saved": True, "title": "t1", "chars": 5}
    assert ran == [("save_note", {"title": "t1", "body": "hello"})]
    assert result["active_context"] == "notes"


def test_two_switches_in_one_step_run_the_first() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {
            "tool_calls": [
                call("load_context", "c_text", name="text"),
                call("load_context", "c_math", name="math"),
            ]
        },
        {"content": "ok"},
    ]
    with OpenAIStub(script) as stub:
        result = make_agent(stub, ran).invoke({"messages": [("user", "hi")]})
    assert_clean(stub)
    answers = stub.tool_messages(1)
    assert "error" not in payload(answers["c_text"])
    assert payload(answers["c_math"])["error"] == "one_context_per_step"
    assert stub.tool_names(1) == ["load_context", "shout", "reverse"]
    assert result.get("active_context") == "text"


def test_scope_persists_across_turns_and_can_be_reset() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="math")]},
        {"content": "Math loaded."},
        {"tool_calls": [call("add", "c_add", a=10, b=5)]},  # turn 2: no switch needed
        {"content": "15"},
        {"content": "Hello."},  # turn 3: input reset the scope
    ]
    config = {"configurable": {"thread_id": "turns"}}
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran, checkpointer=InMemorySaver())
        agent.invoke({"messages": [("user", "Load math.")]}, config)
        second = agent.invoke({"messages": [("user", "10+5?")]}, config)
        third = agent.invoke({"messages": [("user", "hi")], "active_context": None}, config)
    assert_clean(stub)
    assert set(stub.tool_names(2)) == {"load_context", "add", "multiply"}
    assert "# Active context: math" in stub.system_text(2)
    assert stub.tool_messages(3)["c_add"] == "15"
    assert second["active_context"] == "math"
    assert stub.tool_names(4) == ["load_context"]
    assert third["active_context"] is None
    # The history sent in turn 3 still pairs every tool call with its answer.
    assert set(stub.tool_messages(4)) == {"c_load", "c_add"}


def test_default_scope_is_loaded_in_the_first_request() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("reverse", "c_rev", text="abc")]},
        {"content": "cba"},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran, scoping={"default_scope": "text"})
        result = agent.invoke({"messages": [("user", "Reverse abc")]})
    assert_clean(stub)
    assert set(stub.tool_names(0)) == {"load_context", "shout", "reverse"}
    assert "# Active context: text" in stub.system_text(0)
    assert stub.tool_messages(1)["c_rev"] == "cba"
    assert result.get("active_context") is None  # the default applies, nothing was switched


def test_structured_output_tool_is_not_scoped_away() -> None:
    class Answer(BaseModel):
        value: int

    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="math")]},
        {"tool_calls": [call("add", "c_add", a=2, b=3)]},
        {"tool_calls": [call("Answer", "c_ans", value=5)]},
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran, response_format=ToolStrategy(Answer))
        result = agent.invoke({"messages": [("user", "2+3")]})
    assert_clean(stub)
    assert stub.tool_names(0) == ["load_context", "Answer"]
    assert all(body["tool_choice"] == "required" for body in stub.requests)
    assert set(stub.tool_names(2)) == {"load_context", "add", "multiply", "Answer"}
    assert result["structured_response"] == Answer(value=5)
    assert result["active_context"] == "math"


def test_tool_choice_naming_a_hidden_tool_is_reconciled() -> None:
    @wrap_model_call
    def force_add(request: Any, handler: Any) -> Any:
        return handler(request.override(tool_choice="add"))

    ran: Ran = []
    tools = make_toolbox(ran)
    with OpenAIStub([{"content": "ok"}, {"content": "ok"}]) as stub:
        stack: list[AgentMiddleware[Any, Any]] = [force_add, make_scoping(tools)]
        agent = create_agent(chat_model(stub), middleware=stack)
        agent.invoke({"messages": [{"role": "user", "content": "1+2?"}]})
    assert stub.rejections == [], stub.rejections
    # 'add' is hidden while no scope is active: the forced choice becomes "auto".
    assert stub.requests[0]["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in stub.requests[0]["tools"]] == ["load_context"]


# -- async -----------------------------------------------------------------------------------


async def test_async_flow_with_request_dependent_reply() -> None:
    ran: Ran = []

    def answer_from_tool_result(body: dict[str, Any]) -> dict[str, Any]:
        result = body["messages"][-1]
        assert result["role"] == "tool"
        return {"content": f"The product is {result['content']}."}

    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="math")]},
        {"tool_calls": [call("multiply", "c_mul", a=6, b=7)]},
        answer_from_tool_result,
    ]
    with OpenAIStub(script) as stub:
        agent = make_agent(stub, ran)
        result = await agent.ainvoke({"messages": [("user", "6 times 7?")]})
    assert_clean(stub)
    assert stub.tool_names(0) == ["load_context"]
    assert set(stub.tool_names(1)) == {"load_context", "add", "multiply"}
    assert stub.tool_messages(2)["c_mul"] == "42"
    assert result["messages"][-1].text == "The product is 42."
    assert result["active_context"] == "math"
    assert ran == [("multiply", {"a": 6, "b": 7})]


# -- streaming -------------------------------------------------------------------------------


def test_streaming_messages_and_updates() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="text")]},
        {"tool_calls": [call("shout", "c_shout", text="hello there")]},
        {"tool_calls": [call("add", "c_add", a=1, b=1)]},
        {"content": "HELLO THERE! -- stub"},
    ]
    config = {"configurable": {"thread_id": "stream-1"}}
    with OpenAIStub(script, chunk_size=4) as stub:
        agent = make_agent(
            stub, ran, model_kwargs={"stream_usage": True}, checkpointer=InMemorySaver()
        )
        items = list(
            agent.stream(
                {"messages": [("user", "Shout 'hello there'.")]},
                config,
                stream_mode=["messages", "updates", "custom"],
            )
        )
        state = agent.get_state(config).values
    assert_clean(stub)

    # The client really streamed (SSE), with usage in the last chunk.
    assert all(body["stream"] is True for body in stub.requests)
    assert all(body["stream_options"] == {"include_usage": True} for body in stub.requests)

    chunks = [data[0] for mode, data in items if mode == "messages"]
    model_chunks = [c for c in chunks if isinstance(c, AIMessageChunk)]
    streamed_args = "".join(tc.get("args") or "" for c in model_chunks for tc in c.tool_call_chunks)
    assert '"hello there"' in streamed_args  # arguments arrived in pieces and were reassembled
    assert "".join(c.text for c in model_chunks).endswith("HELLO THERE! -- stub")
    assert any(c.usage_metadata for c in model_chunks)

    # The tool results reached the server as strings; the hidden tool was refused.
    assert stub.tool_messages(2)["c_shout"] == "HELLO THERE"
    assert payload(stub.tool_messages(3)["c_add"])["error"] == "tool_not_in_context"
    assert ran == [("shout", {"text": "hello there"})]

    updates = [data for mode, data in items if mode == "updates"]
    assert any("model" in u for u in updates)
    assert state["active_context"] == "text"
    assert state["messages"][-1].text == "HELLO THERE! -- stub"


def test_streaming_true_model_invoke() -> None:
    ran: Ran = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "c_load", name="math"), call("add", "c_a", a=1, b=2)]},
        {"tool_calls": [call("add", "c_b", a=1, b=2)]},
        {"content": "3"},
    ]
    with OpenAIStub(script, chunk_size=3) as stub:
        agent = make_agent(stub, ran, model_kwargs={"streaming": True})
        result = agent.invoke({"messages": [("user", "1+2?")]})
    assert_clean(stub)
    assert all(body["stream"] is True for body in stub.requests)
    assert payload(stub.tool_messages(1)["c_a"])["error"] == "context_switched_in_same_step"
    assert stub.tool_messages(2)["c_b"] == "3"
    assert result["active_context"] == "math"
    assert ran == [("add", {"a": 1, "b": 2})]


# -- errors ----------------------------------------------------------------------------------


def test_scripted_401_surfaces_as_authentication_error() -> None:
    ran: Ran = []
    with OpenAIStub([auth_error("sk-test-key-0000")]) as stub:
        agent = make_agent(stub, ran)
        with pytest.raises(openai.AuthenticationError) as info:
            agent.invoke({"messages": [("user", "hi")]})
    assert info.value.status_code == 401
    assert "Incorrect API key provided" in str(info.value)
    assert info.value.code == "invalid_api_key"
    assert len(stub.requests) == 1
    assert ran == []


async def test_wrong_api_key_401_async() -> None:
    ran: Ran = []
    with OpenAIStub([{"content": "unreachable"}], api_key="the-right-key") as stub:
        agent = make_agent(stub, ran)
        with pytest.raises(openai.AuthenticationError, match="Incorrect API key provided"):
            await agent.ainvoke({"messages": [("user", "hi")]})
    assert stub.headers[0]["authorization"] == "Bearer test-key"
    assert stub.remaining == 1


# -- the stub itself: it must reject what the real API rejects -------------------------------


def _post(stub: OpenAIStub, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{stub.base_url}/chat/completions", json=body, timeout=5)


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


ASSISTANT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    ],
}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    ASSISTANT_CALL,
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ]
            },
            "did not have response messages: c2",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    ASSISTANT_CALL,
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                    {"role": "user", "content": "y"},
                ]
            },
            "did not have response messages: c2",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "tool", "tool_call_id": "c9", "content": "ok"},
                ]
            },
            "must be a response to a preceeding message with 'tool_calls'",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    ASSISTANT_CALL,
                    {"role": "tool", "tool_call_id": "c1", "content": {"a": 1}},
                    {"role": "tool", "tool_call_id": "c2", "content": "ok"},
                ]
            },
            "messages[2].content",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "tools": [_tool("bad name")]},
            "does not match pattern",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "tools": [_tool("a" * 65)]},
            "does not match pattern",
        ),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "retrieval", "function": {"name": "f"}}],
            },
            "tools[0].type",
        ),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "f",
                            "strict": True,
                            "parameters": {"type": "object", "properties": {"a": {}}},
                        },
                    }
                ],
            },
            "'additionalProperties' is required",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "tools": []},
            "empty array",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "tool_choice": "auto"},
            "only allowed when 'tools' are specified",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "stream_options": {}},
            "only allowed when 'stream' is enabled",
        ),
    ],
    ids=[
        "missing-tool-answer",
        "interrupted",
        "orphan-tool",
        "dict-content",
        "name-space",
        "name-long",
        "type",
        "strict",
        "empty-tools",
        "tool-choice",
        "stream-options",
    ],
)
def test_stub_rejects_like_the_api(body: dict[str, Any], needle: str) -> None:
    with OpenAIStub([{"content": "never"}]) as stub:
        response = _post(stub, {"model": "stub-model", **body})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert needle in error["message"] or needle == error["param"], error
    assert stub.remaining == 1  # a rejected request consumes no script entry
    assert len(stub.rejections) == 1


def test_stub_wire_format_and_models() -> None:
    valid = {
        "model": "stub-model",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys"}]},
            {"role": "user", "content": "x"},
            ASSISTANT_CALL,
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "ok"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "tools": [_tool("f")],
    }
    with OpenAIStub([{"tool_calls": [call("f", "c3", x=1)]}, {"content": "hi"}]) as stub:
        first = _post(stub, valid).json()
        stream = httpx.post(
            f"{stub.base_url}/chat/completions",
            json={**valid, "stream": True, "stream_options": {"include_usage": True}},
            timeout=5,
        )
        models = httpx.get(f"{stub.base_url}/models", timeout=5).json()
        missing = _post(stub, valid)
    assert first["object"] == "chat.completion"
    choice = first["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["tool_calls"] == [
        {"id": "c3", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    ]
    assert first["usage"]["total_tokens"] == 15

    assert stream.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in stream.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    parsed = [json.loads(e) for e in events[:-1]]
    assert {p["object"] for p in parsed} == {"chat.completion.chunk"}
    assert (
        "".join(p["choices"][0]["delta"].get("content", "") for p in parsed if p["choices"]) == "hi"
    )
    assert parsed[-1]["choices"] == [] and parsed[-1]["usage"]["total_tokens"] == 15

    assert models["object"] == "list"
    assert models["data"][0]["id"] == "stub-model"
    assert missing.status_code == 500  # script exhausted
    assert "script exhausted" in missing.json()["error"]["message"]
