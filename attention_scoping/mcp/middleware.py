"""Open an MCP server's session as soon as the model loads its scope, before its first call."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, AgentState, ContextT, ResponseT
from langgraph.runtime import Runtime
from typing_extensions import override

from attention_scoping.mcp.servers import McpServers
from attention_scoping.scoping.breadcrumbs import STATE_KEY


class McpConnectMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Start connecting the active scope's MCP server while the model thinks.

    Before each model call, if `active_context` names an MCP server's scope whose session is
    not open, the session is opened in the background (the call does not wait): the server
    process starts while the model writes its tool call, so the first tool call rarely waits
    for the handshake. Servers of scopes never loaded are never started. Without this
    middleware the session opens on the first tool call instead.

    Example:
        ```python
        servers = McpServers("mcp.json")
        agent = create_agent(
            model,
            middleware=[AttentionScopingMiddleware(servers.scopes), McpConnectMiddleware(servers)],
        )
        ```
    """

    def __init__(self, servers: McpServers, *, name: str | None = None) -> None:
        """Watch the scopes of `servers`; `name` lets two instances share an agent."""
        super().__init__()
        self.servers = servers
        """The servers whose sessions this middleware opens."""
        self.tools = []
        self._name = name

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    def _prefetch(self, state: Any) -> None:
        active = state.get(STATE_KEY) if isinstance(state, dict) else None
        server = self.servers.server_for_scope(active)
        if server is not None:
            self.servers.prefetch(server)

    @override
    def before_model(self, state: AgentState[ResponseT], runtime: Runtime[ContextT]) -> None:
        """Begin opening the active scope's server session, without waiting."""
        self._prefetch(state)

    @override
    async def abefore_model(self, state: AgentState[ResponseT], runtime: Runtime[ContextT]) -> None:
        """Async form of `before_model`."""
        self._prefetch(state)
