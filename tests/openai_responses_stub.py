"""The `POST /v1/responses` half of the scripted OpenAI server (`tests/openai_stub.py`).

`OpenAIStub` routes Responses requests here, so a test drives `ChatOpenAI(use_responses_api=True)`
against the same server, script and recordings as the chat-completions side. What it implements
of the Responses API is what the `"openai"` disclosure mode relies on:

- `tools` with top-level functions, `namespace`s of functions, `defer_loading` and the
  `tool_search` tool (client execution), validated as the API does (names, non-empty namespace
  descriptions and tool lists, deferred tools only with a `tool_search` tool, ...);
- the input items `message`, `function_call` (with `namespace`), `function_call_output`,
  `tool_search_call` and `tool_search_output`, with the API's pairing rules and its
  `Missing namespace for function_call` 400;
- a deferred function is callable only after a `tool_search_output` earlier in the input
  loaded it: a scripted call to one that is not loaded is a script error (HTTP 500) unless the
  spec says `"allow_unloaded": true` (a model misbehaving, which the client must refuse);
- with `prompt_cache=True`, usage by OpenAI's prefix rule where deferred definitions are not
  part of the prompt until a `tool_search_output` loads them (at that item's position).

Reply specs for this endpoint (one script entry per accepted request, in this order of output):

- `{"tool_search": {"query": "..."}}`: a client `tool_search_call` with these arguments;
- `{"content": "text"}`: an assistant message;
- `{"tool_calls": [{"name": "get_invoice", "arguments": {...}, "id"?: "call_x",
  "namespace"?: "billing"}]}`: `function_call` items; the namespace is filled in from where
  the request declares (and loaded) the function when not given;
- optionally `usage` (Responses form), `allow_unloaded`; error specs, callables, `delay` and
  `raw` work as on the chat side. Streaming is not implemented (ChatOpenAI's `invoke` does not
  stream).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.openai_stub import TOOL_NAME, RequestError, error_body

if TYPE_CHECKING:
    from tests.openai_stub import OpenAIStub, _Handler

NAMESPACE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What the stub accepts as a namespace name (the function-name pattern)."""

INPUT_ROLES = {"user", "system", "developer", "assistant"}
BUILTIN_TOOLS = {
    "file_search",
    "web_search",
    "web_search_preview",
    "code_interpreter",
    "image_generation",
    "mcp",
    "computer_use_preview",
    "local_shell",
    "apply_patch",
    "custom",
}


# -- the tools of a request ------------------------------------------------------------------


@dataclass
class Catalog:
    """Functions a request declares or loads: `(namespace or None, name) -> definition`."""

    functions: dict[tuple[str | None, str], dict[str, Any]] = field(default_factory=dict)
    deferred: set[tuple[str | None, str]] = field(default_factory=set)
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    search: dict[str, Any] | None = None
    loaded: set[tuple[str | None, str]] = field(default_factory=set)

    def callable_now(self) -> set[tuple[str | None, str]]:
        """Declared functions not deferred, plus those a `tool_search_output` loaded."""
        return (set(self.functions) - self.deferred) | self.loaded

    def namespaces_of(self, name: str) -> list[str]:
        """Namespaces (declared or loaded) holding a function `name`."""
        return sorted({ns for ns, fn in (*self.functions, *self.loaded) if ns and fn == name})


def _function(tool: Any, where: str) -> dict[str, Any]:
    """Check one function definition (Responses form) and return it."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        ttype = tool.get("type") if isinstance(tool, dict) else None
        msg = f"Invalid value: {ttype!r}. Supported values are: 'function' and 'custom'."
        raise RequestError(msg, param=f"{where}.type", code="invalid_value")
    if "function" in tool:
        msg = f"Unknown parameter: '{where}.function'."
        raise RequestError(msg, param=f"{where}.function", code="unknown_parameter")
    name = tool.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        msg = (
            f"Invalid '{where}.name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'."
        )
        raise RequestError(msg, param=f"{where}.name", code="invalid_value")
    params = tool.get("parameters")
    if params is not None and (
        not isinstance(params, dict) or params.get("type", "object") != "object"
    ):
        msg = (
            f"Invalid schema for function '{name}': schema must be a JSON Schema of "
            "'type: \"object\"'."
        )
        raise RequestError(msg, param=f"{where}.parameters", code="invalid_function_parameters")
    if "defer_loading" in tool and not isinstance(tool["defer_loading"], bool):
        msg = f"Invalid type for '{where}.defer_loading': expected a boolean."
        raise RequestError(msg, param=f"{where}.defer_loading", code="invalid_type")
    return tool


def _namespace(tool: dict[str, Any], where: str) -> tuple[str, list[dict[str, Any]]]:
    """Check one namespace; return its name and functions."""
    name = tool.get("name")
    if not isinstance(name, str) or not NAMESPACE_NAME.match(name):
        msg = f"Invalid '{where}.name': expected a namespace name matching '^[a-zA-Z0-9_-]+$'."
        raise RequestError(msg, param=f"{where}.name", code="invalid_value")
    description = tool.get("description")
    if not isinstance(description, str) or not description:
        msg = f"Missing required parameter: '{where}.description'."
        raise RequestError(msg, param=f"{where}.description", code="missing_required_parameter")
    if "defer_loading" in tool:
        msg = (
            f"Unknown parameter: '{where}.defer_loading'. Set defer_loading on the functions "
            "inside the namespace."
        )
        raise RequestError(msg, param=f"{where}.defer_loading", code="unknown_parameter")
    inner = tool.get("tools")
    if not isinstance(inner, list) or not inner:
        msg = f"Invalid '{where}.tools': empty array. Expected an array with minimum length 1."
        raise RequestError(msg, param=f"{where}.tools", code="empty_array")
    functions = [_function(t, f"{where}.tools[{j}]") for j, t in enumerate(inner)]
    names = [f["name"] for f in functions]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        msg = f"Duplicate function name {duplicate!r} in namespace {name!r}."
        raise RequestError(msg, param=f"{where}.tools", code="invalid_value")
    return name, functions


def _add(catalog: Catalog, key: tuple[str | None, str], tool: dict[str, Any], where: str) -> None:
    if key in catalog.functions:
        shown = f"{key[0]}.{key[1]}" if key[0] else key[1]
        msg = f"Duplicate tool name {shown!r} in 'tools'."
        raise RequestError(msg, param=where, code="invalid_value")
    catalog.functions[key] = tool
    if tool.get("defer_loading") is True:
        catalog.deferred.add(key)


def _tool_search(tool: dict[str, Any], catalog: Catalog, where: str) -> None:
    if catalog.search is not None:
        msg = "Only one 'tool_search' tool may be given."
        raise RequestError(msg, param=where, code="invalid_value")
    execution = tool.get("execution", "server")
    if execution not in ("server", "client"):
        msg = f"Invalid value: {execution!r}. Supported values are: 'server' and 'client'."
        raise RequestError(msg, param=f"{where}.execution", code="invalid_value")
    params = tool.get("parameters")
    if execution == "client" and params is not None and not isinstance(params, dict):
        msg = f"Invalid type for '{where}.parameters': expected an object."
        raise RequestError(msg, param=f"{where}.parameters", code="invalid_type")
    catalog.search = tool


def read_tools(body: Mapping[str, Any]) -> Catalog:
    """Validate `tools` (and `tool_choice`) of a Responses request; return its catalog."""
    catalog = Catalog()
    tools = body.get("tools")
    if tools is None:
        tools = []
    if not isinstance(tools, list):
        msg = "Invalid type for 'tools': expected an array."
        raise RequestError(msg, param="tools", code="invalid_type")
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        ttype = tool.get("type") if isinstance(tool, dict) else None
        if ttype == "function":
            _add(catalog, (None, _function(tool, where)["name"]), tool, where)
        elif ttype == "namespace":
            ns, functions = _namespace(tool, where)
            if ns in catalog.namespaces or (None, ns) in catalog.functions:
                msg = f"Duplicate tool name {ns!r} in 'tools'."
                raise RequestError(msg, param=where, code="invalid_value")
            catalog.namespaces[ns] = tool
            for fn in functions:
                _add(catalog, (ns, fn["name"]), fn, where)
        elif ttype == "tool_search":
            _tool_search(tool, catalog, where)
        elif ttype not in BUILTIN_TOOLS:
            msg = (
                f"Invalid value: {ttype!r}. Supported values are: 'function', 'namespace', "
                "'tool_search', ..."
            )
            raise RequestError(msg, param=f"{where}.type", code="invalid_value")
    if catalog.deferred and catalog.search is None:
        msg = "Tools with defer_loading require the 'tool_search' tool in 'tools'."
        raise RequestError(msg, param="tools", code="invalid_value")
    _check_tool_choice(body, catalog)
    return catalog


def _check_tool_choice(body: Mapping[str, Any], catalog: Catalog) -> None:
    choice = body.get("tool_choice")
    if isinstance(choice, str) and choice not in ("none", "auto", "required"):
        msg = f"Invalid value: {choice!r}. Supported values are: 'none', 'auto', and 'required'."
        raise RequestError(msg, param="tool_choice", code="invalid_value")
    if isinstance(choice, dict) and choice.get("type") == "function":
        key = (None, choice.get("name"))
        if key not in catalog.functions or key in catalog.deferred:
            msg = (
                f"Invalid value for 'tool_choice': {choice.get('name')!r} is not a top-level "
                "function that is loaded (namespaces and deferred functions cannot be named)."
            )
            raise RequestError(msg, param="tool_choice", code="invalid_value")


# -- the input items -------------------------------------------------------------------------


@dataclass
class _Walk:
    """Pairing state while reading `input` in order."""

    catalog: Catalog
    calls: dict[str, int] = field(default_factory=dict)  # function call_id -> item index
    answered: set[str] = field(default_factory=set)
    searches: dict[str, int] = field(default_factory=dict)  # client tool_search call_id
    searched: set[str] = field(default_factory=set)


def _message(item: dict[str, Any], where: str) -> None:
    role = item.get("role")
    if role not in INPUT_ROLES:
        msg = (
            f"Invalid value: {role!r}. Supported values are: 'user', 'system', 'developer' "
            "and 'assistant'."
        )
        raise RequestError(msg, param=f"{where}.role", code="invalid_value")
    content = item.get("content")
    if isinstance(content, str):
        return
    allowed = (
        {"output_text", "refusal"}
        if role == "assistant"
        else {
            "input_text",
            "input_image",
            "input_file",
        }
    )
    if not isinstance(content, list) or not content:
        msg = f"Invalid '{where}.content': expected a string or a non-empty array."
        raise RequestError(msg, param=f"{where}.content", code="invalid_value")
    for j, part in enumerate(content):
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype not in allowed:
            msg = f"Invalid value: {ptype!r}. Supported values are: {', '.join(sorted(allowed))}."
            raise RequestError(msg, param=f"{where}.content[{j}].type", code="invalid_value")


def _function_call(item: dict[str, Any], where: str, walk: _Walk, index: int) -> None:
    for key in ("call_id", "name", "arguments"):
        if not isinstance(item.get(key), str):
            msg = f"Missing required parameter: '{where}.{key}'."
            raise RequestError(msg, param=f"{where}.{key}", code="missing_required_parameter")
    name, ns = item["name"], item.get("namespace")
    catalog = walk.catalog
    known = set(catalog.functions) | catalog.loaded
    if ns is None and (None, name) not in known and catalog.namespaces_of(name):
        msg = (
            f"Missing namespace for function_call '{name}'. It does not exist in the default "
            "namespace. Round-trip the model's function_call item with its namespace field "
            "included."
        )
        raise RequestError(msg, param=f"{where}.namespace")
    if ns is not None and (ns, name) not in known:
        msg = f"Function '{name}' does not exist in namespace {ns!r}."
        raise RequestError(msg, param=f"{where}.namespace", code="invalid_value")
    if item["call_id"] in walk.calls:
        msg = f"Duplicate function call with call_id {item['call_id']}."
        raise RequestError(msg, param=f"{where}.call_id", code="invalid_value")
    walk.calls[item["call_id"]] = index


def _function_call_output(item: dict[str, Any], where: str, walk: _Walk) -> None:
    call_id = item.get("call_id")
    if call_id not in walk.calls:
        msg = f"No tool call found for function call output with call_id {call_id}."
        raise RequestError(msg, param=where)
    output = item.get("output")
    if not isinstance(output, (str, list)):
        msg = f"Invalid type for '{where}.output': expected a string or an array."
        raise RequestError(msg, param=f"{where}.output", code="invalid_type")
    walk.answered.add(str(call_id))


def _tool_search_call(item: dict[str, Any], where: str, walk: _Walk) -> None:
    if not isinstance(item.get("arguments"), (dict, list, str)):
        msg = f"Missing required parameter: '{where}.arguments'."
        raise RequestError(msg, param=f"{where}.arguments", code="missing_required_parameter")
    if item.get("execution") == "client":
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            msg = f"Missing required parameter: '{where}.call_id'."
            raise RequestError(msg, param=f"{where}.call_id", code="missing_required_parameter")
        walk.searches[call_id] = len(walk.searches)


def _tool_search_output(item: dict[str, Any], where: str, walk: _Walk) -> None:
    call_id = item.get("call_id")
    if item.get("execution") == "client" and call_id not in walk.searches:
        msg = f"No tool search call found for tool search output with call_id {call_id}."
        raise RequestError(msg, param=where)
    tools = item.get("tools")
    if not isinstance(tools, list):
        msg = f"Missing required parameter: '{where}.tools'."
        raise RequestError(msg, param=f"{where}.tools", code="missing_required_parameter")
    for j, tool in enumerate(tools):
        sub = f"{where}.tools[{j}]"
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            ns, functions = _namespace(tool, sub)
            walk.catalog.loaded |= {(ns, f["name"]) for f in functions}
        else:
            walk.catalog.loaded.add((None, _function(tool, sub)["name"]))
    if isinstance(call_id, str):
        walk.searched.add(call_id)


def read_input(body: Mapping[str, Any], catalog: Catalog) -> None:
    """Validate `input` against the API's item and pairing rules; record what it loaded."""
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list) or not items:
        msg = "Invalid 'input': expected a string or a non-empty array of items."
        raise RequestError(msg, param="input")
    walk = _Walk(catalog)
    for i, item in enumerate(items):
        where = f"input[{i}]"
        itype = item.get("type", "message") if isinstance(item, dict) else None
        if itype == "message":
            _message(item, where)
        elif itype == "function_call":
            _function_call(item, where, walk, i)
        elif itype == "function_call_output":
            _function_call_output(item, where, walk)
        elif itype == "tool_search_call":
            _tool_search_call(item, where, walk)
        elif itype == "tool_search_output":
            _tool_search_output(item, where, walk)
        elif itype not in ("reasoning", "item_reference"):
            msg = f"Invalid value: {itype!r} is not a supported input item type."
            raise RequestError(msg, param=f"{where}.type", code="invalid_value")
    open_calls = [c for c in walk.calls if c not in walk.answered]
    if open_calls:
        msg = f"No tool output found for function call {open_calls[0]}."
        raise RequestError(msg, param="input")
    open_searches = [c for c in walk.searches if c not in walk.searched]
    if open_searches:
        msg = f"No tool output found for tool search call {open_searches[0]}."
        raise RequestError(msg, param="input")


def validate_responses_request(body: Any) -> Catalog:
    """Raise `RequestError` where the real Responses endpoint answers 400; else the catalog
    of the request with what its input loaded."""
    if not isinstance(body, dict):
        msg = "We could not parse the JSON body of your request."
        raise RequestError(msg)
    if not isinstance(body.get("model"), str) or not body["model"]:
        msg = "Missing required parameter: 'model'."
        raise RequestError(msg, param="model", code="missing_required_parameter")
    if "messages" in body:
        msg = "Unknown parameter: 'messages'."
        raise RequestError(msg, param="messages", code="unknown_parameter")
    catalog = read_tools(body)
    read_input(body, catalog)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        msg = "Invalid type for 'instructions': expected a string."
        raise RequestError(msg, param="instructions", code="invalid_type")
    return catalog


# -- what the model sees, for prompt-cache usage ---------------------------------------------


def visible_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A `tools` entry as rendered into the prompt at the start of a request: deferred
    functions only by name and description, a namespace by its name and description plus the
    functions in it that are not deferred."""
    if tool.get("type") == "function" and tool.get("defer_loading") is True:
        return {k: tool[k] for k in ("type", "name", "description") if k in tool}
    if tool.get("type") == "namespace":
        loaded = [t for t in tool.get("tools") or [] if t.get("defer_loading") is not True]
        shown = {k: tool[k] for k in ("type", "name", "description") if k in tool}
        return {**shown, "tools": loaded} if loaded else shown
    return dict(tool)


def render_blocks(body: Mapping[str, Any]) -> tuple[list[Any], list[str], list[Any]]:
    """`(tools, system, messages)` of a Responses request in prompt order for
    `attention_scoping_lab.cost.render_request` (loaded definitions sit in the input items)."""
    tools = [visible_tool(t) for t in body.get("tools") or []]
    system = [str(body["instructions"])] if body.get("instructions") else []
    items = body.get("input")
    messages = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])
    return tools, system, messages


# -- replies ---------------------------------------------------------------------------------


def _resolve_namespace(call: Mapping[str, Any], catalog: Catalog, allow: bool) -> str | None:
    """The namespace a scripted call is emitted with; a script error for an unloaded one."""
    name = call["name"]
    callable_now = catalog.callable_now()
    if "namespace" in call:
        ns = call["namespace"]
        if (ns, name) in callable_now or allow:
            return ns if isinstance(ns, str) else None
        msg = f"OpenAIStub script: {ns}.{name} is not callable in this request (not loaded)"
        raise ValueError(msg)
    options = sorted(
        (k for k in callable_now if k[1] == name), key=lambda k: (k[0] is not None, k[0] or "")
    )
    if options:
        return options[0][0]
    if allow:
        namespaces = catalog.namespaces_of(name)
        return namespaces[0] if namespaces else None
    msg = (
        f"OpenAIStub script: function {name!r} is not callable in this request (deferred and "
        "not loaded by a tool_search_output, or not declared); set allow_unloaded to emit it"
    )
    raise ValueError(msg)


class ResponsesReplies:
    """Builds `response` objects for reply specs (ids from the stub's counter)."""

    def __init__(self, stub: OpenAIStub) -> None:
        self.stub = stub

    def _id(self, prefix: str) -> str:
        return f"{prefix}_stub{next(self.stub._ids)}"

    def output(self, spec: Mapping[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
        """The output items of a reply spec."""
        items: list[dict[str, Any]] = []
        if "tool_search" in spec:
            search = catalog.search or {}
            if search.get("execution") != "client":
                msg = "OpenAIStub script: a tool_search reply needs a client tool_search tool"
                raise ValueError(msg)
            items.append(
                {
                    "type": "tool_search_call",
                    "id": self._id("tsc"),
                    "call_id": self._id("call"),
                    "execution": "client",
                    "status": "completed",
                    "arguments": dict(spec["tool_search"]),
                }
            )
        if spec.get("content"):
            items.append(
                {
                    "type": "message",
                    "id": self._id("msg"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": spec["content"], "annotations": []}
                    ],
                }
            )
        allow = bool(spec.get("allow_unloaded"))
        for call in spec.get("tool_calls") or []:
            args = call.get("arguments", {})
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self._id("fc"),
                "call_id": call.get("id") or self._id("call"),
                "name": call["name"],
                "arguments": args if isinstance(args, str) else json.dumps(args),
                "status": "completed",
            }
            ns = _resolve_namespace(call, catalog, allow)
            if ns is not None:
                item["namespace"] = ns
            items.append(item)
        return items

    def response(
        self, body: Mapping[str, Any], output: list[dict[str, Any]], usage: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A `response` object."""
        return {
            "id": self._id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model") or self.stub.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
            "usage": responses_usage(usage),
        }


def responses_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """Usage in the Responses form, defaults filled in."""
    out: dict[str, Any] = dict(usage or {})
    out.setdefault("input_tokens", 10)
    out.setdefault("output_tokens", 5)
    details = dict(out.get("input_tokens_details") or {})
    details.setdefault("cached_tokens", 0)
    details.setdefault("cache_write_tokens", 0)
    out["input_tokens_details"] = details
    out.setdefault("output_tokens_details", {"reasoning_tokens": 0})
    out.setdefault("total_tokens", out["input_tokens"] + out["output_tokens"])
    return out


# -- serving ---------------------------------------------------------------------------------


def _cached_usage(stub: OpenAIStub, body: Mapping[str, Any]) -> dict[str, Any]:
    """Usage of `body` under OpenAI's automatic prompt caching (called under the lock)."""
    from attention_scoping.common.tokens import get_counter
    from attention_scoping_lab.cost import render_request

    tools, system, messages = render_blocks(body)
    request = render_request(tools, system, messages, get_counter().count)
    cost = stub._cache.call(request, time.monotonic() - stub._started)
    return {
        "input_tokens": cost.input_tokens,
        "output_tokens": 5,
        "input_tokens_details": {"cached_tokens": cost.cache_read_tokens},
    }


def _next_entry(stub: OpenAIStub, body: dict[str, Any]) -> Mapping[str, Any]:
    with stub._lock:
        stub.accepted.append(body)
        if not stub.script:
            n = len(stub.accepted)
            message = f"OpenAIStub: script exhausted (request {n} has no scripted reply)"
            return {"status": 500, "error": error_body(message, type_="server_error")["error"]}
        entry = stub.script.pop(0)
        usage = _cached_usage(stub, body) if stub._cache is not None else None
    spec = entry(body) if callable(entry) else entry
    if usage is not None and "status" not in spec and "usage" not in spec:
        spec = {**spec, "usage": usage}
    return spec


def serve(handler: _Handler, raw: bytes) -> None:
    """Answer one `POST /v1/responses` on `handler` (called by `OpenAIStub`'s handler)."""
    stub = handler.owner
    body = handler._record(raw)
    if isinstance(body, dict):
        with stub._lock:
            stub.raw_requests.append(raw)
    if not handler._authorized():
        return
    try:
        catalog = validate_responses_request(body)
        if body.get("stream"):
            msg = "OpenAIStub: streaming is not implemented for /v1/responses"
            raise RequestError(msg, param="stream")
    except RequestError as err:
        if stub.validate or not isinstance(body, dict):
            handler._reject(body, err.payload())
            return
        catalog = Catalog()
    replies = ResponsesReplies(stub)
    try:
        spec = _next_entry(stub, body)
        output = [] if "status" in spec or "raw" in spec else replies.output(spec, catalog)
    except Exception as exc:  # a failing script (or one calling an unloaded function)
        handler._script_failed(exc, error_body(f"OpenAIStub script error: {exc}", "server_error"))
        return
    if not handler._send_scripted_failure(spec):
        handler._send_json(200, replies.response(body, output, spec.get("usage") or {}))


# -- inspection ------------------------------------------------------------------------------


class ResponsesView:
    """Read helpers over the recorded Responses requests of a stub (`stub.responses`)."""

    def __init__(self, stub: OpenAIStub) -> None:
        self.stub = stub

    def tools_json(self, i: int) -> str:
        """`tools` of request `i` serialized as sent (key order kept): compare for byte
        identity across requests."""
        return json.dumps(self.stub.requests[i].get("tools"), ensure_ascii=False)

    def system_json(self, i: int) -> str:
        """`instructions` and the leading system / developer input messages of request `i`
        (the system prompt; later system notes are part of the conversation)."""
        body = self.stub.requests[i]
        items = body.get("input")
        system: list[Any] = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or item.get("role") not in ("system", "developer"):
                break
            system.append(item)
        return json.dumps([body.get("instructions"), system], ensure_ascii=False)

    def items(self, i: int, *types: str) -> list[dict[str, Any]]:
        """Input items of request `i` (only those of `types` when given)."""
        items = self.stub.requests[i].get("input")
        if not isinstance(items, list):
            return []
        return [x for x in items if isinstance(x, dict) and (not types or x.get("type") in types)]

    def loaded(self, i: int) -> list[str]:
        """`namespace.name` (or `name`) of every function the `tool_search_output` items of
        request `i` loaded, in order."""
        out: list[str] = []
        for item in self.items(i, "tool_search_output"):
            out.extend(_loaded_names(item.get("tools") or []))
        return out

    def names(self, i: int) -> list[str]:
        """Top-level names of the `tools` of request `i` (functions and namespaces)."""
        return [str(t.get("name", t.get("type"))) for t in self.stub.requests[i].get("tools") or []]


def _loaded_names(tools: Iterable[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for tool in tools:
        if tool.get("type") == "namespace":
            out.extend(f"{tool['name']}.{fn['name']}" for fn in tool.get("tools") or [])
        else:
            out.append(str(tool.get("name")))
    return out


__all__: Sequence[str] = (
    "Catalog",
    "ResponsesReplies",
    "ResponsesView",
    "read_input",
    "read_tools",
    "render_blocks",
    "serve",
    "validate_responses_request",
    "visible_tool",
)
