"""One MCP server's session: opened on first use, kept for later calls, restarted after a crash.

Runs on the `BackgroundLoop`. A dedicated owner task opens the transport and the session and
holds them until the connection is retired (anyio requires a session to be closed by the task
that opened it). Every failure is raised as an `McpFault`: start failure, crash, timeout,
malformed result, a JSON-RPC error, or a tool the server no longer lists. Every fault's text,
every log line and the relayed stderr pass the server's redaction (`ServerConfig.redact`), and
the stderr is capped (`STDERR_LINES` lines, `STDERR_CHARS` characters).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import IO, Any, TextIO

from attention_scoping.core.extras import install_hint
from attention_scoping.core.limits import clip

try:
    import anyio
    from mcp import ClientSession, McpError, StdioServerParameters
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    msg = f"attention_scoping.mcp needs the 'mcp' extra: {install_hint('mcp')} ({exc})"
    raise ImportError(msg) from exc
from mcp import types as mcp_types
from mcp.client.stdio import stdio_client
from pydantic import ValidationError

from attention_scoping.mcp.cache import ToolListing, listing_from_tools, redacted_listing
from attention_scoping.mcp.config import ServerConfig
from attention_scoping.mcp.faults import FaultCode, McpFault, exception_text, leaf_exceptions
from attention_scoping.mcp.logs import guard_logs

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT_CODE = 408
"""The JSON-RPC error code the MCP client uses for a request that timed out."""
_NOT_SENT = (anyio.ClosedResourceError, anyio.BrokenResourceError)
"""Raised when the request could not even be written: the server was already gone."""
_MAX_PAGES = 100
FAULT_TEXT_CHARS = 2_000
"""Longest message or detail of a fault (a server's own error text can be any size)."""
STDERR_LINES = 5
"""How many of a failed server's last stderr lines are relayed."""
STDERR_CHARS = 400
"""How many characters of them, at most."""
_LINE_CHARS = 200
"""Longest stderr line kept (the rest of a longer line is dropped)."""
_READ_CHARS = 65_536
"""Longest stretch of one stderr line read (and redacted) at once."""


def _keep(text: str) -> str:
    return text


def _tool_dict(tool: mcp_types.Tool) -> dict[str, Any]:
    """The raw MCP tool as a plain dict (the fields a provider is sent, plus annotations)."""
    record: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.inputSchema,
    }
    if tool.annotations is not None:
        record["annotations"] = tool.annotations.model_dump(exclude_none=True)
    return record


async def list_all_tools(session: ClientSession) -> list[dict[str, Any]]:
    """Every tool of `session`, following pagination cursors."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await session.list_tools(cursor=cursor)
        tools.extend(_tool_dict(t) for t in page.tools)
        cursor = page.nextCursor
        if not cursor:
            return tools
    msg = f"tools/list returned more than {_MAX_PAGES} pages"
    raise RuntimeError(msg)


class StderrTail:
    """A pipe a stdio server writes its stderr to; its last lines are kept, never a growing file.

    A daemon thread drains the pipe (so a chatty server never blocks on a full pipe), redacts
    each line with `redact`, logs it at DEBUG and keeps the last `lines` (each cut to 200
    characters) for start-failure messages.
    """

    def __init__(self, server: str, lines: int = 20, redact: Callable[[str], str] = _keep) -> None:
        """Open the pipe and start draining it."""
        self._redact = redact
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        """The write end, handed to the server process as its stderr."""
        self._lines: collections.deque[str] = collections.deque(maxlen=lines)
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(
            target=self._drain, args=(server, reader), name=f"mcp-stderr-{server}", daemon=True
        )
        self._thread.start()

    def _drain(self, server: str, reader: IO[str]) -> None:
        continued = False  # the chunk is the rest of a line already cut
        with reader:
            for chunk in iter(lambda: reader.readline(_READ_CHARS), ""):
                skip, continued = continued, not chunk.endswith("\n")
                text = "" if skip else self._redact(chunk.rstrip())
                if text:
                    text = text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + "…"
                    self._lines.append(text)
                    logger.debug("MCP server %r stderr: %s", server, text)

    def close(self, wait: float = 0.0) -> None:
        """Close our write end; wait up to `wait` s for the lines already written to arrive."""
        with contextlib.suppress(OSError):
            self.writer.close()
        if wait:
            self._thread.join(wait)

    def text(self, last: int = STDERR_LINES, limit: int = STDERR_CHARS) -> str:
        """The last lines, joined with ` | ` and cut to `limit` characters."""
        return " | ".join(list(self._lines)[-last:])[-limit:]


class ServerConnection:
    """The lazily opened session of one server (lives on the background loop).

    Args:
        server: The server's configuration.
        connect_timeout: Seconds to start the server and finish the handshake and listing.
        call_timeout: Seconds a tool call may take unless the server's `timeout` says otherwise.
        on_listing: Called with every fresh tool listing (to update the cache and the tools).
        on_invalidate: Called when the server announces that its tool list changed.
    """

    def __init__(
        self,
        server: ServerConfig,
        *,
        connect_timeout: float,
        call_timeout: float,
        on_listing: Callable[[ToolListing], None] = lambda _listing: None,
        on_invalidate: Callable[[], None] = lambda: None,
    ) -> None:
        """Record the settings; nothing is started."""
        self.server = server
        guard_logs(server.redact)
        self.connect_timeout = connect_timeout
        self.call_timeout = server.timeout or call_timeout
        self.on_listing = on_listing
        self.on_invalidate = on_invalidate
        self.starts = 0
        """How many times a session was opened (1 + restarts)."""
        self.listing: ToolListing | None = None
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._lock: asyncio.Lock | None = None
        self._stale = False

    @property
    def connected(self) -> bool:
        """Whether a session is open now."""
        return self._session is not None

    # -- opening -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _open(self, errlog: StderrTail | None) -> AsyncIterator[ClientSession]:
        server = self.server
        if server.transport == "stdio":
            params = StdioServerParameters(
                command=str(server.command), args=list(server.args), env=server.env,
                cwd=server.cwd,
            )  # fmt: skip
            stderr = errlog.writer if errlog is not None else sys.stderr
            async with (
                stdio_client(params, errlog=stderr) as (read, write),
                ClientSession(read, write, message_handler=self._on_message) as session,
            ):
                yield session
            return
        from langchain_mcp_adapters.sessions import create_session

        connection: dict[str, Any] = {
            "transport": server.transport,
            "url": server.url,
            "session_kwargs": {"message_handler": self._on_message},
        }
        if server.headers:
            connection["headers"] = dict(server.headers)
        async with create_session(connection) as session:  # type: ignore[arg-type]
            yield session

    async def _on_message(self, message: Any) -> None:
        """Note `notifications/tools/list_changed`: the listing is re-read before the next call."""
        root = getattr(message, "root", None)
        if isinstance(root, mcp_types.ToolListChangedNotification):
            logger.info("MCP server %r changed its tool list", self.server.name)
            self._stale = True
            self.on_invalidate()

    def fault(
        self, message: str, *, code: FaultCode, tool: str | None = None, detail: str | None = None
    ) -> McpFault:
        """An `McpFault` of this server, its message and detail redacted and cut."""
        redact = self.server.redact
        head = FAULT_TEXT_CHARS + 4_096  # a secret across the cut is masked whole
        text = clip(redact(message[:head]), FAULT_TEXT_CHARS)
        shown = clip(redact(detail[:head]), FAULT_TEXT_CHARS) if detail else detail
        return McpFault(self.server.name, text, code=code, tool=tool, detail=shown)

    def _start_fault(self, exc: BaseException, errlog: StderrTail | None) -> McpFault:
        leaves = leaf_exceptions(exc)
        if any(isinstance(e, FileNotFoundError) for e in leaves):
            message = f"cannot start {self.server.command!r}: command not found"
        elif self.server.transport != "stdio":
            message = f"cannot reach {self.server.url} or complete the MCP handshake"
        else:
            message = "failed to start or to complete the MCP handshake"
        stderr = ""
        if errlog is not None:
            errlog.close(wait=0.5)  # an exited server's last words are in the pipe
            stderr = errlog.text()
        detail = exception_text(exc) + (f"; server stderr: {stderr}" if stderr else "")
        return self.fault(message, code="server_unavailable", detail=detail)

    async def _serve(self, ready: asyncio.Future[ToolListing], stop: asyncio.Event) -> None:
        """Owner task: open the session, list the tools, hold the session until `stop`."""
        stdio = self.server.transport == "stdio"
        errlog = StderrTail(self.server.name, redact=self.server.redact) if stdio else None
        try:
            async with self._open(errlog) as session:
                init = await session.initialize()
                tools = await list_all_tools(session)
                listing = redacted_listing(
                    listing_from_tools(tools, init.instructions, init.serverInfo.name),
                    self.server.redact_values,
                )
                self._session, self.listing, self._stale = session, listing, False
                ready.set_result(listing)
                self.on_listing(listing)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(self._start_fault(exc, errlog))
            else:
                ended = self.server.redact(exception_text(exc))
                logger.debug("MCP session %r ended: %s", self.server.name, ended)
        finally:
            if self._stop is stop:
                self._session = None
            if errlog is not None:
                errlog.close()

    async def _start(self) -> ToolListing:
        self._retire()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[ToolListing] = loop.create_future()
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # always retrieved
        stop = asyncio.Event()
        self._stop = stop
        self._owner = asyncio.create_task(self._serve(ready, stop))
        self.starts += 1
        try:
            async with asyncio.timeout(self.connect_timeout):
                return await asyncio.shield(ready)
        except TimeoutError:
            self._retire(cancel=True)
            message = f"no MCP handshake within {self.connect_timeout:g} s"
            where = self.server.where()
            raise self.fault(message, code="server_unavailable", detail=where) from None
        except McpFault:
            self._retire()
            raise

    async def ensure(self) -> ToolListing:
        """Open the session if needed (re-listing tools after `list_changed`); its listing."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._session is None:
                return await self._start()
            if self._stale or self.listing is None:
                self._stale = False
                tools = await list_all_tools(self._session)
                old = self.listing
                self.listing = redacted_listing(
                    listing_from_tools(
                        tools, old.instructions if old else None, old.server_name if old else None
                    ),
                    self.server.redact_values,
                )
                self.on_listing(self.listing)
            return self.listing

    # -- calling -------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call `tool`; a call that never reached a dead server is retried once on a new one.

        Raises:
            McpFault: the server is unavailable, crashed, timed out or answered garbage, or
                the tool is no longer listed.
        """
        for attempt in (1, 2):
            try:
                listing = await self.ensure()
            except McpFault as fault:
                fault.tool = fault.tool or tool
                raise
            if tool not in listing.names:
                message = f"the server no longer offers tool {tool!r}"
                raise self.fault(message, code="tool_withdrawn", tool=tool)
            session = self._session
            if session is None:  # closed between ensure() and now
                continue
            try:
                return await self._call(session, tool, arguments)
            except _NOT_SENT:
                self._retire()
                if attempt == 2:
                    message = "the server process is gone and did not come back"
                    raise self.fault(message, code="server_crashed", tool=tool) from None
        message = "no session"
        raise self.fault(message, code="server_crashed", tool=tool)

    async def _call(
        self, session: ClientSession, tool: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=timedelta(seconds=self.call_timeout)
            )
        except McpError as exc:
            code = exc.error.code
            if code == REQUEST_TIMEOUT_CODE:
                self._retire()
                message = f"no answer within {self.call_timeout:g} s"
                raise self.fault(message, code="timeout", tool=tool) from None
            if code == mcp_types.CONNECTION_CLOSED:
                self._retire()
                message = "the server closed the connection during the call"
                raise self.fault(message, code="server_crashed", tool=tool) from None
            raise self.fault(exc.error.message, code="server_error", tool=tool) from None
        except ValidationError as exc:
            message = "the result is not a valid MCP tool result"
            detail = exception_text(exc)
            raise self.fault(message, code="malformed_result", tool=tool, detail=detail) from None
        except _NOT_SENT:
            raise
        except RuntimeError as exc:  # e.g. structured content that breaks the output schema
            message = "the result breaks the tool's declared output"
            detail = exception_text(exc)
            raise self.fault(message, code="malformed_result", tool=tool, detail=detail) from None
        except Exception as exc:
            self._retire()
            message = "the connection failed during the call"
            detail = exception_text(exc)
            raise self.fault(message, code="server_crashed", tool=tool, detail=detail) from None

    # -- closing -------------------------------------------------------------------------

    def _retire(self, *, cancel: bool = False) -> None:
        """Let the current owner close its session and process in the background."""
        owner, stop = self._owner, self._stop
        self._owner = self._stop = None
        self._session = None
        if stop is not None:
            stop.set()
        if owner is not None and not owner.done():
            if cancel:
                owner.cancel()
            self._retiring.add(owner)
            owner.add_done_callback(self._retiring.discard)

    async def close(self, timeout: float = 10.0) -> None:
        """Close the session and wait (bounded) until its process has exited."""
        self._retire()
        self._lock = None  # asyncio primitives bind to a loop; a reopened hub may run another
        pending = list(self._retiring)
        if not pending:
            return
        _done, still = await asyncio.wait(pending, timeout=timeout)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=timeout)


async def list_once(conn: ServerConnection) -> ToolListing | McpFault:
    """Open `conn`, list its tools and close it again: the listing, or why it failed."""
    try:
        return await conn.ensure()
    except McpFault as fault:
        return fault
    finally:
        await conn.close()
