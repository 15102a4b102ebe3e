"""Start an MCP server while the model is shown its tools, so its first call does not wait;
hand the model the server's own instructions, fenced, with the `load_context` result that loads
its scope."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import SystemMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters import hooks
from attention_scoping.common.errors import render_payload
from attention_scoping.errors import ScopeConfigError
from attention_scoping.mcp.servers import McpServers
from attention_scoping.mcp.tools import McpTool
from attention_scoping.scopes import LOAD_CONTEXT, STATE_KEY

SERVER_TEXT_KEY = "server_text"
"""The key of `load_context`'s result that carries the loaded server's instructions."""


def _with_block(message: Any, call_id: Any, block: Mapping[str, str]) -> Any:
    """`message` with `block` added to its JSON body, when it answers `call_id` with JSON."""
    if not isinstance(message, ToolMessage) or message.tool_call_id != call_id:
        return message
    try:
        body = json.loads(message.text)
    except ValueError:
        return message
    if not isinstance(body, dict) or body.get("status") != "ok":
        return message
    if body.get("previous_context") == body.get("active_context"):
        return message  # already active: the block was given when it was loaded
    body[SERVER_TEXT_KEY] = dict(block)
    return message.model_copy(update={"content": render_payload(body)})


def with_server_text(
    servers: McpServers, call: Mapping[str, Any], result: hooks.ToolResult
) -> hooks.ToolResult:
    """`result` of a `load_context` call that loaded an MCP server's scope, with the server's
    instructions fenced and labelled in its body (`McpServers.server_text_block`); any other
    result unchanged."""
    if call.get("name") != LOAD_CONTEXT or not isinstance(result, Command):
        return result
    update = result.update
    if not isinstance(update, Mapping) or not isinstance(update.get("messages"), list):
        return result
    server = servers.server_for_scope(update.get(STATE_KEY))
    block = servers.server_text_block(server) if server else None
    if block is None:
        return result
    messages = [_with_block(m, call.get("id"), block) for m in update["messages"]]
    merged = {**update, "messages": messages}
    return Command(graph=result.graph, update=merged, resume=result.resume, goto=result.goto)


def with_index(servers: McpServers, message: SystemMessage | None) -> SystemMessage | None:
    """`message` with the MCP scopes' index lines as of this turn (`McpServers.index_text`);
    the same object when nothing changed."""
    if message is None:
        return None
    content = message.content
    if isinstance(content, str):
        text = servers.index_text(content)
        return message if text == content else message.model_copy(update={"content": text})
    blocks: list[Any] = [
        {**b, "text": servers.index_text(b["text"])}
        if isinstance(b, dict) and isinstance(b.get("text"), str)
        else b
        for b in content
    ]
    return message if blocks == content else message.model_copy(update={"content": blocks})


class McpConnectMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Open the session of the MCP server whose tools this model call shows, in the background;
    let tool-list changes reach the model at the start of the next user turn, never mid-turn.

    Placed after the scoping middleware (and after a gate, if any), it sees the tools the model
    is about to be sent. When they come from at most `max_servers` servers whose sessions are
    not open, those servers are started without waiting: the process starts while the model
    writes its tool call, so the first call rarely waits for the handshake. This covers a scope
    loaded by `load_context`, a scope pre-selected from the user's message, and a gate's pick.
    A call that shows many servers' tools (an unscoped, eager agent) starts none of them; their
    sessions open on their first tool call. Servers whose tools are never shown never start.

    At the start of each user turn (`before_agent`) it calls `McpServers.begin_turn`: servers
    that announced a list change (or whose listing's `ttlMs` ran out) are listed again, and the
    changes since the last turn are applied, to the tools (a withdrawn one is no longer sent)
    and to the server's line in the capability index of the system prompt it sees (the layered
    and stable layouts; rewritten with `McpServers.index_text`); within a turn both stay as the
    model saw them. The `load_context` tool's own scope descriptions (the compact layout's
    index) are the core's, as built with the agent: a changed line reaches them when the
    scoping middleware is built again from `McpServers.scopes`.

    The `load_context` call that loads a server's scope gets the server's instructions in its
    result, fenced and labelled as the server's text (`server_text`; not with
    `McpServers(server_text="drop")`): the one place they reach the model.

    Example:
        ```python
        servers = McpServers("mcp.json")
        agent = create_agent(
            model,
            tools=servers.tools,
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
            raise ScopeConfigError(msg)
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

    def _prepare(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        """Start the shown server's session; hide the tools their servers withdrew; give the
        capability index in the system prompt the MCP scopes' lines as of this turn."""
        for server in self.servers_to_start(request.tools):
            self.servers.prefetch(server)
        shown = [t for t in request.tools if self.servers.shown(t)]
        if len(shown) != len(request.tools):
            request = request.override(tools=shown)
        system = with_index(self.servers, request.system_message)
        return (
            request if system is request.system_message else request.override(system_message=system)
        )

    @override
    def before_agent(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """A new user turn: tool-list changes since the last one reach the model now."""
        self.servers.begin_turn()
        return None

    @override
    async def abefore_agent(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async form of `before_agent`."""
        await self.servers.abegin_turn()
        return None

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.ModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Begin opening the shown server's session, then call the model (without waiting)."""
        return handler(self._prepare(request))

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.AsyncModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        return await handler(self._prepare(request))

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.ToolHandler
    ) -> hooks.ToolResult:
        """Run the call; a `load_context` that loaded a server's scope gets its instructions."""
        return with_server_text(self.servers, request.tool_call, handler(request))

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.AsyncToolHandler
    ) -> hooks.ToolResult:
        """Async form of `wrap_tool_call`."""
        return with_server_text(self.servers, request.tool_call, await handler(request))
