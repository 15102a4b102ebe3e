"""Local HTTP servers for tests: a plain one for a client pointed at something that is not a
model API, and the life cycle and handler plumbing the scripted model-API stubs share."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


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


class LocalServer:
    """The life cycle a scripted API server shares: serve `handler` (its class attribute
    `owner` set to this object) on a free 127.0.0.1 port in a daemon thread, as a context
    manager."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("Handler", (self.handler,), {"owner": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._server is None:
            raise RuntimeError("stub is not running")
        return int(self._server.server_address[1])


class StubRequestError(Exception):
    """A request the real API would reject with HTTP 400."""

    def payload(self) -> dict[str, Any]:
        """The body the real API sends with the 400."""
        raise NotImplementedError


class ScriptedHandler(BaseHTTPRequestHandler):
    """The plumbing a scripted API stub's request handler shares: quiet logs, JSON and
    event-stream replies, and recording each request, rejection and script error on its stub
    (`owner`: a `LocalServer` with `_lock`, `_ids`, `requests`, `headers`, `rejections`,
    `errors`)."""

    owner: Any
    request_id_header: ClassVar[str] = "x-request-id"
    """The response header that carries the request id (Anthropic: `request-id`)."""

    def _validate(self, body: Any) -> None:
        """Raise `StubRequestError` for a request the real API refuses."""
        raise NotImplementedError

    def _script_error(self, exc: Exception) -> dict[str, Any]:
        """The 500 body for a failing script entry, in the real API's error shape."""
        raise NotImplementedError

    def log_message(self, format: str, *args: Any) -> None:
        """Keep stderr quiet."""

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header(self.request_id_header, f"req_stub{next(self.owner._ids)}")
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes:
        """The raw request body."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

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

    def _start_stream(self) -> None:
        """Send the headers of a server-sent event stream (the connection closes after it)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _send_event(self, text: str) -> None:
        """Write and flush one event of the stream."""
        self.wfile.write(text.encode())
        self.wfile.flush()
