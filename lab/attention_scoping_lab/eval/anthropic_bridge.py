"""A local Anthropic Messages API in front of an OpenAI-compatible Chat Completions endpoint, so
`langchain_anthropic.ChatAnthropic` (and with it `disclosure="anthropic"`) can run on a local
model (`attention-scoping eval --bridge anthropic`).

`POST /v1/messages` (streaming or not) is checked where the real API answers 400 (deferred
tools, `tool_reference`s naming defined tools, at least one loaded tool, no `cache_control` on
a deferred tool), translated by `anthropic_convert` (only the tools the deferral semantics make
callable go upstream) and answered from the upstream's completion. It emulates the documented
semantics on another model: it is not Anthropic's models, nor their rendering of an expanded
tool definition.

Example:
    ```python
    with AnthropicBridge("http://127.0.0.1:8080/v1") as bridge:
        model = ChatAnthropic(model="local", base_url=bridge.base_url, api_key="not-needed")
    ```
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from attention_scoping_lab.eval.anthropic_convert import ToolUseIds, anthropic_message, chat_request
from attention_scoping_lab.eval.anthropic_wire import (
    RequestError,
    sse,
    stream_events,
    validate_request,
)
from attention_scoping_lab.local_server import JsonHandler, LocalServer

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
"""Anthropic's error type per HTTP status (any other: `api_error`)."""


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error body in Anthropic's format."""
    kind = ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


class UpstreamError(Exception):
    """The upstream endpoint failed: the status and message to answer with."""

    def __init__(self, status: int, message: str) -> None:
        """Answer `status` with `message`."""
        super().__init__(message)
        self.status = status


class AnthropicBridge(LocalServer):
    """Anthropic Messages API on 127.0.0.1 (a free port), forwarding to `upstream`'s
    `/chat/completions`, run in a daemon thread (`start()`/`stop()` or `with`)."""

    def __init__(
        self,
        upstream: str,
        *,
        api_key: str | None = None,
        timeout: float = 180.0,
        client: httpx.Client | None = None,
    ) -> None:
        """Prepare the bridge.

        Args:
            upstream: Base URL of the OpenAI-compatible endpoint (usually ends in `/v1`).
            api_key: Sent upstream as `Authorization: Bearer ...` (None: no header).
            timeout: Seconds one upstream call may take.
            client: The HTTP client for upstream calls (default: one of the bridge's own).
        """
        self.upstream = upstream.rstrip("/")
        self.api_key = api_key
        self.ids = ToolUseIds()
        self._messages = itertools.count(1)
        self._own = client is None
        self.client = client or httpx.Client(timeout=timeout)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, for `ChatAnthropic(base_url=...)`."""
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop serving and close the bridge's own HTTP client."""
        super().stop()
        if self._own:
            self.client.close()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The Messages `message` answering a Messages request body.

        Raises:
            RequestError: the request is invalid (HTTP 400).
            UpstreamError: the upstream endpoint failed or answered something unusable.
        """
        validate_request(body)
        request = chat_request(body)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.upstream}/chat/completions"
        try:
            response = self.client.post(url, json=request, headers=headers)
        except httpx.TimeoutException as exc:
            raise UpstreamError(504, f"upstream {url} timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            raise UpstreamError(502, f"cannot reach upstream {url}: {exc}") from exc
        if response.status_code != 200:
            reason = response.text[:500].strip() or response.reason_phrase
            raise UpstreamError(response.status_code, f"upstream {url}: {reason}")
        try:
            completion = response.json()
        except ValueError as exc:
            raise UpstreamError(502, f"upstream {url} answered no JSON") from exc
        if not isinstance(completion, dict) or not completion.get("choices"):
            raise UpstreamError(502, f"upstream {url} answered no choices")
        message_id = f"msg_bridge_{next(self._messages)}"
        return anthropic_message(completion, str(body["model"]), self.ids, message_id)


class _Handler(JsonHandler):
    owner: AnthropicBridge
    server_version = "AnthropicBridge/1.0"
    request_id_header = "request-id"

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path != "/v1/messages":
            self._send_json(404, error_body(404, f"Not found: {path}"))
            return
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        try:
            message = self.owner.complete(body)
        except RequestError as err:
            self._send_json(400, err.payload())
            return
        except UpstreamError as err:
            self._send_json(err.status, error_body(err.status, str(err)))
            return
        if not body.get("stream"):
            self._send_json(200, message)
            return
        self._start_stream()
        for name, data in stream_events(message):
            self._send_event(sse(name, data))


AnthropicBridge.handler = _Handler
