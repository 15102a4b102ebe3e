"""Local HTTP servers for tests: a plain one for a client pointed at something that is not a
model API, and the handler plumbing the scripted model-API stubs share (the server life cycle,
`LocalServer`, and the JSON / event-stream replies live in `attention_scoping_lab.local_server`,
which the eval's API bridge uses too)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attention_scoping_lab.local_server import JsonHandler, LocalServer

__all__ = ["JsonHandler", "LocalServer", "ScriptedHandler", "StubRequestError", "serve"]


@contextmanager
def serve(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on a free local port in a thread; yields the base URL, then stops."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class StubRequestError(Exception):
    """A request the real API would reject with HTTP 400."""

    def payload(self) -> dict[str, Any]:
        """The body the real API sends with the 400."""
        raise NotImplementedError


class ScriptedHandler(JsonHandler):
    """The plumbing a scripted API stub's request handler shares: quiet logs, JSON and
    event-stream replies, and recording each request, rejection and script error on its stub
    (`owner`: a `LocalServer` with `_lock`, `_ids`, `requests`, `headers`, `rejections`,
    `errors`)."""

    owner: Any

    def _validate(self, body: Any) -> None:
        """Raise `StubRequestError` for a request the real API refuses."""
        raise NotImplementedError

    def _script_error(self, exc: Exception) -> dict[str, Any]:
        """The 500 body for a failing script entry, in the real API's error shape."""
        raise NotImplementedError

    def _record(self, raw: bytes) -> Any:
        """Parse `raw` (None when it is not JSON) and record it, if an object, and the request
        headers on the stub."""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        with self.owner._lock:
            if isinstance(body, dict):
                self.owner.requests.append(body)
            self.owner.headers.append({k.lower(): v for k, v in self.headers.items()})
        return body

    def _entry_for(self, body: Any) -> Any | None:
        """Check `body` (when the stub validates, or it is not a JSON object) and take the
        stub's next script entry; None when the request is already answered (400 or 500)."""
        if self.owner.validate or not isinstance(body, dict):
            try:
                self._validate(body)
            except StubRequestError as err:
                self._reject(body, err.payload())
                return None
        try:
            return self.owner._next_entry(body)
        except Exception as exc:  # a failing script callable: a server error
            self._script_failed(exc, self._script_error(exc))
            return None

    def _reject(self, body: Any, payload: dict[str, Any]) -> None:
        """Answer 400 with `payload`, as the real API would, and record the rejection."""
        with self.owner._lock:
            self.owner.rejections.append({"body": body, "status": 400, "error": payload})
        self._send_json(400, payload)

    def _script_failed(self, exc: Exception, payload: dict[str, Any]) -> None:
        """Answer 500 with `payload` for a failing script entry and record the exception."""
        with self.owner._lock:
            self.owner.errors.append(exc)
        self._send_json(500, payload)
