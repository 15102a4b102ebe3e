"""A stdlib HTTP server on a free 127.0.0.1 port in a daemon thread, and the JSON / event-stream
plumbing of its handlers: what the eval's API bridge and the tests' scripted API servers share."""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


class LocalServer:
    """Serve `handler` (its class attribute `owner` set to this object) on a free 127.0.0.1
    port in a daemon thread, as a context manager."""

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
            msg = "server is not running"
            raise RuntimeError(msg)
        return int(self._server.server_address[1])


_REQUEST_IDS = itertools.count(1)


class JsonHandler(BaseHTTPRequestHandler):
    """Quiet logs, the raw request body, JSON replies (with a request id header) and
    server-sent event streams."""

    request_id_header: ClassVar[str] = "x-request-id"
    """The response header that carries the request id (Anthropic: `request-id`)."""

    def log_message(self, format: str, *args: Any) -> None:
        """Keep stderr quiet."""

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header(self.request_id_header, f"req_local{next(_REQUEST_IDS)}")
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes:
        """The raw request body."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

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
