"""`server/discover` (protocol 2026-07-28): what a server is, asked without opening a session.

A 2026-07-28 server answers `server/discover` statelessly: the protocol revisions it speaks, its
capabilities (does it offer tools, does it announce list changes), its instructions and how long
the answer may be cached. A 2025 server does not know the method; it is then described as
`None` (where a server offers it, and only then) and nothing else is sent: no `initialize`.
The capability index and the audit can say what a server is before any session exists.

`index_listing` is what `McpServers` builds a server's scope from when no cached listing
serves: `server/discover`, then the stateless `tools/list` pages, and nothing held: no
`initialize`, no `subscriptions/listen` stream, no session (one is opened when the model loads
the scope or calls a tool). A server that does not offer `server/discover` is listed as before
it existed: the `initialize` handshake, `tools/list`, closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp import ClientSession, MCPError
from mcp import types as mcp_types
from mcp_types.version import LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from attention_scoping.mcp.cache import ToolListing
from attention_scoping.mcp.config import ConfigInput, ServerConfig, load_config
from attention_scoping.mcp.connection import (
    Page,
    ServerConnection,
    StderrTail,
    list_pages,
    make_listing,
)
from attention_scoping.mcp.faults import McpFault
from attention_scoping.mcp.loop import BackgroundLoop

T = TypeVar("T")


@dataclass(frozen=True)
class ServerDescription:
    """A server's answer to `server/discover`."""

    versions: tuple[str, ...]
    """The protocol revisions it speaks."""
    tools: bool
    """Whether it offers tools."""
    list_changed: bool
    """Whether it announces tool-list changes (`subscriptions/listen`)."""
    instructions: str | None
    """Its own instructions (server text: never a prompt; see `servertext`)."""
    ttl_ms: int
    cache_scope: str


def describe(result: mcp_types.DiscoverResult) -> ServerDescription:
    """The description in a `DiscoverResult`."""
    tools = result.capabilities.tools
    return ServerDescription(
        versions=tuple(result.supported_versions),
        tools=tools is not None,
        list_changed=bool(tools is not None and tools.list_changed),
        instructions=result.instructions,
        ttl_ms=result.ttl_ms,
        cache_scope=result.cache_scope,
    )


async def probe(session: ClientSession) -> mcp_types.DiscoverResult | None:
    """`server/discover` at the newest revision: the answer, or None when the server does not
    offer it (an error answer, or one that is no `DiscoverResult` or names no 2026 revision).
    A probe that timed out is sent again (the SDK gives it 10 s; a server slow to start has not
    answered "no"): the caller's own timeout bounds the whole. An `unsupported protocol version`
    answer naming a revision we speak is followed once at that revision.

    Raises:
        MCPError, ValidationError: never (not offered); other exceptions pass.
    """
    version, retried = LATEST_MODERN_VERSION, False
    while True:
        try:
            raw = await session.send_discover(version)
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                continue
            mutual = _mutual(exc) if exc.code == mcp_types.UNSUPPORTED_PROTOCOL_VERSION else []
            if mutual and not retried:
                version, retried = mutual[-1], True
                continue
            return None
        try:
            result = mcp_types.DiscoverResult.model_validate(raw)
        except ValidationError:
            return None
        return (
            result
            if any(v in MODERN_PROTOCOL_VERSIONS for v in result.supported_versions)
            else None
        )


def _mutual(exc: MCPError) -> list[str]:
    """The 2026 revisions we speak among those an `unsupported protocol version` error names."""
    try:
        data = mcp_types.UnsupportedProtocolVersionErrorData.model_validate(exc.error.data)
    except ValidationError:
        return []
    return [v for v in MODERN_PROTOCOL_VERSIONS if v in (data.supported or ())]


@asynccontextmanager
async def short_session(
    server: ServerConfig, timeout: float, **options: Any
) -> AsyncIterator[ClientSession]:
    """A session with `server` for one short exchange, all of it within `timeout` (`options` go
    to `ClientSession`); any failure becomes the redacted `McpFault` (`server_unavailable`)."""
    conn = ServerConnection(server, connect_timeout=timeout, call_timeout=timeout)
    errlog = StderrTail(server.name, redact=server.redact) if server.transport == "stdio" else None
    try:
        async with (
            asyncio.timeout(timeout),
            conn.transport(errlog) as (read, write),
            ClientSession(read, write, **options) as session,
        ):
            yield session
    except Exception as exc:
        raise conn.start_fault(exc, errlog) from None
    finally:
        if errlog is not None:
            errlog.close()


async def discover_server(server: ServerConfig, timeout: float = 30.0) -> ServerDescription | None:
    """Ask `server` `server/discover` at the newest revision: its description, or None when it
    does not offer the method (a 2025 server).

    Raises:
        McpFault: the server cannot be started or reached (`server_unavailable`), redacted.
    """
    async with short_session(server, timeout) as session:
        found = await probe(session)
    # None: it does not speak 2026-07-28: described by its handshake, if opened
    return describe(found) if found is not None else None


@dataclass(frozen=True)
class IndexListing:
    """What a server's scope is built from before any session: its tools and its description."""

    listing: ToolListing
    """Its tools (redacted), instructions and the listing's lifetime."""
    description: ServerDescription | None
    """Its `server/discover` answer; None when it does not offer the method (then the tools
    were listed through the `initialize` handshake, as a 2025 client does)."""


async def _list_for_index(session: ClientSession, server: ServerConfig) -> IndexListing:
    found = await probe(session)
    if found is None:
        await session.initialize()  # a 2025 server: listed through its handshake
    else:
        session.adopt(found)  # stateless from here: every request carries the revision

    async def fetch(cursor: str | None) -> mcp_types.ListToolsResult:
        return await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))

    if found is not None and found.capabilities.tools is None:
        page = Page([], found.ttl_ms, found.cache_scope)  # it says it offers no tools
    else:
        page = await list_pages(fetch)
    info = session.server_info
    name = info.name if info else None
    listing = make_listing(server, page, session.instructions, name, session.protocol_version)
    return IndexListing(listing, describe(found) if found is not None else None)


async def index_listing(server: ServerConfig, timeout: float = 30.0) -> IndexListing:
    """`server`'s tools for the capability index, read without opening a session: where it
    offers `server/discover`, that and the stateless `tools/list` (no `initialize`, no list
    subscription); elsewhere the `initialize` handshake and `tools/list`. Closed after.

    Raises:
        McpFault: the server cannot be started, reached or listed (`server_unavailable`),
            redacted.
    """
    async with short_session(server, timeout, read_timeout_seconds=timeout) as session:
        return await _list_for_index(session, server)


def discover_servers(
    config: ConfigInput, *, timeout: float = 30.0
) -> dict[str, ServerDescription | McpFault | None]:
    """`discover_server` for every configured server, concurrently: name -> its description,
    None (no `server/discover`), or the `McpFault` saying why it could not be asked."""
    servers: Mapping[str, ServerConfig] = load_config(config).servers
    return ask_each(
        servers, lambda s: discover_server(s, timeout), "attention-scoping-mcp-discover"
    )


def ask_each(
    servers: Mapping[str, ServerConfig], ask: Callable[[ServerConfig], Awaitable[T]], loop: str
) -> dict[str, T | McpFault]:
    """`ask` every server concurrently on a background loop named `loop`: name -> its answer,
    or the `McpFault` saying why it could not be asked."""
    runner = BackgroundLoop(loop)

    async def one(server: ServerConfig) -> T | McpFault:
        try:
            return await ask(server)
        except McpFault as fault:
            return fault

    async def every() -> list[T | McpFault]:
        return list(await asyncio.gather(*(one(s) for s in servers.values())))

    try:
        results = runner.run(every())
    finally:
        runner.stop()
    return dict(zip(servers, results, strict=True))
