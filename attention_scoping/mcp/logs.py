"""The MCP client libraries' own log lines pass our redaction too.

The MCP SDK logs the endpoint URL it connects to (`Connecting to StreamableHTTP endpoint: ...`,
with its userinfo and query), and httpx (httpx2 under mcp 2.x) logs every request URL: at DEBUG
or INFO, a key in a configured URL would reach the application's logs. `guard_logs` adds one
filter to those loggers that applies every live server's redaction (`ServerConfig.redact`)
to each record.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable

CLIENT_LOGGERS = (
    "mcp.client.streamable_http",
    "mcp.client.sse",
    "mcp.client.stdio",
    "mcp.client.auth.oauth2",
    "mcp.client.client",
    "mcp.client.session",
    "mcp.shared.jsonrpc_dispatcher",
    "client",  # mcp 1.x's mcp.client.session
    "httpx",
    "httpx2",
)
"""The third-party loggers that may write a server's URL or a message carrying it."""

Redact = Callable[[str], str]


class RedactingFilter(logging.Filter):
    """Rewrites a record's message with every registered redaction (never drops a record)."""

    def __init__(self) -> None:
        """Start with no redaction registered."""
        super().__init__()
        self._redactors: weakref.WeakSet[Redact] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, redact: Redact) -> None:
        """Apply `redact` too, for as long as it lives."""
        with self._lock:
            self._redactors.add(redact)

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the record's message in place; always keep the record."""
        with self._lock:
            redactors = list(self._redactors)
        if not redactors:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return True
        shown = message
        for redact in redactors:
            shown = redact(shown)
        if shown != message:
            record.msg, record.args = shown, ()
        return True


_FILTER = RedactingFilter()
_installed = False
_install_lock = threading.Lock()


def guard_logs(redact: Redact) -> None:
    """Make the MCP client loggers' records pass `redact` (installed once per process)."""
    global _installed
    _FILTER.add(redact)
    with _install_lock:
        if not _installed:
            for name in CLIENT_LOGGERS:
                logging.getLogger(name).addFilter(_FILTER)
            _installed = True
