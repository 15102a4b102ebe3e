"""A scripted Anthropic Messages API server for end-to-end tests (stdlib only).

The real `anthropic` / `langchain_anthropic.ChatAnthropic` clients talk to it over HTTP on
127.0.0.1, so a test sees exactly what the client serialized (tools with `defer_loading`, the
system prompt, `tool_result` blocks with `tool_reference` content) and the client parses real
Messages API responses.

Example:
    ```python
    with AnthropicStub(script=[
        {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]},
        {"content": "done"},
    ]) as stub:
        model = ChatAnthropic(model="claude-stub", base_url=stub.base_url, api_key="test-key")
        ...
        assert stub.tool_names(0) == ["load_context", ...]
    ```

Script entries, consumed one per accepted `POST /v1/messages`: a reply spec (`{"content":
"text"}` and/or `{"tool_calls": [{"name": ..., "arguments": {...}, "id": ...}]}`, optionally
`stop_reason` and `usage`), an HTTP error spec (`{"status": 529, "error": {"type": ...,
"message": ...}}`), or a callable `(request_body) -> spec`.

The documented semantics the stub implements:

- Requests are validated where the real API answers 400 and a tool-calling client can get it
  wrong: `tool_use` / `tool_result` pairing, tool names and schemas, duplicate names, a
  `tool_choice` naming no tool, `defer_loading` on every tool (at least one must stay loaded),
  `cache_control` on a deferred tool, a `tool_reference` to a tool the request does not define.
  A rejected request is recorded in `rejections` and consumes no script entry.
- Deferred tools are not rendered into the prompt: a deferred tool becomes callable only once a
  `tool_result` in the history carries a `tool_reference` to it (its definition is rendered
  there, at the tail). A scripted reply that calls a tool the request does not make callable
  (deferred and not referenced, or not defined) is sent anyway, since the test wants to see the
  client refuse it, and recorded in `violations`: the real API cannot produce it.
- Prompt caching (`usage`): the request is rendered as segments (loaded tools, system blocks,
  message blocks; a `tool_reference` renders its tool's definition in place). Breakpoints are
  the blocks with `cache_control` and, with a top-level `cache_control`, the last segment. A
  breakpoint prefix of at least `min_cache_tokens` is written to the cache
  (`cache_creation_input_tokens`); the longest cached prefix of a later request is read
  (`cache_read_input_tokens`); the rest is `input_tokens`. Tokens are characters / 4.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from attention_scoping_lab.eval import anthropic_wire as wire
from attention_scoping_lab.eval.anthropic_wire import (
    blocks,
    message_object,
    sse,
    stream_events,
    validate_request,
)
from tests.http_support import LocalServer, ScriptedHandler, StubRequestError

ReplySpec = Mapping[str, Any]
ScriptEntry = ReplySpec | Callable[[dict[str, Any]], ReplySpec]


class RequestError(StubRequestError):
    """A request the real API would reject with HTTP 400."""

    def payload(self) -> dict[str, Any]:
        """The body Anthropic sends with a 400."""
        return wire.RequestError(str(self)).payload()


def callable_tools(body: Mapping[str, Any]) -> set[str]:
    """Tools the model may call after this request's history (`anthropic_wire.callable_tools`)."""
    return set(wire.callable_tools(body))


def history_violations(body: Mapping[str, Any]) -> list[str]:
    """`tool_use` blocks in the history naming a tool that was not callable at that point."""
    tools = body.get("tools") or []
    ready = {t["name"] for t in tools if t.get("defer_loading") is not True}
    found = []
    for i, msg in enumerate(body.get("messages") or []):
        for block in blocks(msg.get("content")):
            if block.get("type") == "tool_use" and block.get("name") not in ready:
                found.append(f"messages.{i}: tool_use of {block.get('name')!r} before it loaded")
            if block.get("type") == "tool_result":
                for ref in blocks(block.get("content")):
                    if ref.get("type") == "tool_reference":
                        ready.add(str(ref.get("tool_name")))
    return found


# -- prompt caching ---------------------------------------------------------------------------


def _render(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def segments(body: Mapping[str, Any]) -> tuple[list[str], list[int]]:
    """(rendered segments of the prompt in order, indices of the cache breakpoints)."""
    tools = {t["name"]: t for t in body.get("tools") or []}
    out: list[str] = []
    marks: list[int] = []

    def add(text: str, block: Mapping[str, Any]) -> None:
        out.append(text)
        if "cache_control" in block:
            marks.append(len(out) - 1)

    for tool in tools.values():
        if tool.get("defer_loading") is not True:
            add(_render({k: v for k, v in tool.items() if k != "cache_control"}), tool)
    system = body.get("system")
    for block in blocks(system):
        add(str(block.get("text", "")), block)
    for msg in body.get("messages") or []:
        for block in blocks(msg.get("content")):
            shown = {k: v for k, v in block.items() if k != "cache_control"}
            if block.get("type") == "tool_result":
                parts = []
                for ref in blocks(block.get("content")):
                    if ref.get("type") == "tool_reference":
                        parts.append(_render(tools.get(ref.get("tool_name"), {})))
                    else:
                        parts.append(_render(ref))
                shown = {"tool_result": block.get("tool_use_id"), "content": parts}
            add(msg["role"] + ":" + _render(shown), block)
    if body.get("cache_control") and out:
        marks.append(len(out) - 1)
    return out, sorted(set(marks))


def tokens(text: str) -> int:
    """Characters / 4 (rounded up): the stub's token count."""
    return (len(text) + 3) // 4


class PrefixCache:
    """Anthropic's prompt cache, simplified: prefixes written at breakpoints, read by prefix."""

    def __init__(self, min_tokens: int) -> None:
        """Cache prefixes of at least `min_tokens` tokens."""
        self.min_tokens = min_tokens
        self._stored: set[str] = set()

    def usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        """`input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens` of `body`,
        writing its breakpoint prefixes."""
        parts, marks = segments(body)
        hashes, sizes = [], []
        digest = hashlib.sha256()
        total = 0
        for part in parts:
            digest.update(part.encode() + b"\x00")
            hashes.append(digest.hexdigest())
            total += tokens(part)
            sizes.append(total)
        read = 0
        for i in range(len(parts) - 1, -1, -1):
            if hashes[i] in self._stored:
                read = sizes[i]
                break
        created = 0
        for i in marks:
            if sizes[i] >= self.min_tokens:
                if hashes[i] not in self._stored:
                    created = max(created, sizes[i] - read)
                self._stored.add(hashes[i])
        return {
            "input_tokens": max(total - read - created, 0),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
            "output_tokens": 5,
        }


# -- the server -------------------------------------------------------------------------------


class AnthropicStub(LocalServer):
    """Scripted Anthropic Messages server on 127.0.0.1 (a free port), run in a thread.

    Attributes:
        base_url: `http://127.0.0.1:PORT`, for `ChatAnthropic(base_url=...)`.
        requests: Every parsed JSON body POSTed to `/v1/messages`, in order (rejected included).
        accepted: The bodies that passed validation (one script entry each).
        rejections: `{"body", "status", "error"}` of each request answered 400.
        violations: `{"request", "problem"}` of what the real API could not have produced: a
            scripted `tool_use` of a tool that was not callable, or such a `tool_use` in the
            history of a request.
        usages: The `usage` sent with each reply.
        headers: Request headers of each POST (lower-case names).
    """

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        validate: bool = True,
        min_cache_tokens: int = 1024,
    ) -> None:
        """Prepare the server (it starts on `start()` or `with`)."""
        self.script: list[ScriptEntry] = list(script)
        self.validate = validate
        self.requests: list[dict[str, Any]] = []
        self.accepted: list[dict[str, Any]] = []
        self.rejections: list[dict[str, Any]] = []
        self.violations: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []
        self.headers: list[dict[str, str]] = []
        self.errors: list[BaseException] = []
        self.cache = PrefixCache(min_cache_tokens)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        if self._server is None:
            raise RuntimeError("stub is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- inspection -------------------------------------------------------------------------

    def tool_names(self, i: int) -> list[str]:
        """Names of the tools sent with request `i`, in order."""
        return [t["name"] for t in self.requests[i].get("tools") or []]

    def deferred(self, i: int) -> list[str]:
        """Names of the tools request `i` sent with `defer_loading: true`."""
        return [t["name"] for t in self.requests[i].get("tools") or [] if t.get("defer_loading")]

    def callable(self, i: int) -> set[str]:
        """Tools the model could call after request `i`'s history."""
        return callable_tools(self.requests[i])

    def system_text(self, i: int) -> str:
        """Text of request `i`'s system prompt."""
        return "".join(str(b.get("text", "")) for b in blocks(self.requests[i].get("system")))

    def tool_results(self, i: int) -> dict[str, Any]:
        """`{tool_use_id: content}` of the `tool_result` blocks in request `i`."""
        out = {}
        for msg in self.requests[i]["messages"]:
            for block in blocks(msg.get("content")):
                if block.get("type") == "tool_result":
                    out[str(block["tool_use_id"])] = block.get("content")
        return out

    # -- serving ----------------------------------------------------------------------------

    def _next_entry(self, body: dict[str, Any]) -> ReplySpec:
        with self._lock:
            self.accepted.append(body)
            n = len(self.accepted) - 1
            for problem in history_violations(body):
                self.violations.append({"request": n, "problem": problem})
            usage = self.cache.usage(body)
            if not self.script:
                return {
                    "status": 500,
                    "error": {"type": "api_error", "message": f"script exhausted at {n}"},
                }
            entry = self.script.pop(0)
        spec = entry(body) if callable(entry) else entry
        ready = callable_tools(body)
        with self._lock:
            for call in spec.get("tool_calls") or []:
                if call["name"] not in ready:
                    problem = f"reply calls {call['name']!r}, which is not callable"
                    self.violations.append({"request": n, "problem": problem})
            self.usages.append(dict(spec.get("usage") or usage))
        if "status" not in spec and "usage" not in spec:
            spec = {**spec, "usage": usage}
        return spec

    def message(self, spec: ReplySpec, model: str) -> dict[str, Any]:
        """A Messages API `message` object for a reply spec."""
        content: list[dict[str, Any]] = []
        if spec.get("content"):
            content.append({"type": "text", "text": spec["content"]})
        for call in spec.get("tool_calls") or []:
            content.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_stub{next(self._ids)}",
                    "name": call["name"],
                    "input": call.get("arguments", {}),
                }
            )
        stop = spec.get("stop_reason") or ("tool_use" if spec.get("tool_calls") else "end_turn")
        usage = spec.get("usage") or {"input_tokens": 10, "output_tokens": 5}
        return message_object(f"msg_stub{next(self._ids)}", model, content, stop, usage)

    def events(self, spec: ReplySpec, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The server-sent events streaming a reply spec."""
        return stream_events(self.message(spec, model))


class _Handler(ScriptedHandler):
    owner: AnthropicStub
    server_version = "AnthropicStub/1.0"
    request_id_header = "request-id"

    def _validate(self, body: Any) -> None:
        try:
            validate_request(body)
        except wire.RequestError as err:
            raise RequestError(str(err)) from err

    def _script_error(self, exc: Exception) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": "api_error", "message": f"script error: {exc!r}"},
        }

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path != "/v1/messages":
            error = {"type": "not_found_error", "message": f"Not found: {path}"}
            self._send_json(404, {"type": "error", "error": error})
            return
        body = self._record(raw)
        stub = self.owner
        spec = self._entry_for(body)
        if spec is None:
            return
        if "status" in spec:
            error = spec.get("error") or {"type": "api_error", "message": "error"}
            self._send_json(int(spec["status"]), {"type": "error", "error": error})
            return
        model = body.get("model") or "claude-stub"
        if body.get("stream"):
            self._send_stream(stub.events(spec, model))
        else:
            self._send_json(200, stub.message(spec, model))

    def _send_stream(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
        self._start_stream()
        for name, data in events:
            self._send_event(sse(name, data))


AnthropicStub.handler = _Handler
