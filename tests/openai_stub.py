"""A scripted OpenAI-compatible chat-completions server for end-to-end tests (stdlib only).

The real `openai` / `langchain_openai.ChatOpenAI` clients talk to it over HTTP on 127.0.0.1,
so a test sees exactly what the client serialized (tool schemas, system prompt, tool results)
and the client parses real OpenAI wire responses (tool-call arguments as JSON strings, SSE).

Example:
    ```python
    with OpenAIStub(script=[
        {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]},
        {"content": "done"},
    ]) as stub:
        model = ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="test-key")
        ...
        assert stub.tool_names(0) == ["load_context"]
    ```

Script entries, consumed one per accepted `POST /v1/chat/completions`:

- a reply spec: `{"content": "text"}` and/or
  `{"tool_calls": [{"name": "add", "arguments": {"a": 1}, "id": "call_x"}]}` (`arguments` may be
  a dict or a raw string; `id` is optional), optionally `finish_reason` and `usage`;
- an HTTP error spec: `{"status": 401, "error": {"message": ..., "type": ..., "code": ...}}`;
- a callable `(request_body) -> spec` (either of the above), for replies that depend on the
  request.

With `prompt_cache=True`, a reply spec without `usage` gets usage computed from the request the
way OpenAI bills it: `prompt_tokens` of the request rendered in provider order (tools, system,
messages) and `prompt_tokens_details.cached_tokens` by OpenAI's prefix rule (>= 1,024 tokens,
128-token steps), from `attention_scoping_lab.cost` (so clients' cached-token paths are tested).

Any spec may also carry `delay` (seconds to wait before answering: a slow server, for client
timeouts) or `raw` (a string sent as the response body as is, with `status` or 200: a
malformed reply).

Requests are validated the way the real API does where it matters for a tool-calling client
(message order around tool calls, tool message content types, tool schemas, `tool_choice` and
`parallel_tool_calls` without tools, ...). An invalid request gets HTTP 400 in OpenAI's error
format, is recorded in `rejections`, and does not consume a script entry. A `tool_choice` of type
`allowed_tools` must name sent tools; a scripted reply calling outside it (which the real API
cannot produce) is sent and recorded in `violations`.

`POST /v1/responses` (the Responses API: namespaces, deferred functions, client `tool_search`)
shares the script and recordings and is served by `tests/openai_responses_stub.py`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from tests.http_support import LocalServer, ScriptedHandler, StubRequestError

ReplySpec = Mapping[str, Any]
ScriptEntry = ReplySpec | Callable[[dict[str, Any]], ReplySpec]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What OpenAI accepts as a function name."""

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
USER_PART_TYPES = {"text", "image_url", "input_audio", "file"}
TOOL_CHOICE_MODES = {"none", "auto", "required"}
SYSTEM_ROLES = {"system", "developer"}


class RequestError(StubRequestError):
    """A request the real API would reject with HTTP 400."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code

    def payload(self) -> dict[str, Any]:
        """The body OpenAI sends with a 400."""
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": self.code,
            }
        }


def error_body(
    message: str, type_: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    """An error body in OpenAI's format."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def auth_error(key: str = "test-key") -> dict[str, Any]:
    """The script entry for a 401 as OpenAI answers a wrong API key."""
    shown = key[:3] + "*" * max(len(key) - 7, 0) + key[-4:] if len(key) > 7 else "***"
    return {
        "status": 401,
        "error": {
            "message": (
                f"Incorrect API key provided: {shown}. You can find your API key at "
                "https://platform.openai.com/account/api-keys."
            ),
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        },
    }


# -- request validation ----------------------------------------------------------------------


def _text_parts(value: Any, where: str, allowed: set[str]) -> None:
    """`value` must be a string or a non-empty list of content parts of `allowed` types."""
    if isinstance(value, str):
        return
    if not isinstance(value, list) or not value:
        raise RequestError(
            f"Invalid type for '{where}': expected one of a string or array of objects, "
            f"but got {type(value).__name__} instead.",
            param=where,
            code="invalid_type",
        )
    for j, part in enumerate(value):
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype not in allowed:
            raise RequestError(
                f"Invalid value: {ptype!r}. Supported values are: "
                + ", ".join(repr(t) for t in sorted(allowed))
                + ".",
                param=f"{where}[{j}].type",
                code="invalid_value",
            )
        if ptype == "text" and not isinstance(part.get("text"), str):
            raise RequestError(
                f"Missing required parameter: '{where}[{j}].text'.",
                param=f"{where}[{j}].text",
                code="missing_required_parameter",
            )


def _validate_tool_call(call: Any, where: str) -> str:
    if not isinstance(call, dict):
        raise RequestError(f"Invalid type for '{where}': expected an object.", param=where)
    if not isinstance(call.get("id"), str) or not call["id"]:
        raise RequestError(f"Missing required parameter: '{where}.id'.", param=f"{where}.id")
    if call.get("type") != "function":
        raise RequestError(
            f"Invalid value for '{where}.type': expected 'function'.", param=f"{where}.type"
        )
    fn = call.get("function")
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise RequestError(
            f"Missing required parameter: '{where}.function.name'.", param=f"{where}.function"
        )
    if not isinstance(fn.get("arguments"), str):
        raise RequestError(
            f"Invalid type for '{where}.function.arguments': expected a string, but got "
            f"{type(fn.get('arguments')).__name__} instead.",
            param=f"{where}.function.arguments",
            code="invalid_type",
        )
    return call["id"]


def _unanswered(pending: list[str]) -> RequestError:
    return RequestError(
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have "
        f"response messages: {', '.join(pending)}",
        param="messages",
    )


def _role(msg: Any, where: str) -> str:
    """The message's role, or `RequestError` when it is not a message with a known role."""
    if not isinstance(msg, dict) or msg.get("role") not in ROLES:
        role = msg.get("role") if isinstance(msg, dict) else None
        raise RequestError(
            f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', "
            "'function', 'tool', and 'developer'.",
            param=f"{where}.role",
        )
    return str(msg["role"])


def _validate_assistant(msg: dict[str, Any], where: str) -> list[str]:
    """Check an assistant message; return the ids of its tool calls (empty without any)."""
    calls = msg.get("tool_calls")
    content = msg.get("content")
    ids: list[str] = []
    if calls is not None:
        if not isinstance(calls, list) or not calls:
            raise RequestError(
                f"Invalid '{where}.tool_calls': empty array. Expected an array with "
                "minimum length 1.",
                param=f"{where}.tool_calls",
            )
        ids = [_validate_tool_call(c, f"{where}.tool_calls[{k}]") for k, c in enumerate(calls)]
    elif content is None:
        raise RequestError(
            f"Invalid value for '{where}.content': expected a string or array, got null "
            "(content is required unless 'tool_calls' are given).",
            param=f"{where}.content",
        )
    if content is not None:
        _text_parts(content, f"{where}.content", {"text", "refusal"})
    return ids


def _validate_tool_message(msg: dict[str, Any], where: str, open_calls: set[str]) -> str:
    """Check a tool message answers one of `open_calls`; return its `tool_call_id`."""
    call_id = msg.get("tool_call_id")
    if not isinstance(call_id, str):
        raise RequestError(
            f"Missing required parameter: '{where}.tool_call_id'.",
            param=f"{where}.tool_call_id",
        )
    if call_id not in open_calls:
        raise RequestError(
            "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceeding message with 'tool_calls'.",
            param=f"{where}.role",
        )
    _text_parts(msg.get("content"), f"{where}.content", {"text"})
    return call_id


def validate_messages(messages: Any) -> None:
    """Raise `RequestError` where the real API rejects the message list."""
    if not isinstance(messages, list) or not messages:
        raise RequestError(
            "Invalid 'messages': empty array. Expected an array with minimum length 1.",
            param="messages",
        )
    pending: list[str] = []  # tool_call_ids still owed a tool message
    open_calls: set[str] = set()  # ids of the latest assistant message with tool_calls
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        role = _role(msg, where)
        if role != "tool":
            if pending:
                raise _unanswered(pending)
            open_calls = set()
        if role in ("system", "developer"):
            _text_parts(msg.get("content"), f"{where}.content", {"text"})
        elif role == "user":
            _text_parts(msg.get("content"), f"{where}.content", USER_PART_TYPES)
        elif role == "assistant":
            ids = _validate_assistant(msg, where)
            if ids:
                pending, open_calls = list(ids), set(ids)
        elif role == "tool":
            call_id = _validate_tool_message(msg, where, open_calls)
            if call_id in pending:
                pending.remove(call_id)
    if pending:
        raise _unanswered(pending)


def _validate_strict_schema(tool: str, schema: Mapping[str, Any], path: str) -> None:
    """Structured-outputs rules for `strict: true` functions: objects closed, all keys required."""
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            raise RequestError(
                f"Invalid schema for function '{tool}': In context=({path or '()'}), "
                "'additionalProperties' is required to be supplied and to be false.",
                param="tools",
                code="invalid_function_parameters",
            )
        missing = [key for key in props if key not in (schema.get("required") or [])]
        if missing:
            raise RequestError(
                f"Invalid schema for function '{tool}': In context=({path or '()'}), 'required' "
                f"is required to be supplied and to be an array including every key in "
                f"properties. Missing '{missing[0]}'.",
                param="tools",
                code="invalid_function_parameters",
            )
        for key, sub in props.items():
            if isinstance(sub, Mapping):
                _validate_strict_schema(tool, sub, f"{path}, 'properties', '{key}'".lstrip(", "))
    for keyword in ("items", "anyOf", "$defs", "definitions"):
        sub = schema.get(keyword)
        if isinstance(sub, Mapping) and keyword in ("$defs", "definitions"):
            subs = list(sub.values())
        else:
            subs = sub if isinstance(sub, list) else [sub]
        for item in subs:
            if isinstance(item, Mapping):
                _validate_strict_schema(tool, item, f"{path}, '{keyword}'".lstrip(", "))


def validate_tools(body: Mapping[str, Any]) -> list[str]:
    """Raise `RequestError` for bad tool schemas / options; return the tool names."""
    tools = body.get("tools")
    names: list[str] = []
    if tools is not None:
        if not isinstance(tools, list) or not tools:
            raise RequestError(
                "Invalid 'tools': empty array. Expected an array with minimum length 1, but got "
                "an empty array instead.",
                param="tools",
                code="empty_array",
            )
        for i, tool in enumerate(tools):
            where = f"tools[{i}]"
            if not isinstance(tool, dict) or tool.get("type") != "function":
                ttype = tool.get("type") if isinstance(tool, dict) else None
                raise RequestError(
                    f"Invalid value: {ttype!r}. Supported values are: 'function' and 'custom'.",
                    param=f"{where}.type",
                    code="invalid_value",
                )
            fn = tool.get("function")
            fn = fn if isinstance(fn, dict) else {}
            name = fn.get("name")
            if not isinstance(name, str) or not TOOL_NAME.match(name):
                raise RequestError(
                    f"Invalid '{where}.function.name': string does not match pattern. Expected "
                    "a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                    param=f"{where}.function.name",
                    code="invalid_value",
                )
            params = fn.get("parameters")
            if params is not None and (
                not isinstance(params, dict) or params.get("type", "object") != "object"
            ):
                raise RequestError(
                    f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                    "'type: \"object\"'.",
                    param=f"{where}.function.parameters",
                    code="invalid_function_parameters",
                )
            if fn.get("strict") is True:
                _validate_strict_schema(name, params or {}, "")
            if "description" in fn and not isinstance(fn["description"], str):
                raise RequestError(
                    f"Invalid type for '{where}.function.description': expected a string.",
                    param=f"{where}.function.description",
                    code="invalid_type",
                )
            if name in names:
                # Stricter than Chat Completions (the Responses API and Anthropic reject it):
                # two schemas with one name make the model's choice ambiguous.
                raise RequestError(
                    f"Duplicate tool name {name!r} in 'tools'.", param=where, code="invalid_value"
                )
            names.append(name)
    for option in ("tool_choice", "parallel_tool_calls"):
        if option in body and tools is None:
            raise RequestError(
                f"Invalid value for '{option}': '{option}' is only allowed when 'tools' are "
                "specified.",
                param=option,
            )
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        validate_allowed_tools(choice, names)
        return names
    if isinstance(choice, str) and choice not in TOOL_CHOICE_MODES:
        raise RequestError(
            f"Invalid value: {choice!r}. Supported values are: 'none', 'auto', and 'required'.",
            param="tool_choice",
            code="invalid_value",
        )
    if isinstance(choice, dict):
        chosen = (choice.get("function") or {}).get("name")
        if choice.get("type") != "function" or chosen not in names:
            raise RequestError(
                f"Invalid value for 'tool_choice': tool {chosen!r} is not among the tools.",
                param="tool_choice",
            )
    return names


# -- allowed_tools (tool_choice) --------------------------------------------------------------


def allowed_tool_names(body: Mapping[str, Any]) -> set[str] | None:
    """Tools an `allowed_tools` tool choice lets the model call (None: no such choice)."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") != "allowed_tools":
        return None
    inner = choice.get("allowed_tools") or {}
    return {
        str((t.get("function") or {}).get("name"))
        for t in inner.get("tools") or []
        if isinstance(t, dict)
    }


def validate_allowed_tools(choice: Mapping[str, Any], names: Sequence[str]) -> None:
    """Chat Completions' `{"type": "allowed_tools", "allowed_tools": {"mode": "auto" |
    "required", "tools": [{"type": "function", "function": {"name": ...}}]}}`: every tool named
    must be among `tools`."""
    inner = choice.get("allowed_tools")
    if not isinstance(inner, dict) or inner.get("mode") not in ("auto", "required"):
        raise RequestError(
            "Invalid value for 'tool_choice.allowed_tools.mode': expected 'auto' or 'required'.",
            param="tool_choice.allowed_tools.mode",
        )
    listed = inner.get("tools")
    if not isinstance(listed, list) or not listed:
        raise RequestError(
            "Invalid 'tool_choice.allowed_tools.tools': empty array.",
            param="tool_choice.allowed_tools.tools",
        )
    for j, tool in enumerate(listed):
        fn = tool.get("function") if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or name not in names:
            raise RequestError(
                f"Invalid value for 'tool_choice.allowed_tools.tools[{j}]': tool {name!r} is "
                "not among the tools.",
                param=f"tool_choice.allowed_tools.tools[{j}]",
            )


def allowed_tools_violations(body: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
    """Calls of a scripted reply to tools outside the request's `allowed_tools` (the real API
    cannot produce them; the stub sends them and records this)."""
    allowed = allowed_tool_names(body)
    if allowed is None:
        return []
    return [
        f"reply calls {c['name']!r} outside allowed_tools"
        for c in spec.get("tool_calls") or []
        if c.get("name") not in allowed
    ]


def validate_request(body: Any) -> None:
    """Raise `RequestError` where the real chat-completions endpoint answers 400."""
    if not isinstance(body, dict):
        raise RequestError("We could not parse the JSON body of your request.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("you must provide a model parameter", param="model")
    validate_messages(body.get("messages"))
    validate_tools(body)
    if "stream" in body and not isinstance(body["stream"], bool):
        raise RequestError("Invalid type for 'stream': expected a boolean.", param="stream")
    if "stream_options" in body and not body.get("stream"):
        raise RequestError(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options",
        )


# -- responses -------------------------------------------------------------------------------


def _usage(spec: Mapping[str, Any]) -> dict[str, int]:
    usage = dict(spec.get("usage") or {"prompt_tokens": 10, "completion_tokens": 5})
    usage.setdefault("prompt_tokens", 10)
    usage.setdefault("completion_tokens", 5)
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage


class OpenAIStub(LocalServer):
    """Scripted OpenAI-compatible server on 127.0.0.1 (a free port), run in a thread.

    Attributes:
        base_url: `http://127.0.0.1:PORT/v1`, for `ChatOpenAI(base_url=...)`.
        requests: Every parsed JSON body POSTed to `/v1/chat/completions` or `/v1/responses`,
            in order (rejected ones included).
        raw_requests: The raw bytes of each recorded `/v1/responses` body.
        responses: Read helpers for Responses requests (`tests/openai_responses_stub.py`).
        accepted: The bodies that passed validation (one script entry each).
        rejections: `{"body", "status", "error"}` for each request answered 400 by validation.
        headers: Request headers of each POST (lower-case names), in order.
        errors: Exceptions raised by script callables (each answered with HTTP 500).
    """

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        model: str = "stub-model",
        api_key: str | None = None,
        validate: bool = True,
        chunk_size: int = 7,
        prompt_cache: bool = False,
    ) -> None:
        """Prepare the server (it starts on `start()` or `with`).

        Args:
            script: Reply specs, error specs or callables, consumed in order.
            model: Model id reported in responses and by `GET /v1/models`.
            api_key: When set, requests without `Authorization: Bearer <api_key>` get a 401.
            validate: Reject invalid requests with 400 as the real API does.
            chunk_size: Characters per SSE delta when streaming content and arguments.
            prompt_cache: Report usage with cached tokens by OpenAI's prefix rule.
        """
        self.script: list[ScriptEntry] = list(script)
        self.model = model
        self.api_key = api_key
        self.validate = validate
        self.chunk_size = chunk_size
        self.requests: list[dict[str, Any]] = []
        self.raw_requests: list[bytes] = []
        self.accepted: list[dict[str, Any]] = []
        self.rejections: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.errors: list[BaseException] = []
        self.violations: list[dict[str, Any]] = []
        """`{"request", "problem"}` of scripted replies the real API could not produce (a call
        outside `allowed_tools`)."""
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._cache: Any = None
        if prompt_cache:
            from attention_scoping_lab.cost import PromptCache, price_model

            self._cache = PromptCache(price_model("openai"))
        self._started = time.monotonic()

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def responses(self) -> Any:
        """Read helpers over recorded `/v1/responses` requests (a `ResponsesView`)."""
        from tests.openai_responses_stub import ResponsesView

        return ResponsesView(self)

    @property
    def remaining(self) -> int:
        """Script entries not consumed yet."""
        return len(self.script)

    # -- inspection helpers ---------------------------------------------------------------

    def tool_names(self, i: int) -> list[str]:
        """Names of the tools sent with request `i`."""
        return [t["function"]["name"] for t in self.requests[i].get("tools") or []]

    def tool_schema(self, i: int, name: str) -> dict[str, Any]:
        """The `function` object of tool `name` in request `i`."""
        for tool in self.requests[i].get("tools") or []:
            if tool["function"]["name"] == name:
                return dict(tool["function"])
        raise KeyError(f"request {i} has no tool {name!r}: {self.tool_names(i)}")

    def system_text(self, i: int) -> str:
        """Text of the system (or developer) messages of request `i`."""
        texts = []
        for msg in self.requests[i]["messages"]:
            if msg["role"] in ("system", "developer"):
                content = msg["content"]
                texts.append(
                    content
                    if isinstance(content, str)
                    else "".join(p.get("text", "") for p in content)
                )
        return "\n".join(texts)

    def tool_messages(self, i: int) -> dict[str, Any]:
        """`{tool_call_id: content}` of the tool messages in request `i`."""
        return {
            m["tool_call_id"]: m["content"]
            for m in self.requests[i]["messages"]
            if m["role"] == "tool"
        }

    # -- serving (called from handler threads) --------------------------------------------

    def _next_entry(self, body: dict[str, Any]) -> ReplySpec:
        with self._lock:
            self.accepted.append(body)
            if not self.script:
                n = len(self.accepted)
                return {
                    "status": 500,
                    "error": error_body(
                        f"OpenAIStub: script exhausted (request {n} has no scripted reply)",
                        type_="server_error",
                    )["error"],
                }
            entry = self.script.pop(0)
            usage = self._cached_usage(body) if self._cache is not None else None
        spec = entry(body) if callable(entry) else entry
        with self._lock:
            for problem in allowed_tools_violations(body, spec):
                self.violations.append({"request": len(self.accepted) - 1, "problem": problem})
        if usage is not None and "status" not in spec and "usage" not in spec:
            spec = {**spec, "usage": usage}
        return spec

    def _cached_usage(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Usage of `body` under OpenAI's automatic prompt caching (called under the lock)."""
        from attention_scoping.common.tokens import get_counter
        from attention_scoping_lab.cost import render_request

        messages = body.get("messages") or []
        system = [str(m.get("content") or "") for m in messages if m.get("role") in SYSTEM_ROLES]
        rest = [m for m in messages if m.get("role") not in SYSTEM_ROLES]
        request = render_request(body.get("tools") or [], system, rest, get_counter().count)
        cost = self._cache.call(request, time.monotonic() - self._started)
        return {
            "prompt_tokens": cost.input_tokens,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": cost.cache_read_tokens},
        }

    def _message(self, spec: ReplySpec) -> tuple[dict[str, Any], str]:
        calls = []
        for call in spec.get("tool_calls") or []:
            args = call.get("arguments", {})
            calls.append(
                {
                    "id": call.get("id") or f"call_stub{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
            )
        message: dict[str, Any] = {
            "role": "assistant",
            "content": spec.get("content"),
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        finish = spec.get("finish_reason") or ("tool_calls" if calls else "stop")
        return message, finish

    def completion(self, spec: ReplySpec, model: str) -> dict[str, Any]:
        """A `chat.completion` object for a reply spec."""
        message, finish = self._message(spec)
        return {
            "id": f"chatcmpl-stub{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_stub",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": _usage(spec),
        }

    def chunks(self, spec: ReplySpec, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
        """The `chat.completion.chunk` objects streaming a reply spec."""
        message, finish = self._message(spec)
        base = {
            "id": f"chatcmpl-stub{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_stub",
        }

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            out = {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            }
            if include_usage:
                out["usage"] = None
            return out

        size = max(self.chunk_size, 1)
        yield chunk({"role": "assistant", "content": "", "refusal": None})
        content = message.get("content") or ""
        for k in range(0, len(content), size):
            yield chunk({"content": content[k : k + size]})
        for index, call in enumerate(message.get("tool_calls") or []):
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            args = call["function"]["arguments"]
            for k in range(0, len(args), size):
                yield chunk(
                    {
                        "tool_calls": [
                            {"index": index, "function": {"arguments": args[k : k + size]}}
                        ]
                    }
                )
        yield chunk({}, finish)
        if include_usage:
            yield {**base, "choices": [], "usage": _usage(spec)}


class _Handler(ScriptedHandler):
    owner: OpenAIStub
    server_version = "OpenAIStub/1.0"

    def _validate(self, body: Any) -> None:
        validate_request(body)

    def _script_error(self, exc: Exception) -> dict[str, Any]:
        return error_body(f"OpenAIStub script error: {exc!r}", "server_error")

    # -- plumbing --------------------------------------------------------------------------

    def _send_raw(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        key = self.owner.api_key
        if key is None:
            return True
        sent = self.headers.get("Authorization", "")
        if sent == f"Bearer {key}":
            return True
        given = sent.removeprefix("Bearer ").strip()
        spec = auth_error(given) if given else None
        if spec is None:
            self._send_json(
                401,
                error_body(
                    "You didn't provide an API key. You need to provide your API key in an "
                    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                ),
            )
        else:
            self._send_json(401, {"error": spec["error"]})
        return False

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    # -- routes ----------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._authorized():
            return
        path = self._path()
        model = {"id": self.owner.model, "object": "model", "created": 0, "owned_by": "stub"}
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [model]})
        elif path == f"/v1/models/{self.owner.model}":
            self._send_json(200, model)
        elif path.startswith("/v1/models/"):
            name = path.removeprefix("/v1/models/")
            self._send_json(
                404,
                error_body(f"The model '{name}' does not exist", code="model_not_found"),
            )
        else:
            self._send_json(404, error_body(f"Invalid URL (GET {path})"))

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self._path()
        if path == "/v1/responses":  # the Responses API lives in its own module
            from tests.openai_responses_stub import serve

            serve(self, raw)
            return
        if path != "/v1/chat/completions":
            self._send_json(404, error_body(f"Invalid URL (POST {path})"))
            return
        body = self._record(raw)
        stub = self.owner
        if not self._authorized():
            return
        spec = self._entry_for(body)
        if spec is None:
            return
        if self._send_scripted_failure(spec):
            return
        model = body.get("model") or stub.model
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_stream(stub.chunks(spec, model, include_usage))
        else:
            self._send_json(200, stub.completion(spec, model))

    def _send_scripted_failure(self, spec: Mapping[str, Any]) -> bool:
        """After the entry's `delay`, answer a scripted `raw` body or error `status`; False
        when the entry is a reply to build instead."""
        if spec.get("delay"):
            time.sleep(float(spec["delay"]))
        if "raw" in spec:
            self._send_raw(int(spec.get("status", 200)), str(spec["raw"]))
            return True
        if "status" in spec:
            payload = {"error": spec.get("error") or {"message": "error", "type": "server_error"}}
            payload["error"] = {"param": None, "code": None, **payload["error"]}
            self._send_json(int(spec["status"]), payload)
            return True
        return False

    def _send_stream(self, chunks: Iterator[dict[str, Any]]) -> None:
        self._start_stream()
        for item in chunks:
            self._send_event(f"data: {json.dumps(item)}\n\n")
        self._send_event("data: [DONE]\n\n")


OpenAIStub.handler = _Handler
