"""`eval` checks the endpoint once, before the first task: something that is not an
OpenAI-style API (a static file server, an HTML page) ends the command with one line and exit 2
instead of every task being retried and recorded as an error (issue 25, build item 8)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any, cast

import httpx
import openai
import pytest

from attention_scoping_lab.cli import main
from attention_scoping_lab.eval.endpoint import Endpoint, EndpointError, check_endpoint
from attention_scoping_lab.eval.retry import is_transient
from tests.http_support import serve


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr."""


def _static_site(root: Path) -> Callable[..., BaseHTTPRequestHandler]:
    (root / "index.html").write_text("<html><body>Welcome</body></html>")
    return functools.partial(_Quiet, directory=str(root))


class _HtmlEverywhere(BaseHTTPRequestHandler):
    """A web app that answers every GET and POST with 200 and an HTML page."""

    def _page(self) -> None:
        body = b"<!doctype html><html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _page

    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr."""


class _NoModelsRoute(BaseHTTPRequestHandler):
    """An API without `GET /models` (404 page) whose chat route answers JSON errors."""

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"Not Found")

    def do_POST(self) -> None:
        body = json.dumps({"error": {"message": "messages is required"}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr."""


def _endpoint(url: str) -> Endpoint:
    return Endpoint(url, "not-needed", None, 10.0)


def test_a_static_file_server_is_not_an_api(tmp_path: Path) -> None:
    with serve(_static_site(tmp_path)) as base, pytest.raises(EndpointError) as caught:
        check_endpoint(_endpoint(f"{base}/v1"))
    message = str(caught.value)
    assert "is not an OpenAI-compatible API" in message
    assert "GET /models answered HTTP 404 (text/html)" in message
    assert "POST /chat/completions HTTP 501 (text/html)" in message


def test_an_html_page_answering_everything_is_not_an_api() -> None:
    with (
        serve(_HtmlEverywhere) as base,
        pytest.raises(EndpointError, match="HTTP 200 \\(text/html\\)"),
    ):
        check_endpoint(_endpoint(base))


def test_an_api_without_a_models_route_passes() -> None:
    """Servers without `GET /models` pass when the chat route answers JSON (no model runs:
    the probe's empty body is refused)."""
    with serve(_NoModelsRoute) as base:
        check_endpoint(_endpoint(base))


def test_eval_against_a_static_file_server_ends_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    with serve(_static_site(tmp_path)) as base:
        code = main(
            ["eval", "--base-url", base, "--model", "m", "--results", str(results), "--quiet"]
        )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err
    assert "is not an OpenAI-compatible API" in err and "check --base-url" in err
    assert not results.exists()  # no task ran


def test_not_implemented_is_not_retried() -> None:
    """501 (a static server's answer to POST) is permanent; 500 and 503 stay transient."""
    request = httpx.Request("POST", "http://x/v1/chat/completions")

    def error(status: int) -> openai.APIStatusError:
        response = httpx.Response(status, request=request, text="<html></html>")
        return openai.APIStatusError("boom", response=cast(Any, response), body=None)

    assert not is_transient(error(501))
    assert is_transient(error(500)) and is_transient(error(503)) and is_transient(error(429))
