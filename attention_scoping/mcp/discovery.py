"""`server/discover` (protocol 2026-07-28): what a server is, asked without opening a session.

A 2026-07-28 server answers `server/discover` statelessly: the protocol revisions it speaks, its
capabilities (does it offer tools, does it announce list changes), its instructions and how long
the answer may be cached. A 2025 server does not know the method; it is then described as
`None` (where a server offers it, and only then) and nothing else is sent: no `initialize`.
The capability index and the audit can say what a server is before any session exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import ClientSession, MCPError
from mcp import types as mcp_types
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import ValidationError

from attention_scoping.mcp.config import ConfigInput, ServerConfig, load_config
from attention_scoping.mcp.connection import ServerConnection, StderrTail
from attention_scoping.mcp.faults import McpFault, leaf_exceptions
from attention_scoping.mcp.loop import BackgroundLoop

_NOT_OFFERED = (MCPError, ValidationError)
"""An error answer, or an answer that is not a `DiscoverResult`: the method is not offered."""


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


async def discover_server(server: ServerConfig, timeout: float = 30.0) -> ServerDescription | None:
    """Ask `server` `server/discover` at the newest revision: its description, or None when it
    does not offer the method (a 2025 server).

    Raises:
        McpFault: the server cannot be started or reached (`server_unavailable`), redacted.
    """
    conn = ServerConnection(server, connect_timeout=timeout, call_timeout=timeout)
    errlog = StderrTail(server.name, redact=server.redact) if server.transport == "stdio" else None
    try:
        async with (
            asyncio.timeout(timeout),
            conn.transport(errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            raw = await session.send_discover(LATEST_MODERN_VERSION)
        return describe(mcp_types.DiscoverResult.model_validate(raw))
    except Exception as exc:
        if all(isinstance(e, _NOT_OFFERED) for e in leaf_exceptions(exc)):
            return None  # it does not speak 2026-07-28: described by its handshake, if opened
        raise conn.start_fault(exc, errlog) from None
    finally:
        if errlog is not None:
            errlog.close()


def discover_servers(
    config: ConfigInput, *, timeout: float = 30.0
) -> dict[str, ServerDescription | McpFault | None]:
    """`discover_server` for every configured server, concurrently: name -> its description,
    None (no `server/discover`), or the `McpFault` saying why it could not be asked."""
    servers: Mapping[str, ServerConfig] = load_config(config).servers
    loop = BackgroundLoop("attention-scoping-mcp-discover")

    async def one(server: ServerConfig) -> ServerDescription | McpFault | None:
        try:
            return await discover_server(server, timeout)
        except McpFault as fault:
            return fault

    async def every() -> list[Any]:
        return list(await asyncio.gather(*(one(s) for s in servers.values())))

    try:
        results = loop.run(every())
    finally:
        loop.stop()
    return dict(zip(servers, results, strict=True))
