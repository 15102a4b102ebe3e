"""The gateway's catalog: its tool records by name, who may see them, and its own tool names.

Pure (no LangChain): the catalog holds `ToolSpec`s, the one tool record of the package; the
LangChain tools that run them live beside it in `attention_scoping.gateway.tools`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from attention_scoping.common.tool import Risk, ToolSpec
from attention_scoping.errors import AttentionScopingError

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
    "GatewayConfigError",
    "Risk",
]

SEARCH_TOOL_CATALOG = "search_tool_catalog"
GET_TOOL_SCHEMA = "get_tool_schema"
EXECUTE_TOOL = "execute_tool"
GATEWAY_TOOL_NAMES = (SEARCH_TOOL_CATALOG, GET_TOOL_SCHEMA, EXECUTE_TOOL)
"""The three tools a model sees; no catalog tool may take one of these names."""

GATEWAY_PROMPT = f"""\
# Tool catalog
Most tools are behind a gateway. To use one: call `{SEARCH_TOOL_CATALOG}(query)` with what the \
user wants done, then `{GET_TOOL_SCHEMA}(tool_names=[...])` for the best match, then \
`{EXECUTE_TOOL}(tool_name, arguments)`. Follow the `next_step` of every gateway result. Fill \
arguments from the user's request and use the defaults the schema result names for anything \
the user did not say. Call write tools directly: do not ask the user to confirm or to list \
parameters, the gateway asks the user for approval itself. Ask the user only for a required \
value that cannot be inferred and has no default."""
"""Prompt text for the core layer of an agent using the gateway (add it to your core)."""

GATEWAY_POOL_HEADER = f"""\
# Tools behind the gateway
The tools that read (name: what it does). Fetch its schema with {GET_TOOL_SCHEMA} once, then \
call {EXECUTE_TOOL}. Tools that change something are not listed: find them with \
{SEARCH_TOOL_CATALOG}(query), which also finds a tool when none of these fits."""
"""Header of the gateway's summary pool of names (`ToolGateway.prompt(pool=True,
signatures=False)`)."""

GATEWAY_SIGNATURES_PROMPT = f"""\
# Tools behind the gateway
Run a tool with `{EXECUTE_TOOL}(tool_name, arguments)`. Each line below is a tool that reads: \
name(required arguments): what it does. Call {EXECUTE_TOOL} directly when you can fill every \
argument shown; call `{GET_TOOL_SCHEMA}(tool_names=[...])` first for optional arguments or one \
shown as {{…}}. Tools that change something are not listed: find them with \
`{SEARCH_TOOL_CATALOG}(query)`, which also finds a tool when no line fits. Follow the \
`next_step` of every gateway result. Fill arguments from the user's request; call write tools \
directly (the gateway asks the user for approval). Ask the user only for a required value that \
cannot be inferred."""
"""The gateway's instructions with the signature pool (`ToolGateway.prompt(pool=True)`, in
place of `GATEWAY_PROMPT`): the model calls `execute_tool` straight from a line; the gateway
checks the arguments against the full schema and answers an invalid call with the schema. The
pool names declared reads only (`ToolGateway.reads`, `attention_scoping.risk`): any other tool,
which may write, is found through `search_tool_catalog`, by the model."""

Allow = Callable[[ToolSpec, Mapping[str, Any]], bool]
"""(tool, graph state) -> whether this caller may see and run the tool."""


class GatewayConfigError(AttentionScopingError, ValueError):
    """A gateway configuration names something twice, or a write tool has no approval gate."""


class Catalog:
    """The tools behind a gateway, by name, with the per-caller `allow` filter.

    Example:
        ```python
        catalog = Catalog(specs, allow=lambda spec, state: not spec.is_write or state.get("admin"))
        catalog.visible({"admin": False})   # the read tools
        ```
    """

    def __init__(self, specs: Iterable[ToolSpec], *, allow: Allow | None = None) -> None:
        """Index `specs` by name.

        Raises:
            GatewayConfigError: two tools with one name, or a gateway tool name in the catalog.
        """
        self.specs: dict[str, ToolSpec] = {}
        """The tool records by name, in registration order."""
        for spec in specs:
            if spec.name in self.specs:
                msg = f"two catalog tools are named {spec.name!r}; names must be unique"
                raise GatewayConfigError(msg)
            if spec.name in GATEWAY_TOOL_NAMES:
                msg = f"{spec.name!r} is a gateway tool name; rename the catalog tool"
                raise GatewayConfigError(msg)
            self.specs[spec.name] = spec
        self.allow = allow

    def __contains__(self, name: object) -> bool:
        """Whether `name` is a catalog tool (whoever asks)."""
        return isinstance(name, str) and name in self.specs

    def allowed(self, state: Mapping[str, Any] | None) -> list[str]:
        """Names this caller may see and run, in catalog order."""
        if self.allow is None:
            return list(self.specs)
        view = state or {}
        return [n for n, s in self.specs.items() if self.allow(s, view)]

    def visible(self, state: Mapping[str, Any] | None) -> list[ToolSpec]:
        """Records this caller may see and run, in catalog order."""
        return [self.specs[n] for n in self.allowed(state)]

    def needing_approval(self) -> list[str]:
        """Names of the tools a human must approve before they run."""
        return [n for n, s in self.specs.items() if s.requires_approval]
