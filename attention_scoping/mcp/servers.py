"""`McpServers`: the servers of an MCP configuration as scopes, with lazily opened sessions.

Building it starts nothing for a server whose tool list is cached from an earlier run; a server
seen for the first time is asked once for its tools (`discover="connect"`, the default) and
stopped again, so the agent can register its tools up front. Where the server offers
`server/discover` (protocol 2026-07-28) that asking opens no session: `server/discover` and the
stateless `tools/list` (`discovery.index_listing`); a 2025 server is listed through its
`initialize` handshake. A session is opened by the first call to one of the server's tools, or
earlier when its scope is loaded (`McpConnectMiddleware`), and kept for later calls until
`close()`.

What each server wrote (its instructions, its tools' descriptions) never enters the system
prompt (`servertext`); every result is bounded and redacted (`tools.safe_content`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from attention_scoping.common.limits import RESULT_MAX_CHARS, check_result_limit
from attention_scoping.mcp.cache import ToolListCache, ToolListing
from attention_scoping.mcp.config import ConfigInput, McpConfig, McpConfigError, load_config
from attention_scoping.mcp.connection import ServerConnection
from attention_scoping.mcp.discovery import IndexListing, ServerDescription, index_listing
from attention_scoping.mcp.faults import McpFault
from attention_scoping.mcp.loop import BackgroundLoop
from attention_scoping.mcp.naming import Naming, exposed_names, server_names
from attention_scoping.mcp.servertext import (
    ServerText,
    check_server_text,
    index_line,
    server_text_block,
    tool_description,
)
from attention_scoping.mcp.tools import Content, McpTool, as_content, make_tool, refresh_tool
from attention_scoping.risk import declared_read
from attention_scoping.scopes import LOAD_CONTEXT, Scope

logger = logging.getLogger(__name__)

Discover = Literal["connect", "cache"]
"""For a server with no cached tool list: start it once at build time, or leave it out."""

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 60.0


def _shutdown(loop: BackgroundLoop, connections: list[ServerConnection]) -> None:
    """Close every session and stop the loop (also run at interpreter exit)."""
    if not loop.running:
        return

    async def close_all() -> None:
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    if loop.in_loop():  # collected on the loop's own thread: close there, then stop
        loop.submit(close_all()).add_done_callback(lambda _done: loop.stop())
        return

    try:
        loop.run(close_all(), timeout=30)
    except Exception as exc:  # shutdown must not raise
        logger.warning("closing MCP sessions failed: %s", exc)
    loop.stop()


def _relay_listing(hub: weakref.ref[McpServers], server: str, listing: ToolListing) -> None:
    """Pass a fresh listing to the hub if it still exists (a weak link, so a hub no longer used
    is collected and its finalizer closes the sessions)."""
    target = hub()
    if target is not None:
        target._on_listing(server, listing)


class McpServers:
    """The configured MCP servers: one core `Scope` per server, one `McpTool` per server tool.

    A scope declares reads (`reads=`) exactly the tools whose server says `readOnlyHint: true`
    (and not `destructiveHint: true`); a tool without annotations may write, so code (a
    selector, the index line) never opens or names it and approval asks for it.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.middleware import AttentionScopingMiddleware
        from attention_scoping.mcp import McpConnectMiddleware, McpServers

        with McpServers("mcp.json") as servers:  # no server process runs yet (cached lists)
            agent = create_agent(
                model,
                middleware=[
                    AttentionScopingMiddleware(servers.scopes),
                    McpConnectMiddleware(servers),  # connect when a scope is loaded
                ],
            )
            agent.invoke({"messages": [("user", "What time is it in Tokyo?")]})
        ```
    """

    def __init__(
        self,
        config: ConfigInput,
        *,
        cache_dir: str | None = None,
        discover: Discover = "connect",
        naming: Naming = "on_collision",
        reserved_names: Iterable[str] = (LOAD_CONTEXT,),
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        server_text: ServerText = "fenced",
        result_max_chars: int = RESULT_MAX_CHARS,
    ) -> None:
        """Read the configuration and build the scopes and tools.

        Args:
            config: Path of an `mcp.json`, a decoded mapping, or an `McpConfig`.
            cache_dir: Where tool lists are cached (default `~/.cache/attention-scoping/mcp`,
                or `$ATTENTION_SCOPING_MCP_CACHE`).
            discover: For a server without a cached tool list: `"connect"` starts it now to
                list its tools (then stops it), `"cache"` leaves it out (see `unavailable`).
            naming: `"on_collision"` (namespace only clashing names) or `"always"`.
            reserved_names: Names of the agent's other tools that MCP tools must not take.
            connect_timeout: Seconds to start a server, finish the handshake and list tools.
            call_timeout: Seconds per tool call (a server's own `timeout` wins).
            server_text: `"fenced"`: a server's instructions reach the model fenced and labelled
                in `load_context`'s result (with `McpConnectMiddleware`), its tool descriptions
                in the tools' schemas; `"drop"`: neither (tools get a neutral description).
                Never the system prompt (see `servertext`).
            result_max_chars: The most characters of one tool result (longer ones are cut,
                the cut marked and the full size reported).

        Raises:
            McpConfigError: the configuration is malformed.
            ValueError: a bad `discover`, `server_text` or `result_max_chars`.
        """
        if discover not in ("connect", "cache"):
            msg = f"discover must be 'connect' or 'cache', not {discover!r}"
            raise McpConfigError(msg)
        self.server_text: ServerText = check_server_text(server_text)
        """Whether the servers' own text reaches the model (`"fenced"`) or not (`"drop"`)."""
        check_result_limit(result_max_chars, "result_max_chars", allow_none=False)
        self.result_max_chars: int = result_max_chars
        """The most characters of one tool result."""
        self.config: McpConfig = load_config(config)
        self.cache = ToolListCache(cache_dir)
        self._loop = BackgroundLoop()
        self.connections: dict[str, ServerConnection] = {
            name: ServerConnection(
                server,
                connect_timeout=connect_timeout,
                call_timeout=call_timeout,
                on_listing=functools.partial(_relay_listing, weakref.ref(self), name),
                on_invalidate=functools.partial(self.cache.invalidate, server),
            )
            for name, server in self.config.servers.items()
        }
        self._tools_by_server: dict[str, dict[str, McpTool]] = {}
        self._pending: dict[str, ToolListing] = {}
        """Fresh listings not yet shown to the model (applied by `begin_turn`)."""
        self.withdrawn: dict[str, frozenset[str]] = {}
        """Server -> remote names of registered tools its latest applied listing no longer has."""
        self.unavailable: dict[str, str] = {}
        """Servers left out (no cached list and discovery failed or was off), with the reason."""
        self.descriptions: dict[str, ServerDescription] = {}
        """The `server/discover` answers of the servers listed at build that offer it (their
        scopes were built without a session)."""
        listings = self._initial_listings(discover)
        self.listings: dict[str, ToolListing] = listings
        """The tool listing each server's tools were built from."""
        self._build(listings, naming, reserved_names)
        self._finalizer = self._arm()

    def _arm(self) -> weakref.finalize[Any, Any]:
        """Register the shutdown of sessions at `close()`, garbage collection or exit."""
        return weakref.finalize(self, _shutdown, self._loop, list(self.connections.values()))

    def _ensure_armed(self) -> None:
        if not self._finalizer.alive:  # used again after close()
            self._finalizer = self._arm()

    # -- building ------------------------------------------------------------------------

    def _initial_listings(self, discover: Discover) -> dict[str, ToolListing]:
        listings: dict[str, ToolListing] = {}
        missing: list[str] = []
        for name, server in self.config.servers.items():
            cached = self.cache.get(server)
            if cached is not None and not (discover == "connect" and cached.expired()):
                listings[name] = cached  # an expired one is listed again when we may connect
            else:
                missing.append(name)
        if missing and discover == "cache":
            for name in missing:
                self.unavailable[name] = "no cached tool list (discover='cache')"
        elif missing:
            found = self._loop.run(self._discover(missing))
            for name, result in zip(missing, found, strict=True):
                if isinstance(result, IndexListing):
                    listings[name] = result.listing
                    self.cache.put(self.config.servers[name], result.listing)
                    if result.description is not None:
                        self.descriptions[name] = result.description
                else:
                    self.unavailable[name] = result.reason
                    logger.warning("MCP server %r left out: %s", name, result.reason)
        return {name: listings[name] for name in self.config.servers if name in listings}

    async def _discover(self, names: list[str]) -> list[IndexListing | McpFault]:
        """List the tools of the servers `names` concurrently, without a session where they
        offer `server/discover` (`index_listing`), and stop them again."""

        async def one(name: str) -> IndexListing | McpFault:
            timeout = self.connections[name].connect_timeout
            try:
                return await index_listing(self.config.servers[name], timeout)
            except McpFault as fault:
                return fault

        return list(await asyncio.gather(*(one(n) for n in names)))

    def _build(
        self, listings: Mapping[str, ToolListing], naming: Naming, reserved: Iterable[str]
    ) -> None:
        namespaces, scope_names = server_names(self.config.servers)
        names = exposed_names(
            {s: listing.names for s, listing in listings.items()},
            namespaces,
            naming=naming,
            reserved=reserved,
        )
        self.namespaces = namespaces
        """Server name -> tool-name namespace."""
        self.scope_names = {s: scope_names[s] for s in listings}
        """Server name -> scope name (for servers that have tools)."""
        self._server_of_scope = {v: k for k, v in self.scope_names.items()}
        self.scopes: list[Scope] = []
        """One scope per server with tools, in configuration order (a list change replaces a
        server's scope, new line and all, at the next turn: an agent built later gets it)."""
        self.index_lines: dict[str, str] = {}
        """Server -> its scope's line in the capability index as of this turn."""
        self._built_lines: dict[str, str] = {}
        for server, listing in listings.items():
            tools = {
                record["name"]: make_tool(
                    name=names[(server, record["name"])],
                    server=server,
                    record=record,
                    call=self.call,
                    acall=self.acall,
                    description=tool_description(record, server, self.server_text),
                )
                for record in listing.tools
            }
            self._tools_by_server[server] = tools
            line = self._line(server, list(tools.values()))
            self.index_lines[server] = self._built_lines[server] = line
            # No prompt module: the server's instructions are its own text, not ours to put
            # in the system prompt (they travel with load_context's result instead).
            self.scopes.append(self._scope(server, line))

    def _on_listing(self, server: str, listing: ToolListing) -> None:
        """A fresh listing: cache it now; what the model is shown changes at the next turn
        (`begin_turn`), never in the middle of one."""
        self.cache.put(self.config.servers[server], listing)
        self._pending[server] = listing

    def begin_turn(self) -> list[str]:
        """At the start of a user turn: re-list the open servers whose listing is stale (a
        change was announced, or its `ttlMs` ran out), then show the model every listing that
        arrived since the last turn. Returns the servers whose tools changed.

        Changed descriptions, schemas and annotations update the registered tools; a tool the
        server no longer lists is hidden (`withdrawn`) and its calls answer `tool_withdrawn`; a
        new tool is registered when the agent is next built (LangChain registers tools up front).
        `McpConnectMiddleware` calls it before each agent run; without it, call it between turns.
        """
        stale = [n for n, c in self.connections.items() if c.connected and c.stale]
        if stale and not self._loop.in_loop():
            self._ensure_armed()
            for server in stale:
                conn = self.connections[server]
                try:
                    self._loop.run(conn.ensure(), timeout=conn.connect_timeout + 30.0)
                except Exception as exc:  # the call that needs it reports the fault
                    logger.info("MCP server %r could not be listed again: %s", server, exc)
        return self.apply_pending()

    async def abegin_turn(self) -> list[str]:
        """Async form of `begin_turn`."""
        return await asyncio.to_thread(self.begin_turn)

    def apply_pending(self) -> list[str]:
        """Show the model the listings that arrived since the last turn (see `begin_turn`)."""
        pending, self._pending = self._pending, {}
        changed: list[str] = []
        for server, listing in pending.items():
            if self._apply(server, listing):
                changed.append(server)
        return changed

    def _apply(self, server: str, listing: ToolListing) -> bool:
        registered = self._tools_by_server.get(server)
        if registered is None:
            return False
        before = self.listings.get(server)
        self.listings[server] = listing
        for record in listing.tools:
            tool = registered.get(record["name"])
            if tool is not None:
                refresh_tool(tool, record, tool_description(record, server, self.server_text))
        names = set(listing.names)
        self.withdrawn[server] = frozenset(n for n in registered if n not in names)
        self._reindex(server, [t for n, t in registered.items() if n in names])
        added = [n for n in listing.names if n not in registered]
        if added:
            logger.info(
                "MCP server %r now offers %s; they are registered when the agent is next built",
                server,
                ", ".join(added),
            )
        return before is None or before.tools != listing.tools

    def _scope(self, server: str, line: str) -> Scope:
        """`server`'s scope: all its tools, described by `line`, its declared reads as `reads`."""
        tools = list(self._tools_by_server[server].values())
        reads = [t.name for t in tools if declared_read(t)]
        return Scope(self.scope_names[server], line, tools=tools, reads=reads)

    def _line(self, server: str, tools: list[McpTool]) -> str:
        """`server`'s index line over `tools`: the names of the declared reads, the rest
        (which may write) counted, never named."""
        writing = {t.name for t in tools if not declared_read(t)}
        return index_line(self.config.servers[server], [t.name for t in tools], writing)

    def _reindex(self, server: str, shown: list[McpTool]) -> None:
        """Give `server`'s scope the index line of the tools it shows now (if it changed; a
        tool's annotations may have changed too)."""
        line = self._line(server, shown)
        if line == self.index_lines.get(server):
            return
        self.index_lines[server] = line
        name = self.scope_names[server]
        self.scopes = [self._scope(server, line) if s.name == name else s for s in self.scopes]

    def index_text(self, text: str) -> str:
        """`text`, a system prompt laid out from the scopes as built (the layered or stable
        layout), with each MCP scope's index line (and its module, the same line) as of this
        turn: a list change reaches the capability index at the next
        turn, like the tools, never mid-turn."""
        for server, built in self._built_lines.items():
            now = self.index_lines.get(server, built)
            if now != built:
                scope = self.scope_names[server]
                text = text.replace(f"{scope}: {built}", f"{scope}: {now}")
                text = text.replace(f"{scope}\n{built}", f"{scope}\n{now}")
                text = text.replace(f"{scope} ({built})", f"{scope} ({now})")
        return text

    def shown(self, tool: Any) -> bool:
        """Whether `tool` may be shown to the model (False for an MCP tool its server withdrew
        as of this turn)."""
        if not isinstance(tool, McpTool):
            return True
        return tool.remote_name not in self.withdrawn.get(tool.server, frozenset())

    # -- queries -------------------------------------------------------------------------

    @property
    def tools(self) -> list[McpTool]:
        """Every MCP tool, sorted by exposed name (the same array on every run, whatever order
        the servers list in)."""
        every = [t for tools in self._tools_by_server.values() for t in tools.values()]
        return sorted(every, key=lambda t: t.name)

    def tools_of(self, server: str) -> list[McpTool]:
        """The tools of `server` sorted by name (empty for an unavailable server)."""
        return list(self._tools_by_server.get(server, {}).values())

    def server_for_scope(self, scope: str | None) -> str | None:
        """The server behind scope `scope`, or None when it is not an MCP scope."""
        return self._server_of_scope.get(scope) if scope else None

    def server_text_block(self, server: str) -> dict[str, str] | None:
        """The fenced, labelled block of `server`'s instructions for `load_context`'s result
        (None without instructions, or with `server_text="drop"`)."""
        if self.server_text == "drop" or server not in self.connections:
            return None
        listing = self.connections[server].listing or self.listings.get(server)
        return server_text_block(server, listing.instructions if listing else None)

    def connected(self) -> list[str]:
        """Servers with an open session now."""
        return [n for n, c in self.connections.items() if c.connected]

    # -- calling -------------------------------------------------------------------------

    def _timeout(self, server: str) -> float:
        conn = self.connections[server]
        return conn.connect_timeout + conn.call_timeout + 30.0

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]) -> Content:
        result = await self.connections[server].call(tool, arguments)
        redact = self.config.servers[server].redact_values
        return as_content(server, tool, result, redact, self.result_max_chars)

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Content:
        """Call `tool` of `server` from sync code (connecting first if needed).

        Raises:
            McpFault: a classified failure; ToolException for a tool that reported an error.
        """
        self._ensure_armed()
        return self._loop.run(self._call(server, tool, arguments), timeout=self._timeout(server))

    async def acall(self, server: str, tool: str, arguments: dict[str, Any]) -> Content:
        """Async form of `call`."""
        self._ensure_armed()
        return await self._loop.arun(self._call(server, tool, arguments))

    def connect(self, server: str) -> ToolListing:
        """Open `server`'s session now (if needed) and return its listing.

        Raises:
            McpFault: the server cannot be started or reached.
        """
        self._ensure_armed()
        conn = self.connections[server]
        return self._loop.run(conn.ensure(), timeout=conn.connect_timeout + 30.0)

    def prefetch(self, server: str) -> None:
        """Start opening `server`'s session in the background (returns at once)."""
        conn = self.connections.get(server)
        if conn is None or conn.connected:
            return
        self._ensure_armed()
        future = self._loop.submit(conn.ensure())
        future.add_done_callback(lambda f: f.cancelled() or f.exception())

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session (stopping stdio server processes) and the background loop; a
        later call reopens what it needs. From async code, `await aclose()`."""
        self._finalizer()

    async def aclose(self) -> None:
        """Async form of `close`, the way to close from async code (`async with` calls it): the
        sessions close on their own loop while the caller's loop goes on."""
        await asyncio.to_thread(self._finalizer)

    def __enter__(self) -> McpServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> McpServers:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"McpServers({list(self.config.servers)}, tools={len(self.tools)}, "
            f"connected={self.connected()})"
        )
