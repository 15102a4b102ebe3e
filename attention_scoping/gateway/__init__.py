"""The tool gateway: `search_tool_catalog` / `get_tool_schema` / `execute_tool` over a catalog of
any size, every answer ending with a `next_step` breadcrumb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.gateway.tools import (
        EXECUTE_TOOL,
        GATEWAY_PROMPT,
        GET_TOOL_SCHEMA,
        SEARCH_TOOL_CATALOG,
        Allow,
        CatalogEntry,
        Checked,
        GatewayConfigError,
        Ranker,
        Risk,
        ToolGateway,
        lexical_ranker,
        resolve_ranker,
    )

_EXPORTS = {
    "EXECUTE_TOOL": "tools",
    "GATEWAY_PROMPT": "tools",
    "GET_TOOL_SCHEMA": "tools",
    "SEARCH_TOOL_CATALOG": "tools",
    "Allow": "tools",
    "CatalogEntry": "tools",
    "Checked": "tools",
    "GatewayConfigError": "tools",
    "lexical_ranker": "tools",
    "Ranker": "tools",
    "resolve_ranker": "tools",
    "Risk": "tools",
    "ToolGateway": "tools",
}

__all__ = [
    "EXECUTE_TOOL",
    "GATEWAY_PROMPT",
    "GET_TOOL_SCHEMA",
    "SEARCH_TOOL_CATALOG",
    "Allow",
    "CatalogEntry",
    "Checked",
    "GatewayConfigError",
    "Ranker",
    "Risk",
    "ToolGateway",
    "lexical_ranker",
    "resolve_ranker",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
