"""The scripted `/v1/responses` endpoint: namespaces, deferred functions, client tool search,
the API's 400s, and prompt-cache usage where deferred definitions are not in the prompt."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tests.openai_responses_stub import visible_tool
from tests.openai_stub import OpenAIStub

SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
SEARCH = {
    "type": "tool_search",
    "execution": "client",
    "description": "Find tools by what they do.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
}


def _fn(name: str, deferred: bool = True, description: str = "") -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "function", "name": name, "parameters": SCHEMA}
    if description:
        tool["description"] = description
    if deferred:
        tool["defer_loading"] = True
    return tool


def _ns(name: str, *functions: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "namespace",
        "name": name,
        "description": f"{name} tools",
        "tools": [*functions],
    }


BILLING = _ns("billing", _fn("get_invoice"), _fn("refund"))
TOOLS = [_fn("load_context", deferred=False), BILLING, SEARCH]


def _post(stub: OpenAIStub, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{stub.base_url}/responses",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _body(items: list[dict[str, Any]], tools: list[dict[str, Any]] = TOOLS) -> dict[str, Any]:
    return {"model": "stub-model", "tools": tools, "input": items}


USER = {"type": "message", "role": "user", "content": "refund invoice 3"}


def _loaded(call_id: str = "ts1") -> list[dict[str, Any]]:
    return [
        {
            "type": "tool_search_call",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "arguments": {"query": "refund"},
        },
        {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "tools": [_ns("billing", _fn("refund"))],
        },
    ]


def _call(namespace: str | None = "billing", call_id: str = "c1") -> dict[str, Any]:
    item = {"type": "function_call", "call_id": call_id, "name": "refund", "arguments": "{}"}
    return {**item, "namespace": namespace} if namespace else item


def _output(call_id: str = "c1") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "done"}


def test_valid_history_with_search_and_namespaced_call_is_accepted() -> None:
    with OpenAIStub(script=[{"content": "ok"}]) as stub:
        status, reply = _post(stub, _body([USER, *_loaded(), _call(), _output()]))
    assert status == 200, reply
    assert reply["output"][0]["content"][0]["text"] == "ok"
    assert stub.responses.loaded(0) == ["billing.refund"]


def test_function_call_without_its_namespace_is_a_400() -> None:
    with OpenAIStub(script=[{"content": "never"}]) as stub:
        status, reply = _post(stub, _body([USER, *_loaded(), _call(None), _output()]))
    assert status == 400
    assert reply["error"]["message"].startswith("Missing namespace for function_call 'refund'")
    assert reply["error"]["param"] == "input[3].namespace"
    assert stub.remaining == 1  # a rejected request consumes no script entry


def test_call_output_pairing_is_enforced() -> None:
    with OpenAIStub(script=[]) as stub:
        orphan = _post(stub, _body([USER, _output("nope")]))
        unanswered = _post(stub, _body([USER, *_loaded(), _call()]))
        search_open = _post(stub, _body([USER, _loaded()[0]]))
    assert orphan[0] == 400 and "No tool call found" in orphan[1]["error"]["message"]
    assert (
        unanswered[0] == 400
        and "No tool output found for function call c1" in (unanswered[1]["error"]["message"])
    )
    assert search_open[0] == 400 and "tool search call ts1" in search_open[1]["error"]["message"]


def test_tool_definitions_are_validated() -> None:
    no_description = {**BILLING, "description": ""}
    empty = {**BILLING, "tools": []}
    deferred_alone = [_fn("get_invoice")]
    with OpenAIStub(script=[]) as stub:
        answers = [
            _post(stub, _body([USER], [no_description, SEARCH])),
            _post(stub, _body([USER], [empty, SEARCH])),
            _post(stub, _body([USER], deferred_alone)),
            _post(stub, _body([USER], [{**BILLING, "defer_loading": True}, SEARCH])),
            _post(stub, _body([USER], [BILLING, BILLING, SEARCH])),
        ]
    assert [status for status, _ in answers] == [400] * 5
    assert "description" in answers[0][1]["error"]["param"]
    assert "require the 'tool_search' tool" in answers[2][1]["error"]["message"]


def test_scripted_calls_need_the_function_loaded() -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "refund", "arguments": {"id": 3}}]},
        {"tool_calls": [{"name": "refund", "arguments": {"id": 3}}], "allow_unloaded": True},
        {"tool_calls": [{"name": "refund", "arguments": {"id": 3}}]},
    ]
    with OpenAIStub(script=script) as stub:
        unloaded = _post(stub, _body([USER]))
        misbehaving = _post(stub, _body([USER]))
        loaded = _post(stub, _body([USER, *_loaded()]))
    assert unloaded[0] == 500 and "not callable" in unloaded[1]["error"]["message"]
    assert misbehaving[0] == 200 and misbehaving[1]["output"][0]["namespace"] == "billing"
    assert loaded[0] == 200
    call = loaded[1]["output"][0]
    assert (call["type"], call["name"], call["namespace"]) == ("function_call", "refund", "billing")


def test_tool_search_reply_is_a_client_search_call() -> None:
    with OpenAIStub(script=[{"tool_search": {"query": "refund"}}]) as stub:
        status, reply = _post(stub, _body([USER]))
    item = reply["output"][0]
    assert status == 200
    assert (item["type"], item["execution"], item["arguments"]) == (
        "tool_search_call",
        "client",
        {"query": "refund"},
    )


def test_deferred_definitions_are_hidden_until_loaded() -> None:
    assert visible_tool(BILLING) == {
        "type": "namespace",
        "name": "billing",
        "description": "billing tools",
    }
    assert visible_tool(_fn("x", description="d")) == {
        "type": "function",
        "name": "x",
        "description": "d",
    }
    loaded = _ns("billing", _fn("get_invoice", deferred=False))
    assert visible_tool(loaded)["tools"] == [_fn("get_invoice", deferred=False)]


def test_usage_counts_deferred_schemas_only_once_loaded() -> None:
    long = "Rules. " + " ".join(f"Rule {i}: be brief and exact." for i in range(200))
    system = {"type": "message", "role": "system", "content": long}
    big = _ns(
        "billing",
        *[_fn(f"tool_{i}", description="x " * 200) for i in range(8)],
    )
    small = _ns("billing", _fn("tool_0"))
    with OpenAIStub(script=[{"content": "a"}] * 4, prompt_cache=True) as stub:
        _, plain_big = _post(stub, _body([system, USER], [big, SEARCH]))
        _, plain_small = _post(stub, _body([system, USER], [small, SEARCH]))
        load = [{**_loaded()[0]}, {**_loaded()[1], "tools": [big]}]
        _, loaded = _post(stub, _body([system, USER, *load], [big, SEARCH]))
    big_in = plain_big["usage"]["input_tokens"]
    assert big_in == plain_small["usage"]["input_tokens"]  # deferred: not in the prompt
    assert loaded["usage"]["input_tokens"] > big_in + 8 * 100  # loaded at the tail
    cached = loaded["usage"]["input_tokens_details"]["cached_tokens"]
    assert cached >= 1024 and cached % 128 == 0  # the unchanged prefix was read from cache


def test_chat_openai_round_trip_keeps_the_namespace() -> None:
    script: list[dict[str, Any]] = [
        {"tool_search": {"query": "refund"}},
        {"tool_calls": [{"name": "refund", "arguments": {"id": 3}}]},
        {"content": "refunded"},
    ]
    with OpenAIStub(script=script) as stub:
        model = ChatOpenAI(
            model="stub-model",
            base_url=stub.base_url,
            api_key=SecretStr("test-key"),
            use_responses_api=True,
        ).bind_tools(TOOLS)
        history: list[Any] = [SystemMessage("Be brief."), HumanMessage("refund invoice 3")]
        search = model.invoke(history)
        assert not search.tool_calls  # a search is not a tool call for the agent loop
        block = search.content[0]
        assert isinstance(block, dict) and block["type"] == "tool_search_call"
        output = {
            "type": "tool_search_output",
            "call_id": block["call_id"],
            "execution": "client",
            "status": "completed",
            "tools": [_ns("billing", _fn("refund"))],
        }
        history.append(search.model_copy(update={"content": [*search.content, output]}))
        call = model.invoke(history)
        history += [call, ToolMessage("done", tool_call_id=call.tool_calls[0]["id"])]
        final = model.invoke(history)
    assert final.text == "refunded"
    assert stub.rejections == []
    echoed = stub.responses.items(2, "function_call")
    assert [(c["name"], c.get("namespace")) for c in echoed] == [("refund", "billing")]
    assert stub.responses.tools_json(0) == stub.responses.tools_json(2)
