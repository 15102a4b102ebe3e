"""Start an MCP server while the model is shown its tools, so its first call does not wait."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
)
from typing_extensions import override

from attention_scoping.mcp.servers import McpServers
from attention_scoping.mcp.tools import McpTool


class McpConnectMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Open the session of the MCP server whose tools this model call shows, in the background.

    Placed after the scoping middleware (and after a gate, if any), it sees the tools the model
    is about to be sent. When they come from at most `max_servers` servers whose sessions are
    not open, those servers are started without waiting: the process starts while the model
    writes its tool call, so the first call rarely waits for the handshake. This covers a scope
    loaded by `load_context`, a scope pre-selected from the user's message, and a gate's pick.
    A call that shows many servers' tools (an unscoped, eager agent) starts none of them; their
    sessions open on their first tool call. Servers whose tools are never shown never start.

    Example:
        ```python
        servers = McpServers("mcp.json")
        agent = create_agent(
            model,
            middleware=[AttentionScopingMiddleware(servers.scopes), McpConnectMiddleware(servers)],
        )
        ```
    """

    def __init__(
        self, servers: McpServers, *, max_servers: int = 1, name: str | None = None
    ) -> None:
        """Watch the tools of `servers`.

        Args:
            servers: The servers whose sessions this middleware opens.
            max_servers: Start servers ahead of their first call only when the model call shows
                tools of at most this many unconnected servers (1: a scope's server).
            name: Middleware name, to use two instances in one agent.
        """
        super().__init__()
        if max_servers < 1:
            msg = f"max_servers must be at least 1, not {max_servers}"
            raise ValueError(msg)
        self.servers = servers
        """The servers whose sessions this middleware opens."""
        self.max_servers = max_servers
        """How many unconnected servers one model call may start ahead of their first call."""
        self.tools = []
        self._name = name

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    def servers_to_start(self, tools: Sequence[Any]) -> list[str]:
        """The unconnected servers behind `tools`, or none when there are too many of them."""
        connected = set(self.servers.connected())
        wanted: list[str] = []
        for tool in tools:
            server = tool.server if isinstance(tool, McpTool) else None
            if server in self.servers.connections and server not in connected:
                wanted.append(server)
        wanted = list(dict.fromkeys(wanted))
        return wanted if len(wanted) <= self.max_servers else []

    def _prefetch(self, request: ModelRequest[ContextT]) -> None:
        for server in self.servers_to_start(request.tools):
            self.servers.prefetch(server)

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]],
    ) -> ModelResponse[ResponseT]:
        """Begin opening the shown server's session, then call the model (without waiting)."""
        self._prefetch(request)
        return handler(request)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        self._prefetch(request)
        return await handler(request)
