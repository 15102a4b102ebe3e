"""A local Anthropic Messages API in front of an OpenAI-compatible Chat Completions endpoint, so
`langchain_anthropic.ChatAnthropic` (and with it `disclosure="anthropic"`) can run on a local
model (`attention-scoping eval --bridge anthropic`).

`POST /v1/messages` (streaming or not) is checked where the real API answers 400 (deferred
tools, `tool_reference`s naming defined tools, at least one loaded tool, no `cache_control` on
a deferred tool), translated by `anthropic_convert` (only the tools the deferral semantics make
callable go upstream) and answered from the upstream's completion. It emulates the documented
semantics on another model: it is not Anthropic's models, nor their rendering of an expanded
tool definition.

The bridge spends the upstream key for its run only: a request must carry the bridge's own
random token (as `x-api-key` or `Authorization: Bearer`, the two ways the Anthropic SDK sends a
key; made per bridge and handed to the run's `ChatAnthropic`), be declared `application/json`,
and ask for the run's model within its output limit. Anything else is refused before anything
goes upstream (401, 415, 400), so a refused request never carries the key: another local
process, or a web page posting plain text to 127.0.0.1, cannot spend it.

Example:
    ```python
    with AnthropicBridge(upstream, model="local", max_tokens=512) as bridge:
        model = ChatAnthropic(model="local", base_url=bridge.base_url, api_key=bridge.token,
                              max_tokens=512)
    ```
"""

from __future__ import annotations

import hmac
import itertools
import json
import secrets
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
    415: "invalid_request_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
"""Anthropic's error type per HTTP status (any other: `api_error`)."""

NO_TOKEN = "x-api-key (or Authorization: Bearer) is missing or is not this bridge's token"
"""The 401 message: the caller did not send the token this bridge made for its run."""


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
        model: str,
        max_tokens: int,
        api_key: str | None = None,
        timeout: float = 180.0,
        client: httpx.Client | None = None,
    ) -> None:
        """Prepare the bridge, with a fresh random `token` its callers must send.

        Args:
            upstream: Base URL of the OpenAI-compatible endpoint (usually ends in `/v1`).
            model: The run's model: a request naming another is refused.
            max_tokens: The run's output limit: a request asking for more is refused.
            api_key: Sent upstream as `Authorization: Bearer ...` (None: no header).
            timeout: Seconds one upstream call may take.
            client: The HTTP client for upstream calls (default: one of the bridge's own).
        """
        self.upstream = upstream.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self.token = secrets.token_urlsafe(32)
        """What a caller sends as its key (never the upstream key)."""
        self.api_key = api_key
        self.ids = ToolUseIds()
        self._messages = itertools.count(1)
        self._own = client is None
        self.client = client or httpx.Client(timeout=timeout)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, for `ChatAnthropic(base_url=...)`."""
        return f"http://127.0.0.1:{self.port}"

    def __repr__(self) -> str:
        return f"AnthropicBridge({self.upstream!r}, model={self.model!r})"

    def refusal(self, headers: Any) -> tuple[int, str] | None:
        """Why a request with `headers` is refused before its body is read (status, message),
        or None: the token is missing or wrong, or the body is not declared JSON."""
        bearer = (headers.get("authorization") or "").removeprefix("Bearer ").strip()
        sent = headers.get("x-api-key") or bearer
        if not hmac.compare_digest(sent.encode(), self.token.encode()):
            return 401, NO_TOKEN
        kind = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            return 415, f"content-type must be application/json, not {kind or 'none'!r}"
        return None

    def check_limits(self, body: Any) -> None:
        """Refuse a body asking for another model or more output than the run's.

        Raises:
            RequestError: naming the value and what this bridge serves.
        """
        if not isinstance(body, dict):
            return  # validate_request says what is wrong with it
        if body.get("model") != self.model:
            msg = f"model {body.get('model')!r}: this bridge serves model {self.model!r} only"
            raise RequestError(msg)
        limit = body.get("max_tokens")
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= self.max_tokens
        ):
            msg = f"max_tokens must be an integer from 1 to {self.max_tokens}, not {limit!r}"
            raise RequestError(msg)

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
        self.check_limits(body)
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
        path = self.path.split("?", 1)[0].rstrip("/")
        if path != "/v1/messages":
            self._refuse(404, f"Not found: {path}")
            return
        refused = self.owner.refusal(self.headers)
        if refused is not None:
            self._refuse(*refused)
            return
        raw = self._read_body()
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

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` without reading the body, and close the connection."""
        self.close_connection = True
        self._send_json(status, error_body(status, message))


AnthropicBridge.handler = _Handler
