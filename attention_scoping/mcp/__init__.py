"""MCP servers as scopes: one scope per configured server, its tools registered up front from a
cached listing, its session opened only when the model needs it.

Needs the `mcp` extra (`pip install "attention-scoping[mcp]"`); the configuration and cache
modules import nothing from MCP.

Example:
    ```python
    from attention_scoping.mcp import McpConnectMiddleware, McpServers

    servers = McpServers("mcp.json")
    scoping = AttentionScopingMiddleware(servers.scopes)
    agent = create_agent(model, middleware=[scoping, McpConnectMiddleware(servers)])
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_scoping.mcp.cache import ToolListCache, ToolListing
from attention_scoping.mcp.config import McpConfig, McpConfigError, ServerConfig, load_config
from attention_scoping.mcp.faults import McpFault

if TYPE_CHECKING:
    from attention_scoping.mcp.middleware import McpConnectMiddleware
    from attention_scoping.mcp.servers import McpServers
    from attention_scoping.mcp.tools import McpTool

__all__ = [
    "McpConfig",
    "McpConfigError",
    "McpConnectMiddleware",
    "McpFault",
    "McpServers",
    "McpTool",
    "ServerConfig",
    "ToolListCache",
    "ToolListing",
    "load_config",
]

_LAZY = {
    "McpServers": "attention_scoping.mcp.servers",
    "McpConnectMiddleware": "attention_scoping.mcp.middleware",
    "McpTool": "attention_scoping.mcp.tools",
}


def __getattr__(name: str) -> Any:
    """Import the MCP-dependent parts only when asked for, with a clear error without the extra."""
    if name not in _LAZY:
        msg = f"module 'attention_scoping.mcp' has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib

    try:
        module = importlib.import_module(_LAZY[name])
    except ImportError as exc:
        msg = f"{name} needs the 'mcp' extra: pip install 'attention-scoping[mcp]' ({exc})"
        raise ImportError(msg) from exc
    return getattr(module, name)
