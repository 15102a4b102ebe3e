"""Which OpenAI-compatible endpoint the eval talks to, with which key, and a reachability check.

OpenRouter by default (`OPENROUTER_API_KEY`); `--base-url` for llama.cpp's server, Ollama,
vLLM or any other (key from `OPENROUTER_API_KEY` for openrouter.ai, else `OPENAI_API_KEY`, else
none: local servers ignore it). Problems (no key, a refused key, an unreachable host, a server
that is not an OpenAI-style API) become one-line `EndpointError`s before any task runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

from attention_scoping.common.extras import install_hint

OPENROUTER_URL = "https://openrouter.ai/api/v1"
NO_KEY = "not-needed"
BRIDGE_GRACE = 10.0
"""Seconds the client of a bridge waits beyond the upstream timeout, so the bridge's own
timeout answer (HTTP 504) arrives first."""


class EndpointError(Exception):
    """The endpoint cannot be used as configured (no key, bad key, unreachable, not an API)."""


@dataclass(frozen=True)
class Endpoint:
    """Base URL, key and request options of the model endpoint."""

    base_url: str
    api_key: str
    key_source: str | None
    timeout: float = 120.0

    @property
    def host(self) -> str:
        """The host part of the base URL (for messages)."""
        return httpx.URL(self.base_url).host or self.base_url


def resolve_endpoint(
    base_url: str | None, api_key_env: str | None = None, timeout: float = 120.0
) -> Endpoint:
    """The endpoint from the command line and the environment; `EndpointError` when no key."""
    url = (base_url or OPENROUTER_URL).rstrip("/")
    if api_key_env:
        candidates = [api_key_env]
    elif "openrouter.ai" in url:
        candidates = ["OPENROUTER_API_KEY"]
    else:
        candidates = ["OPENAI_API_KEY", "OPENROUTER_API_KEY"]
    for name in candidates:
        value = os.environ.get(name, "").strip()
        if value:
            return Endpoint(url, value, name, timeout)
    if base_url is None or api_key_env:
        msg = (
            f"${candidates[0]} is not set: export it, or pass --base-url for a local "
            "OpenAI-compatible server"
        )
        raise EndpointError(msg)
    return Endpoint(url, NO_KEY, None, timeout)


def check_endpoint(endpoint: Endpoint, client: httpx.Client | None = None) -> None:
    """Check once, before any task, that the endpoint is an OpenAI-style API we may use.

    `GET /models`: an unreachable host or a refused key (401, 403) raises `EndpointError`. An
    API answers JSON (a model list, or a JSON error: servers without a models route pass, the
    first chat call decides). When it does not, `POST /chat/completions` with an empty body is
    tried (an API refuses it with a JSON error and runs no model); a second answer that is not
    JSON either (an HTML page, a static file server) raises `EndpointError`.
    """
    own = client is None
    http = client or httpx.Client(timeout=min(endpoint.timeout, 15.0))
    headers = {}
    if endpoint.api_key != NO_KEY:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    try:
        response = _ask(http, "GET", f"{endpoint.base_url}/models", headers, endpoint)
        _check_key(response, endpoint)
        if _is_json(response):
            return
        probe = _ask(http, "POST", f"{endpoint.base_url}/chat/completions", headers, endpoint)
        _check_key(probe, endpoint)
    finally:
        if own:
            http.close()
    if not _is_json(probe):
        msg = (
            f"{endpoint.base_url} is not an OpenAI-compatible API: GET /models answered "
            f"{_answer(response)} and POST /chat/completions {_answer(probe)}; check --base-url "
            "(it usually ends in /v1)"
        )
        raise EndpointError(msg)


def _ask(
    http: httpx.Client, method: str, url: str, headers: dict[str, str], endpoint: Endpoint
) -> httpx.Response:
    """One request; a transport failure becomes `EndpointError`."""
    try:
        if method == "GET":
            return http.get(url, headers=headers)
        return http.post(url, headers=headers, json={})
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        msg = f"cannot reach {endpoint.base_url} ({reason}); is the server running?"
        raise EndpointError(msg) from None


def _check_key(response: httpx.Response, endpoint: Endpoint) -> None:
    if response.status_code in (401, 403):
        source = f" (from ${endpoint.key_source})" if endpoint.key_source else ""
        msg = (
            f"{endpoint.host} rejected the API key{source} with HTTP {response.status_code}: "
            f"{_reason(response)}"
        )
        raise EndpointError(msg)


def _is_json(response: httpx.Response) -> bool:
    """Whether the body is a JSON object (what every answer of an OpenAI-style API is)."""
    try:
        return isinstance(response.json(), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def _answer(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    return f"HTTP {response.status_code} ({kind})"


def _reason(response: httpx.Response) -> str:
    try:
        body: Any = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)[:200]
    return str(error or body)[:200]


def chat_model(endpoint: Endpoint, model: str, *, max_tokens: int | None = 512) -> Any:
    """`ChatOpenAI` at temperature 0 on the endpoint; retries are the eval's own (none here)."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        msg = f"the eval needs langchain-openai: {install_hint('openai')}"
        raise EndpointError(msg) from exc
    from pydantic import SecretStr

    return ChatOpenAI(
        model=model,
        base_url=endpoint.base_url,
        api_key=SecretStr(endpoint.api_key),
        temperature=0,
        timeout=endpoint.timeout,
        max_retries=0,
        max_completion_tokens=max_tokens,
        stream_usage=True,
    )


UNCAPPED_BRIDGE_TOKENS = 1024
"""The output limit of a bridged run whose `--max-tokens` sets none (the Messages API needs
one)."""


def bridged_chat_model(bridge: Any, endpoint: Endpoint) -> Any:
    """`ChatAnthropic` at temperature 0 on a local Anthropic bridge (`anthropic_bridge`) in
    front of the endpoint: the bridge's model, output limit and token, the endpoint's timeout
    (the bridge refuses any other model, a larger limit and a request without its token)."""
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as exc:
        msg = f"--bridge anthropic needs langchain-anthropic: {install_hint('anthropic')}"
        raise EndpointError(msg) from exc
    from pydantic import SecretStr

    return ChatAnthropic(  # type: ignore[call-arg]
        model=bridge.model,
        base_url=bridge.base_url,
        api_key=SecretStr(bridge.token),
        temperature=0,
        max_tokens=bridge.max_tokens,
        default_request_timeout=endpoint.timeout + BRIDGE_GRACE,
        max_retries=0,
    )
