"""The eval's Anthropic bridge (`attention_scoping_lab.eval.anthropic_bridge`) in front of the
scripted Chat Completions server: what goes upstream under the deferral semantics, a real
`ChatAnthropic` agent with `disclosure="anthropic"` through it, and `eval --bridge anthropic`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping.disclosure import Anthropic
from attention_scoping.errors import ErrorCode
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping_lab.cli import main
from attention_scoping_lab.eval import EvalOptions, run_eval
from attention_scoping_lab.eval.anthropic_bridge import AnthropicBridge
from attention_scoping_lab.eval.anthropic_convert import ToolUseIds, anthropic_message, chat_request
from attention_scoping_lab.eval.anthropic_wire import RequestError
from attention_scoping_lab.eval.endpoint import Endpoint, bridged_chat_model
from attention_scoping_lab.eval.results import EvalResult
from attention_scoping_lab.eval.strategies import StrategyOptions
from attention_scoping_lab.eval.suites import example_suite
from tests.disclosure_support import anthropic_chat, call, make_scopes, make_tools, turn
from tests.eval_support import FENCED_CALC, NO_WAIT, offered
from tests.openai_stub import OpenAIStub, ScriptEntry

Body = dict[str, Any]


def tool(name: str, *, deferred: bool = False) -> Body:
    """A Messages API tool definition."""
    spec: Body = {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    return {**spec, "defer_loading": True} if deferred else spec


REQUEST: Body = {
    "model": "local-model",
    "max_tokens": 64,
    "temperature": 0,
    "system": [{"type": "text", "text": "Be terse."}],
    "tools": [
        tool("alpha", deferred=True),
        tool("beta", deferred=True),
        tool("gamma", deferred=True),
        tool("load_context"),
        tool("search_tools"),
    ],
    "messages": [
        {"role": "user", "content": "Do the thing."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Loading."},
                {"type": "tool_use", "id": "toolu_1", "name": "load_context", "input": {"x": "s"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "is_error": False,
                    "content": [
                        {"type": "tool_reference", "tool_name": "gamma"},
                        {"type": "tool_reference", "tool_name": "alpha"},
                        {"type": "text", "text": '{"prompt_module": "Use them."}'},
                    ],
                },
                {"type": "text", "text": "Go on."},
            ],
        },
    ],
}
"""A request after `load_context` disclosed gamma and alpha (beta stays deferred)."""


@pytest.fixture
def stub_and_bridge() -> Iterator[tuple[OpenAIStub, AnthropicBridge]]:
    with OpenAIStub() as stub, AnthropicBridge(stub.base_url, **RUN) as bridge:
        yield stub, bridge


RUN: Body = {"model": "local-model", "max_tokens": 128}
"""The run's own model and output limit, which the bridge serves and nothing else."""


def post(bridge: AnthropicBridge, body: Body) -> httpx.Response:
    headers = {"x-api-key": bridge.token}
    return httpx.post(f"{bridge.base_url}/v1/messages", json=body, headers=headers, timeout=10)


def test_upstream_gets_loaded_and_referenced_tools_in_order_and_converted_messages(
    stub_and_bridge: tuple[OpenAIStub, AnthropicBridge],
) -> None:
    stub, bridge = stub_and_bridge
    stub.script = [
        {
            "content": "Calling.",
            "tool_calls": [{"name": "gamma", "id": "call_9", "arguments": {"x": "1"}}],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 100},
            },
        }
    ]
    reply = post(bridge, REQUEST)
    assert reply.status_code == 200, reply.text
    sent = stub.requests[0]
    assert offered(sent) == ["alpha", "gamma", "load_context", "search_tools"]
    assert stub.tool_schema(0, "alpha")["parameters"] == REQUEST["tools"][0]["input_schema"]
    assert sent["model"] == "local-model" and sent["max_tokens"] == 64
    assert sent["temperature"] == 0 and sent["stream"] is False
    assert sent["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Do the thing."},
        {
            "role": "assistant",
            "content": "Loading.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "load_context", "arguments": '{"x": "s"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_1",
            "content": 'Loaded tools: gamma, alpha\n{"prompt_module": "Use them."}',
        },
        {"role": "user", "content": "Go on."},
    ]
    message = reply.json()
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    assert message["content"] == [
        {"type": "text", "text": "Calling."},
        {"type": "tool_use", "id": "call_9", "name": "gamma", "input": {"x": "1"}},
    ]
    assert message["usage"] == {
        "input_tokens": 20,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 0,
    }


def test_before_any_reference_only_loaded_tools_go_upstream_and_the_stream_answers(
    stub_and_bridge: tuple[OpenAIStub, AnthropicBridge],
) -> None:
    stub, bridge = stub_and_bridge
    stub.script = [{"content": "Hi."}]
    body = {**REQUEST, "messages": REQUEST["messages"][:1], "stream": True}
    url, headers = f"{bridge.base_url}/v1/messages", {"x-api-key": bridge.token}
    with httpx.stream("POST", url, json=body, headers=headers, timeout=10) as reply:
        events = [json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data:")]
    assert offered(stub.requests[0]) == ["load_context", "search_tools"]
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[2]["delta"] == {"type": "text_delta", "text": "Hi."}
    assert events[4]["delta"]["stop_reason"] == "end_turn"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"tools": [tool("alpha", deferred=True), tool("load_context")][:1]},
            "At least one tool must not have defer_loading: true",
        ),
        (
            {"tools": [{**tool("beta", deferred=True), "cache_control": {"type": "ephemeral"}}]},
            "cache_control cannot be set on a tool with defer_loading: true",
        ),
        (
            {"tools": [tool("alpha", deferred=True), tool("load_context")]},
            "tool_reference to 'gamma', which is not defined in tools",
        ),
    ],
)
def test_requests_the_real_api_refuses_get_its_400_and_never_go_upstream(
    stub_and_bridge: tuple[OpenAIStub, AnthropicBridge], change: Body, message: str
) -> None:
    stub, bridge = stub_and_bridge
    reply = post(bridge, {**REQUEST, **change})
    assert reply.status_code == 400
    error = reply.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert message in error["error"]["message"]
    assert stub.requests == []


def test_an_upstream_failure_keeps_its_status_in_anthropic_shape(
    stub_and_bridge: tuple[OpenAIStub, AnthropicBridge],
) -> None:
    stub, bridge = stub_and_bridge
    stub.script = [{"status": 503, "error": {"message": "loading model", "type": "server_error"}}]
    reply = post(bridge, REQUEST)
    assert reply.status_code == 503
    assert reply.json()["error"]["type"] == "api_error"
    assert "loading model" in reply.json()["error"]["message"]


# -- a real agent through the bridge ----------------------------------------------------------


def chat_model(bridge: AnthropicBridge) -> ChatAnthropic:
    return anthropic_chat(
        bridge.base_url,
        model="local-model",
        api_key=SecretStr(bridge.token),
        max_tokens=128,
        temperature=0,
    )


def scoped_agent(bridge: AnthropicBridge, ran: list[str]) -> Any:
    tools = make_tools(ran)
    scoping = AttentionScopingMiddleware(make_scopes(tools), selector=None, disclosure=Anthropic())
    return create_agent(
        chat_model(bridge),
        tools=list(tools.values()),
        middleware=[scoping],
        checkpointer=InMemorySaver(),
    )


def test_a_chat_anthropic_agent_loads_a_scope_through_the_bridge_and_calls_its_tool() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("load_context", "call_a", name="math")]},
        {"tool_calls": [call("add", "call_b", a=2, b=3)]},
        {"content": "5"},
    ]
    with OpenAIStub(script) as stub, AnthropicBridge(stub.base_url, **RUN) as bridge:
        result = turn(scoped_agent(bridge, ran), "Please add 2 and 3.")
    assert ran == ["add"]
    assert result["active_context"] == "math"
    assert result["messages"][-1].content == "5"
    seen = [offered(body) for body in stub.requests]
    loaded_math = ["add", "multiply", "load_context"]
    assert seen == [["load_context"], loaded_math, loaded_math]
    assert "Loaded tools: add, multiply" in stub.tool_messages(1)["call_a"]


def test_a_call_of_an_undisclosed_tool_is_refused_and_never_runs() -> None:
    ran: list[str] = []
    script: list[ScriptEntry] = [
        {"tool_calls": [call("shout", "call_x", text="hi")]},
        {"content": "sorry"},
    ]
    with OpenAIStub(script) as stub, AnthropicBridge(stub.base_url, **RUN) as bridge:
        result = turn(scoped_agent(bridge, ran), "Shout hi.")
    assert "shout" not in offered(stub.requests[0])
    refusal = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert refusal.status == "error" and refusal.tool_call_id == "call_x"
    assert json.loads(str(refusal.content))["error"] == ErrorCode.TOOL_NOT_IN_CONTEXT
    assert ran == []
    assert ErrorCode.TOOL_NOT_IN_CONTEXT in stub.tool_messages(1)["call_x"]


# -- the eval (the lab's strategies) ---------------------------------------------------------


SEARCH_TOOL = "search_tools"
"""The client-side search tool the lab's `*-anthropic` strategies offer."""


def scoped_model(body: Body) -> Body:
    """A model that loads the math scope, calls `calculate` once it is offered, then answers;
    eager's first reply writes the call as text (for `--parse-text-tool-calls`)."""
    names = offered(body)
    if body["messages"][-1]["role"] == "tool" and '"active_context"' not in str(
        body["messages"][-1]["content"]
    ):  # a tool's result, not load_context's
        return {"content": f"It is {body['messages'][-1]['content']}."}
    if "calculate" in names and "load_context" not in names:
        return {"content": FENCED_CALC}
    if "calculate" in names:
        return {"tool_calls": [{"name": "calculate", "arguments": {"expression": "47*83"}}]}
    return {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]}


def test_eval_names_the_valid_bridges(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--bridge", "gemini", "--base-url", "http://127.0.0.1:9/v1"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: unknown --bridge 'gemini'; choose from anthropic"


def bridged_run(stub: OpenAIStub, strategies: list[str]) -> EvalResult:
    """The example suite's math-multiply under `strategies`, `ChatAnthropic` on a bridge in
    front of `stub`, text calls converted."""
    suite = example_suite().select(["math-multiply"])
    with AnthropicBridge(stub.base_url, model="local-model", max_tokens=512) as bridge:
        endpoint = Endpoint(stub.base_url, "not-needed", None, 30.0)
        model = bridged_chat_model(bridge, endpoint)
        options = EvalOptions(
            model_name="local-model",
            parse_text_calls=True,
            retry=NO_WAIT,
            strategy_options=StrategyOptions(ranker="bm25"),
        )
        return run_eval(suite, strategies, model, options)


def test_scoped_and_gated_stay_rewrite_on_chat_anthropic() -> None:
    """Through the bridge every strategy has `ChatAnthropic`, on which the middleware's default
    disclosure ("auto") would be the anthropic mode: the eval pins `scoped` and `gated` to
    "rewrite", so no search tool and no deferral reach the model."""
    with OpenAIStub([scoped_model] * 6) as stub:
        result = bridged_run(stub, ["scoped", "gated"])
    assert [(r.strategy, r.success) for r in result.results] == [
        ("scoped", True),
        ("gated", True),
    ]
    assert all(SEARCH_TOOL not in offered(b) for b in stub.requests)
    assert "load_context" in offered(stub.requests[0])
    assert any("calculate" in offered(b) for b in stub.requests)


# -- the translation, pure ------------------------------------------------------------------


def test_a_reply_keeps_what_the_model_wrote_and_makes_ids_the_api_accepts() -> None:
    completion = {
        "choices": [
            {
                "finish_reason": "length",
                "message": {
                    "content": "",
                    "tool_calls": [
                        {"id": "", "function": {"name": "alpha", "arguments": '{"x": "1"}'}},
                        {"id": "call.7", "function": {"name": "beta", "arguments": "{}"}},
                        {"id": "call_8", "function": {"name": "gamma", "arguments": '{"x": '}},
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4},
    }
    message = anthropic_message(completion, "m", ToolUseIds(), "msg_1")
    assert message["content"] == [
        {"type": "tool_use", "id": "toolu_bridge_1", "name": "alpha", "input": {"x": "1"}},
        {"type": "tool_use", "id": "toolu_bridge_2", "name": "beta", "input": {}},
        {"type": "text", "text": '{"name": "gamma", "arguments": "{\\"x\\": "}'},
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["input_tokens"] == 9 and message["usage"]["output_tokens"] == 4
    text_only = {"choices": [{"finish_reason": "length", "message": {"content": "Half"}}]}
    assert anthropic_message(text_only, "m", ToolUseIds(), "msg_2")["stop_reason"] == "max_tokens"


def test_tool_choice_and_options_map_and_unknown_blocks_are_a_400() -> None:
    body = {
        **REQUEST,
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "stop_sequences": ["END"],
    }
    request = chat_request(body)
    assert request["tool_choice"] == "required" and request["parallel_tool_calls"] is False
    assert request["stop"] == ["END"]
    named = chat_request({**REQUEST, "tool_choice": {"type": "tool", "name": "gamma"}})
    assert named["tool_choice"] == {"type": "function", "function": {"name": "gamma"}}
    thinking = {"type": "thinking", "thinking": "hm", "signature": "s"}
    messages = [*REQUEST["messages"][:1], {"role": "assistant", "content": [thinking]}]
    assert chat_request({**REQUEST, "messages": messages})["messages"][-1] == {
        "role": "assistant",
        "content": "",
    }
    image = {"type": "image", "source": {"type": "url", "url": "https://example.org/a.png"}}
    with pytest.raises(RequestError, match=r"messages\.0\.content\.0: the bridge forwards text"):
        chat_request({**REQUEST, "messages": [{"role": "user", "content": [image]}]})


# -- who may spend the key (issue 35, 5) ----------------------------------------------------


def send(bridge: AnthropicBridge, body: Body, headers: dict[str, str]) -> httpx.Response:
    """POST `body` as JSON text with exactly `headers` (no token unless given)."""
    url = f"{bridge.base_url}/v1/messages"
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=10)


def test_the_issue_reproducer_no_token_and_plain_text_never_reach_upstream() -> None:
    """Issue 35, 5: a local caller with no token, `content-type: text/plain`, its own model
    and `max_tokens: 100000` is refused; upstream sees nothing, so never the user's key."""
    with (
        OpenAIStub([{"content": "spent"}]) as stub,
        AnthropicBridge(
            stub.base_url, api_key="users-key-123", model="local-model", max_tokens=128
        ) as bridge,
    ):
        body = {**REQUEST, "model": "claude-opus", "max_tokens": 100_000}
        reply = send(bridge, body, {"content-type": "text/plain"})
        assert reply.status_code == 401
        assert reply.json()["error"]["type"] == "authentication_error"
        assert stub.requests == [] and stub.headers == []


TOKEN = "<the bridge's token>"
JSON = "application/json"


@pytest.mark.parametrize(
    ("headers", "change", "status", "message"),
    [
        ({"content-type": JSON, "x-api-key": "guessed"}, {}, 401, "x-api-key"),
        ({"content-type": JSON}, {}, 401, "x-api-key"),
        ({"content-type": "text/plain", "x-api-key": TOKEN}, {}, 415, "must be application/json"),
        ({"x-api-key": TOKEN}, {}, 415, "must be application/json"),
        (
            {"content-type": JSON, "x-api-key": TOKEN},
            {"model": "claude-opus"},
            400,
            "'local-model'",
        ),
        ({"content-type": JSON, "x-api-key": TOKEN}, {"max_tokens": 100_000}, 400, "1 to 128"),
        ({"content-type": JSON, "x-api-key": TOKEN}, {"max_tokens": None}, 400, "1 to 128"),
    ],
)
def test_a_refused_request_never_goes_upstream(
    headers: dict[str, str], change: Body, status: int, message: str
) -> None:
    """No token or a wrong one, a body that is not declared JSON, another model or a larger
    output limit: refused before anything goes upstream; the run's own request goes through."""
    with (
        OpenAIStub([{"content": "spent"}]) as stub,
        AnthropicBridge(stub.base_url, api_key="users-key-123", **RUN) as bridge,
    ):
        sent = {k: bridge.token if v == TOKEN else v for k, v in headers.items()}
        body = {k: v for k, v in {**REQUEST, **change}.items() if v is not None}
        reply = send(bridge, body, sent)
        assert reply.status_code == status, reply.text
        assert message in reply.json()["error"]["message"]
        assert stub.requests == [] and stub.headers == []
        ok = send(bridge, REQUEST, {"content-type": JSON, "x-api-key": bridge.token})
        assert ok.status_code == 200, ok.text
        assert stub.headers[0]["authorization"] == "Bearer users-key-123"


def test_each_bridge_has_its_own_random_token() -> None:
    one = AnthropicBridge("http://127.0.0.1:9/v1", model="m", max_tokens=8)
    two = AnthropicBridge("http://127.0.0.1:9/v1", model="m", max_tokens=8)
    assert len(one.token) >= 32 and one.token != two.token
    assert one.token not in repr(one)
