"""MCP servers as scopes: one scope per configured server, its tools registered up front from a
cached listing, its session opened only when the model needs it.

The sessions and tools need the `mcp` extra (`pip install -e ".[mcp]"` from a clone); the
configuration, cache, naming and fault modules are framework-free and import nothing from MCP.

Example:
    ```python
    from attention_scoping.mcp import McpConnectMiddleware, McpServers

    servers = McpServers("mcp.json")
    scoping = AttentionScopingMiddleware(servers.scopes)
    agent = create_agent(model, middleware=[scoping, McpConnectMiddleware(servers)])
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.mcp.cache import ToolListCache, ToolListing
    from attention_scoping.mcp.config import McpConfig, McpConfigError, ServerConfig, load_config
    from attention_scoping.mcp.discovery import ServerDescription, discover_servers
    from attention_scoping.mcp.faults import McpFault
    from attention_scoping.mcp.inventory import list_server_tools
    from attention_scoping.mcp.middleware import McpConnectMiddleware
    from attention_scoping.mcp.servers import McpServers
    from attention_scoping.mcp.tools import McpTool

_EXPORTS = {
    "McpConfig": "config",
    "McpConfigError": "config",
    "McpConnectMiddleware": "middleware",
    "McpFault": "faults",
    "McpServers": "servers",
    "McpTool": "tools",
    "ServerConfig": "config",
    "ServerDescription": "discovery",
    "ToolListCache": "cache",
    "ToolListing": "cache",
    "discover_servers": "discovery",
    "list_server_tools": "inventory",
    "load_config": "config",
}

__all__ = [
    "McpConfig",
    "McpConfigError",
    "McpConnectMiddleware",
    "McpFault",
    "McpServers",
    "McpTool",
    "ServerConfig",
    "ServerDescription",
    "ToolListCache",
    "ToolListing",
    "discover_servers",
    "list_server_tools",
    "load_config",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
