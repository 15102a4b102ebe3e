"""One MCP server's connection: opened on first use, kept for later calls, restarted after a crash.

Our own thin client on the `mcp` 2.x SDK's `Client`: it probes `server/discover` at the newest
protocol revision (2026-07-28) and falls back to the `initialize` handshake of older revisions
(`mode="auto"`). Runs on the `BackgroundLoop`. A dedicated owner task opens the transport and the
client and holds them until the connection is retired (anyio requires a session to be closed by
the task that opened it). Every failure is raised as an `McpFault`: start failure, crash,
timeout, malformed result, a JSON-RPC error, or a tool the server no longer lists. Every fault's
text, every log line and the relayed stderr pass the server's redaction (`ServerConfig.redact`),
and the stderr is capped (`STDERR_LINES` lines, `STDERR_CHARS` characters).

A tool-list change (`notifications/tools/list_changed` on a 2025 session, a `subscriptions/listen`
event on a 2026-07-28 one) or an expired listing (`ttlMs`) marks the listing stale; it is read
again at the next `ensure()` (`McpServers` calls that at the start of a user turn).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import IO, Any, TextIO

from pydantic import ValidationError

from attention_scoping.common.extras import install_hint
from attention_scoping.common.limits import clip
from attention_scoping.mcp.cache import ToolListing, listing_from_tools
from attention_scoping.mcp.config import ServerConfig
from attention_scoping.mcp.faults import FaultCode, McpFault, exception_text, leaf_exceptions
from attention_scoping.mcp.logs import guard_logs

try:  # the 2.x SDK: `Client`, `MCPError` and the `mcp_types` package are new in 2.0
    import anyio
    from mcp import Client, MCPError, StdioServerParameters
    from mcp import types as mcp_types
    from mcp.client.stdio import stdio_client
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from attention_scoping.mcp.transports import remote_transport
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    msg = f"attention_scoping.mcp needs mcp>=2.3 (the 'mcp' extra): {install_hint('mcp')} ({exc})"
    raise ImportError(msg) from exc

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT_CODES = frozenset({mcp_types.REQUEST_TIMEOUT, 408})
"""JSON-RPC error codes of a request that timed out (2.x SDK; 408 from 1.x-era proxies)."""
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
    """The raw MCP tool as a plain dict in wire (camelCase) form: the fields a provider is sent,
    plus annotations."""
    record: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.input_schema,
    }
    if tool.annotations is not None:
        record["annotations"] = tool.annotations.model_dump(by_alias=True, exclude_none=True)
    return record


class Page:
    """What `list_all_tools` read: the tools and the listing's cache directives."""

    def __init__(self, tools: list[dict[str, Any]], ttl_ms: int, cache_scope: str) -> None:
        """Keep the tools, the smallest `ttlMs` of the pages and the strictest `cacheScope`."""
        self.tools = tools
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope


ListPage = Callable[[str | None], Awaitable[mcp_types.ListToolsResult]]
"""Reads one `tools/list` page at a cursor."""


async def list_all_tools(client: Client) -> Page:
    """Every tool of `client`'s server, following pagination cursors, read from the server (not
    the SDK's response cache: our listing has its own lifetime)."""

    async def fetch(cursor: str | None) -> mcp_types.ListToolsResult:
        return await client.list_tools(cursor=cursor, cache_mode="bypass")

    return await list_pages(fetch)


async def list_pages(fetch: ListPage) -> Page:
    """Every tool `fetch` reads, page after page (at most `_MAX_PAGES`), with the smallest
    `ttlMs` and the strictest `cacheScope` of the pages."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    ttl: int | None = None
    scope = "public"
    for _ in range(_MAX_PAGES):
        page = await fetch(cursor)
        tools.extend(_tool_dict(t) for t in page.tools)
        ttl = page.ttl_ms if ttl is None else min(ttl, page.ttl_ms)
        scope = "private" if page.cache_scope == "private" else scope
        cursor = page.next_cursor
        if not cursor:
            return Page(tools, ttl or 0, scope)
    msg = f"tools/list returned more than {_MAX_PAGES} pages"
    raise RuntimeError(msg)


def make_listing(
    server: ServerConfig,
    page: Page,
    instructions: str | None,
    name: str | None,
    protocol: str | None,
) -> ToolListing:
    """The listing of `page` read from `server`, its configured secrets masked and every tool
    within `mcp.bounds` (one warning per tool that was cut, naming the server and the tool)."""
    listing = listing_from_tools(
        page.tools, instructions, name,
        ttl_ms=page.ttl_ms, cache_scope=page.cache_scope, protocol=protocol,
        redact=server.redact_values,
    )  # fmt: skip
    for tool, cuts in listing.oversized.items():
        logger.warning(
            "MCP server %r lists tool %r oversized: %s (cut to the limits of "
            "attention_scoping.mcp.bounds)", server.name, tool, "; ".join(cuts),
        )  # fmt: skip
    return listing


def _tools_capability(client: Client) -> mcp_types.ToolsCapability | None:
    caps = client.server_capabilities
    return caps.tools if caps is not None else None


def _is_list_change(message: Any) -> bool:
    root = getattr(message, "root", message)
    return isinstance(root, mcp_types.ToolListChangedNotification)


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
    """The lazily opened connection of one server (lives on the background loop).

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
        """How many times a connection was opened (1 + restarts)."""
        self.listing: ToolListing | None = None
        self.protocol_version: str | None = None
        """The protocol revision the open connection speaks (None before the first)."""
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._retiring: set[asyncio.Task[None]] = set()
        self._lock: asyncio.Lock | None = None
        self._stale = False
        self._expires: float | None = None

    @property
    def connected(self) -> bool:
        """Whether a connection is open now."""
        return self._client is not None

    @property
    def stale(self) -> bool:
        """Whether the listing must be read again: the server announced a change, or the
        listing's `ttlMs` ran out (a `ttlMs` of 0 is never re-read on a timer: only a change
        announcement or a new connection refreshes it, so an unchanging server is not asked
        again before every turn)."""
        expired = self._expires is not None and time.monotonic() >= self._expires
        return self._stale or expired

    # -- opening -------------------------------------------------------------------------

    def transport(self, errlog: StderrTail | None) -> Any:
        """The SDK transport for this server (stdio's stderr into `errlog`): an async context
        manager yielding the stream pair."""
        server = self.server
        if server.transport == "stdio":
            params = StdioServerParameters(
                command=str(server.command), args=list(server.args), env=server.env,
                cwd=server.cwd,
            )  # fmt: skip
            stderr = errlog.writer if errlog is not None else sys.stderr
            return stdio_client(params, errlog=stderr)
        return remote_transport(server.transport, str(server.url), server.headers)

    @contextlib.asynccontextmanager
    async def _open(self, errlog: StderrTail | None) -> AsyncIterator[Client]:
        client = Client(
            self.transport(errlog),
            mode="auto",
            message_handler=self._on_message,
            cache=None,
            read_timeout_seconds=self.connect_timeout,
        )
        async with client:
            yield client

    async def _on_message(self, message: Any) -> None:
        """Note `notifications/tools/list_changed`: the listing is re-read at the next turn."""
        if _is_list_change(message):
            self.mark_changed()

    def mark_changed(self) -> None:
        """The server's tool list changed: re-read it at the next `ensure()`."""
        logger.info("MCP server %r changed its tool list", self.server.name)
        self._stale = True
        self.on_invalidate()

    async def _subscribe(self, client: Client, stack: contextlib.AsyncExitStack) -> Any:
        """On a 2026-07-28 connection whose server announces list changes, subscribe to them
        (`subscriptions/listen`) before the first listing, so no change falls between the two.
        The subscription, or None (not offered, refused: logged, never raised)."""
        tools = _tools_capability(client)
        if tools is None or not tools.list_changed:
            return None
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None  # a 2025 server sends notifications/tools/list_changed unasked
        try:
            return await stack.enter_async_context(client.listen(tools_list_changed=True))
        except Exception as exc:  # the listing still refreshes on reconnect and on expiry
            ended = self.server.redact(exception_text(exc))
            logger.debug("MCP server %r refused a list subscription: %s", self.server.name, ended)
            return None

    async def _watch(self, subscription: Any) -> None:
        """Mark the listing stale on every change event; a lost subscription is logged."""
        try:
            async for _event in subscription:
                self.mark_changed()
        except Exception as exc:
            ended = self.server.redact(exception_text(exc))
            logger.debug("MCP server %r list subscription ended: %s", self.server.name, ended)

    def fault(
        self, message: str, *, code: FaultCode, tool: str | None = None, detail: str | None = None
    ) -> McpFault:
        """An `McpFault` of this server, its message and detail redacted and cut."""
        redact = self.server.redact
        head = FAULT_TEXT_CHARS + 4_096  # a secret across the cut is masked whole
        text = clip(redact(message[:head]), FAULT_TEXT_CHARS)
        shown = clip(redact(detail[:head]), FAULT_TEXT_CHARS) if detail else detail
        return McpFault(self.server.name, text, code=code, tool=tool, detail=shown)

    def start_fault(self, exc: BaseException, errlog: StderrTail | None) -> McpFault:
        """The `server_unavailable` fault for a failed start, with the redacted stderr tail."""
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

    def _listing(self, page: Page, instructions: str | None, name: str | None) -> ToolListing:
        """The redacted listing of `page`, its lifetime noted."""
        listing = make_listing(self.server, page, instructions, name, self.protocol_version)
        self._stale = False
        self._expires = time.monotonic() + page.ttl_ms / 1000 if page.ttl_ms > 0 else None
        return listing

    async def _serve(self, ready: asyncio.Future[ToolListing], stop: asyncio.Event) -> None:
        """Owner task: open the connection, list the tools, hold it until `stop`."""
        stdio = self.server.transport == "stdio"
        errlog = StderrTail(self.server.name, redact=self.server.redact) if stdio else None
        try:
            async with self._open(errlog) as client, contextlib.AsyncExitStack() as stack:
                self.protocol_version = client.protocol_version
                subscription = await self._subscribe(client, stack)
                page = await list_all_tools(client)
                info = client.server_info
                listing = self._listing(page, client.instructions, info.name if info else None)
                self._client, self.listing = client, listing
                ready.set_result(listing)
                self.on_listing(listing)
                async with anyio.create_task_group() as group:
                    if subscription is not None:
                        group.start_soon(self._watch, subscription)
                    await stop.wait()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(self.start_fault(exc, errlog))
            else:
                ended = self.server.redact(exception_text(exc))
                logger.debug("MCP session %r ended: %s", self.server.name, ended)
        finally:
            if self._stop is stop:
                self._client = None
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
        """Open the connection if needed (re-listing tools when the listing is `stale`); its
        listing."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is None:
                return await self._start()
            if self.stale or self.listing is None:
                old = self.listing
                try:
                    page = await list_all_tools(self._client)
                except (MCPError, ValidationError, RuntimeError, *_NOT_SENT) as exc:
                    self._retire()
                    message = "the server failed to list its tools again"
                    detail = exception_text(exc)
                    raise self.fault(message, code="server_crashed", detail=detail) from None
                self.listing = self._listing(
                    page, old.instructions if old else None, old.server_name if old else None
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
            client = self._client
            if client is None:  # closed between ensure() and now
                continue
            try:
                return await self._call(client, tool, arguments)
            except _NOT_SENT:
                self._retire()
                if attempt == 2:
                    message = "the server process is gone and did not come back"
                    raise self.fault(message, code="server_crashed", tool=tool) from None
        message = "no session"
        raise self.fault(message, code="server_crashed", tool=tool)

    def _mcp_fault(self, exc: MCPError, tool: str) -> McpFault:
        code = exc.error.code
        if code in REQUEST_TIMEOUT_CODES:
            self._retire()
            message = f"no answer within {self.call_timeout:g} s"
            return self.fault(message, code="timeout", tool=tool)
        if code == mcp_types.CONNECTION_CLOSED:
            self._retire()
            message = "the server closed the connection during the call"
            return self.fault(message, code="server_crashed", tool=tool)
        return self.fault(exc.error.message, code="server_error", tool=tool)

    async def _call(
        self, client: Client, tool: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout)
        except MCPError as exc:
            raise self._mcp_fault(exc, tool) from None
        except TimeoutError:
            self._retire()
            message = f"no answer within {self.call_timeout:g} s"
            raise self.fault(message, code="timeout", tool=tool) from None
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
        """Let the current owner close its connection and process in the background."""
        owner, stop = self._owner, self._stop
        self._owner = self._stop = None
        self._client = None
        if stop is not None:
            stop.set()
        if owner is not None and not owner.done():
            if cancel:
                owner.cancel()
            self._retiring.add(owner)
            owner.add_done_callback(self._retiring.discard)

    async def close(self, timeout: float = 10.0) -> None:
        """Close the connection and wait (bounded) until its process has exited."""
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
