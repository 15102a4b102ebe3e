"""An MCP client configuration (`mcp.json`) as an audit target: what its servers list now.

Returns the fields of an `AuditTarget` (built by `target.load_target`, which imports this module
lazily; importing `target` from here would close an import cycle).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attention_scoping.common.extras import install_hint
from attention_scoping.common.tool import ToolSpec
from attention_scoping.mcp.config import McpConfigError, is_mcp_config, parse_config
from attention_scoping.mcp.faults import McpFault
from attention_scoping.mcp.naming import exposed_names, server_names
from attention_scoping.mcp.servertext import index_line
from attention_scoping.risk import declared_read, unclassified
from attention_scoping.scopes import LOAD_CONTEXT


class McpTargetError(ValueError):
    """The configuration cannot be audited; the message says why."""


def read_mcp_config(path: Path) -> dict[str, Any] | None:
    """The decoded file when `path` is a JSON MCP configuration, else None."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None  # not readable as JSON: the catalog loader reports it with file and line
    return data if is_mcp_config(data) else None


def oversized_notes(listings: dict[str, Any]) -> list[str]:
    """One note per tool a server listed past the bounds (`mcp.bounds`), saying what was cut:
    its figures are those of the cut tool, which is what an agent would send."""
    return [
        f"tool {tool!r} of MCP server {server!r} is oversized: {'; '.join(cuts)} "
        "(cut to the listing limits, marked where the model reads it)"
        for server, listing in listings.items()
        for tool, cuts in sorted(listing.oversized.items())
    ]


def mcp_target(path: Path, data: dict[str, Any], *, timeout: float = 30.0) -> dict[str, Any]:
    """Connect to every server of the configuration (with `timeout`), list its tools, close it.

    Tool names are the ones an agent built by `McpServers` would send (namespaced only where
    names collide); schemas are sent as the servers list them. Each scope's line and module is
    what `McpServers` puts in the system prompt (the configured description, else the server's
    name and tool names; never the server's instructions, which travel with `load_context`'s
    result). Servers that cannot be listed are named in the notes (redacted) and left out, and
    so is every tool cut to the listing bounds (`mcp.bounds`), with what was cut.

    Returns:
        The keyword arguments of the `AuditTarget`.

    Raises:
        McpTargetError: a malformed configuration, the `mcp` extra missing, or no server listed.
    """
    if timeout <= 0:
        msg = f"the MCP timeout must be a positive number of seconds, not {timeout:g}"
        raise McpTargetError(msg)
    try:
        config = parse_config(data, str(path), path.resolve().parent)
    except McpConfigError as exc:
        raise McpTargetError(str(exc)) from None
    try:
        from attention_scoping.mcp.inventory import list_server_tools
        from attention_scoping.mcp.tools import tool_metadata
    except ImportError as exc:
        msg = f"auditing an MCP configuration needs the 'mcp' extra: {install_hint('mcp')} ({exc})"
        raise McpTargetError(msg) from None
    found = list_server_tools(config, timeout=timeout)
    listings = {name: r for name, r in found.items() if not isinstance(r, McpFault)}
    notes = [
        f"server {name!r} left out: {r.reason}"
        for name, r in found.items()
        if isinstance(r, McpFault)
    ]
    if not any(listing.tools for listing in listings.values()):
        msg = f"{path}: no server listed any tool" + (f"; {'; '.join(notes)}" if notes else "")
        raise McpTargetError(msg)
    namespaces, scope_names = server_names(config.servers)
    names = exposed_names(
        {s: listing.names for s, listing in listings.items()}, namespaces, reserved=[LOAD_CONTEXT]
    )
    specs: list[ToolSpec] = []
    metadata: dict[str, Any] = {}
    scopes: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for server, listing in listings.items():
        scope = scope_names[server]
        for record in listing.tools:
            exposed = names[(server, record["name"])]
            spec = ToolSpec(exposed, exposed, record["description"], record["inputSchema"], server)
            specs.append(spec)
            metadata[exposed] = tool_metadata(server, record)
            scopes.setdefault(scope, []).append(exposed)
        writing = {
            names[(server, r["name"])]
            for r in listing.tools
            if not declared_read(tool_metadata(server, r))
        }
        descriptions[scope] = index_line(config.servers[server], scopes.get(scope, []), writing)
    counts = ", ".join(f"{s} {len(listings[s].tools)}" for s in listings)
    notes.insert(0, f"tools listed live from {len(listings)} MCP server(s): {counts}")
    notes += oversized_notes(listings)
    return {
        "label": str(path),
        "specs": specs,
        "scopes": scopes,
        "scope_source": "one scope per MCP server",
        "descriptions": descriptions,
        "prompts": {},
        "notes": notes,
        "unclassified": unclassified(metadata),
    }
