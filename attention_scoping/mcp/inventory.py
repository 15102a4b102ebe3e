"""List the tools of every configured MCP server now (connect, list, close), for audits: without
a session where a server offers `server/discover` (`discovery.index_listing`)."""

from __future__ import annotations

import asyncio

from attention_scoping.mcp.cache import ToolListing
from attention_scoping.mcp.config import ConfigInput, ServerConfig, load_config
from attention_scoping.mcp.discovery import index_listing
from attention_scoping.mcp.faults import McpFault
from attention_scoping.mcp.loop import BackgroundLoop


def list_server_tools(
    config: ConfigInput, *, timeout: float = 30.0
) -> dict[str, ToolListing | McpFault]:
    """Start or reach each server, list its tools and close it, all servers concurrently.

    Nothing is read from or written to the tool-list cache: this is what the servers say now.

    Args:
        config: Path of an `mcp.json`, a decoded mapping, or an `McpConfig`.
        timeout: Seconds each server gets to start, finish the handshake and list its tools.

    Returns:
        Server name -> its listing, or the `McpFault` saying why it could not be listed.
    """
    servers = load_config(config).servers
    loop = BackgroundLoop("attention-scoping-mcp-inventory")

    async def one(server: ServerConfig) -> ToolListing | McpFault:
        try:
            return (await index_listing(server, timeout)).listing
        except McpFault as fault:
            return fault

    async def every() -> list[ToolListing | McpFault]:
        return list(await asyncio.gather(*(one(s) for s in servers.values())))

    try:
        results = loop.run(every())
    finally:
        loop.stop()
    return dict(zip(servers, results, strict=True))
