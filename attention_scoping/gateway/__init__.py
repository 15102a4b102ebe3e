"""The tool gateway: `search_tool_catalog` / `get_tool_schema` / `execute_tool` over a catalog of
any size, every answer ending with a `next_step` breadcrumb.

Modules, one job each: `catalog` (the tools' `ToolSpec`s, who may see them, the gateway's own
names), `search` (ranking and its lexical fallback), `payloads` (what each tool answers),
`execute` (checking and running a call, within `common.limits`), `tools` (`ToolGateway`, the
choice of ranker and the three LangChain tools) and `routing` (`GatewayRoutingMiddleware`: a
catalog tool called by its own name runs through `execute_tool`). `tools` and `routing` import
LangChain; the others do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.common.limits import JsonLimits
    from attention_scoping.common.tool import RankTools, Risk
    from attention_scoping.gateway.catalog import (
        EXECUTE_TOOL,
        GATEWAY_POOL_HEADER,
        GATEWAY_PROMPT,
        GATEWAY_SIGNATURES_PROMPT,
        GATEWAY_TOOL_NAMES,
        GET_TOOL_SCHEMA,
        SEARCH_TOOL_CATALOG,
        Allow,
        Catalog,
        GatewayConfigError,
    )
    from attention_scoping.gateway.execute import Checked
    from attention_scoping.gateway.routing import GatewayRoutingMiddleware
    from attention_scoping.gateway.search import lexical_ranker
    from attention_scoping.gateway.tools import CatalogEntry, ToolGateway, resolve_ranker

_EXPORTS = {
    "EXECUTE_TOOL": "catalog",
    "GATEWAY_POOL_HEADER": "catalog",
    "GATEWAY_PROMPT": "catalog",
    "GATEWAY_SIGNATURES_PROMPT": "catalog",
    "GATEWAY_TOOL_NAMES": "catalog",
    "GET_TOOL_SCHEMA": "catalog",
    "SEARCH_TOOL_CATALOG": "catalog",
    "Allow": "catalog",
    "Catalog": "catalog",
    "CatalogEntry": "tools",
    "Checked": "execute",
    "GatewayConfigError": "catalog",
    "GatewayRoutingMiddleware": "routing",
    "JsonLimits": "tools",
    "lexical_ranker": "search",
    "RankTools": "search",
    "resolve_ranker": "tools",
    "Risk": "catalog",
    "ToolGateway": "tools",
}

__all__ = [
    "EXECUTE_TOOL",
    "GATEWAY_POOL_HEADER",
    "GATEWAY_PROMPT",
    "GATEWAY_SIGNATURES_PROMPT",
    "GATEWAY_TOOL_NAMES",
    "GET_TOOL_SCHEMA",
    "SEARCH_TOOL_CATALOG",
    "Allow",
    "Catalog",
    "CatalogEntry",
    "Checked",
    "GatewayConfigError",
    "GatewayRoutingMiddleware",
    "JsonLimits",
    "RankTools",
    "Risk",
    "ToolGateway",
    "lexical_ranker",
    "resolve_ranker",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
