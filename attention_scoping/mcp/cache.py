"""The on-disk cache of each MCP server's tool list, so an agent is built without starting servers.

One small JSON file per server, named by a digest of the server's command line or URL
(`ServerConfig.cache_id`; the file holds the full digest, never the command line or URL, which
may embed a key): the tools as the server listed them (`name`, `description`,
`inputSchema`, `annotations`), its instructions, its name, and the listing's lifetime (`ttlMs`,
`cacheScope` of protocol 2026-07-28). Written after every successful listing (a `"private"`
listing readable by its user only), deleted when the server announces a tool-list change.
Every record is within `mcp.bounds` (a description, a schema, instructions), read or written.
Framework-free.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from attention_scoping.mcp.bounds import INSTRUCTIONS_MAX_CHARS, Bounded, bound_record, bound_text
from attention_scoping.mcp.config import ServerConfig

logger = logging.getLogger(__name__)

CACHE_VERSION = 2
"""Version 1 kept the plain command line or URL as the key; such files are ignored and replaced.
The lifetime fields (`ttl_ms`, `cache_scope`, `fetched_at`, `protocol`) are optional: a file
without them reads as a listing with no stated lifetime."""
DEFAULT_CACHE_DIR = Path("~/.cache/attention-scoping/mcp")
"""Where tool lists are kept unless `cache_dir=` or `$ATTENTION_SCOPING_MCP_CACHE` say otherwise."""


CacheScope = Literal["public", "private"]
"""A listing's `cacheScope` (protocol 2026-07-28): "private" may not be shared between users."""


@dataclass(frozen=True)
class ToolListing:
    """What a server offers: its tools (raw MCP tool objects as dicts, sorted by name so the
    tools array is the same whatever order the server sent), its instructions, and the
    listing's cache lifetime (`ttl_ms`, `cache_scope`; a 2025 server sends none: 0, private)."""

    tools: tuple[dict[str, Any], ...]
    instructions: str | None = None
    server_name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    ttl_ms: int = field(default=0, compare=False)
    """How long the listing may be served without asking the server (0: until it changes)."""
    cache_scope: CacheScope = field(default="private", compare=False)
    fetched_at: float = field(default_factory=time.time, compare=False)
    """When the server listed it (seconds since the epoch)."""
    protocol: str | None = field(default=None, compare=False)
    """The protocol revision it was listed over (None when unknown)."""
    oversized: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    """Tool name -> what was cut of it to fit `mcp.bounds` (empty: nothing)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in listing order (sorted)."""
        return tuple(str(t["name"]) for t in self.tools)

    def expired(self, now: float | None = None) -> bool:
        """Whether a positive `ttl_ms` has run out (a `ttl_ms` of 0 never expires on a timer)."""
        if self.ttl_ms <= 0:
            return False
        return (time.time() if now is None else now) >= self.fetched_at + self.ttl_ms / 1000

    def tool(self, name: str) -> dict[str, Any] | None:
        """The raw tool record named `name`, if listed."""
        return next((t for t in self.tools if t.get("name") == name), None)


def tool_record(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an MCP tool a provider is sent (and that we cache), with a default schema,
    within `mcp.bounds`."""
    return bounded_tool(tool).record


def bounded_tool(tool: Mapping[str, Any], redact: Callable[[str], str] | None = None) -> Bounded:
    """`tool_record` of `tool` and what was cut of it (`bounds.bound_record`), its description
    passed through `redact` before the cut."""
    record: dict[str, Any] = {
        "name": str(tool["name"]),
        "description": str(tool.get("description") or ""),
        "inputSchema": dict(tool.get("inputSchema") or {"type": "object", "properties": {}}),
    }
    if tool.get("annotations"):
        record["annotations"] = dict(tool["annotations"])
    return bound_record(record, redact)


def _bounded(
    tools: Iterable[Mapping[str, Any]], redact: Callable[[str], str] | None = None
) -> tuple[tuple[dict[str, Any], ...], dict[str, tuple[str, ...]]]:
    """`tools` as sorted records within the bounds, and tool name -> what was cut of it."""
    bounded = [bounded_tool(t, redact) for t in tools]
    cuts = {str(b.record["name"]): b.cuts for b in bounded if b.cuts}
    return sorted_records(b.record for b in bounded), cuts


def default_cache_dir() -> Path:
    """`$ATTENTION_SCOPING_MCP_CACHE`, else `~/.cache/attention-scoping/mcp`."""
    env = os.environ.get("ATTENTION_SCOPING_MCP_CACHE")
    return Path(env) if env else DEFAULT_CACHE_DIR.expanduser()


class ToolListCache:
    """Tool lists on disk, one JSON file per server (keyed by its command line or URL).

    Example:
        ```python
        cache = ToolListCache("~/.cache/attention-scoping/mcp")
        listing = cache.get(server)  # None until the server was listed once
        ```
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        """Use `directory` (created on first write); default `default_cache_dir()`."""
        self.directory = Path(directory).expanduser() if directory else default_cache_dir()

    def path(self, server: ServerConfig) -> Path:
        """The file holding `server`'s tool list."""
        return self.directory / f"{server.cache_id}.json"

    def get(self, server: ServerConfig) -> ToolListing | None:
        """The cached listing of `server`, or None (missing, stale format or unreadable)."""
        path = self.path(server)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("ignoring unreadable MCP tool cache %s: %s", path, exc)
            return None
        if (
            not isinstance(data, dict)
            or data.get("version") != CACHE_VERSION
            or data.get("key") != server.cache_key
            or not isinstance(data.get("tools"), list)
        ):
            return None
        try:
            tools, cuts = _bounded(data["tools"])
            ttl = max(0, int(data.get("ttl_ms") or 0))
            fetched = float(data.get("fetched_at") or 0.0)
            cuts = {**_oversized(data.get("oversized")), **cuts}
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        scope: CacheScope = "public" if data.get("cache_scope") == "public" else "private"
        instructions = data.get("instructions")
        if isinstance(instructions, str):
            instructions = bound_text(instructions, INSTRUCTIONS_MAX_CHARS)
        return ToolListing(
            tools, instructions, data.get("server_name"),
            ttl_ms=ttl, cache_scope=scope, fetched_at=fetched, protocol=data.get("protocol"),
            oversized=cuts,
        )  # fmt: skip

    def put(self, server: ServerConfig, listing: ToolListing) -> None:
        """Write `listing` atomically; a failure to write is logged, never raised."""
        payload = {
            "version": CACHE_VERSION,
            "key": server.cache_key,
            "server": server.name,
            "server_name": listing.server_name,
            "instructions": listing.instructions,
            "tools": list(listing.tools),
            "ttl_ms": listing.ttl_ms,
            "cache_scope": listing.cache_scope,
            "fetched_at": listing.fetched_at,
            "protocol": listing.protocol,
            "oversized": {name: list(cuts) for name, cuts in listing.oversized.items()},
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")  # mode 0600
            if listing.cache_scope == "public":
                os.chmod(tmp, 0o644)  # a "private" listing stays readable by its user only
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False, sort_keys=True)
            Path(tmp).replace(self.path(server))
        except OSError as exc:
            logger.warning("cannot write the MCP tool cache in %s: %s", self.directory, exc)

    def invalidate(self, server: ServerConfig) -> None:
        """Forget `server`'s tool list (it announced that its tools changed)."""
        self.path(server).unlink(missing_ok=True)


def sorted_records(records: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """`records` sorted by name (a server may list in any order; prompt caches need one)."""
    return tuple(sorted(records, key=lambda r: str(r["name"])))


def _oversized(value: Any) -> dict[str, tuple[str, ...]]:
    """A cache file's `oversized` entry, read defensively (an older file has none)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): tuple(str(c) for c in v[:8]) for k, v in value.items() if isinstance(v, list)}


def listing_from_tools(
    tools: Sequence[Mapping[str, Any]],
    instructions: str | None,
    server_name: str | None,
    *,
    ttl_ms: int = 0,
    cache_scope: str = "private",
    protocol: str | None = None,
    redact: Callable[[str], str] | None = None,
) -> ToolListing:
    """A `ToolListing` from raw tool dicts (as `tools/list` returns them), sorted by name,
    within `mcp.bounds`; `redact` masks the descriptions and instructions before the cuts."""
    scope: CacheScope = "public" if cache_scope == "public" else "private"
    records, cuts = _bounded(tools, redact)
    if instructions:
        instructions = bound_text(instructions, INSTRUCTIONS_MAX_CHARS, redact)
    return ToolListing(
        records, instructions, server_name,
        ttl_ms=max(0, ttl_ms), cache_scope=scope, protocol=protocol, oversized=cuts,
    )  # fmt: skip
