"""List the tools of every configured MCP server now (connect, list, close), for audits: without
a session where a server offers `server/discover` (`discovery.index_listing`)."""

from __future__ import annotations

from attention_scoping.mcp.cache import ToolListing
from attention_scoping.mcp.config import ConfigInput, ServerConfig, load_config
from attention_scoping.mcp.discovery import ask_each, index_listing
from attention_scoping.mcp.faults import McpFault


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

    async def listing(server: ServerConfig) -> ToolListing:
        return (await index_listing(server, timeout)).listing

    return ask_each(servers, listing, "attention-scoping-mcp-inventory")
