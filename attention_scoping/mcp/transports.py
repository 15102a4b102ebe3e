"""The remote transports (streamable HTTP, SSE) of the `mcp` 2.x SDK, with configured headers.

One async context manager per connection yielding the SDK's stream pair, which `mcp.Client`
accepts as its server; the HTTP client it opens (with the server's `headers`) is closed with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@contextlib.asynccontextmanager
async def remote_transport(
    transport: str, url: str, headers: Mapping[str, str] | None
) -> AsyncIterator[Any]:
    """The stream pair of `url` over `transport` (`"sse"` or `"streamable_http"`)."""
    sent = dict(headers) if headers else None
    if transport == "sse":
        async with sse_client(url, headers=sent) as streams:
            yield streams
        return
    async with (
        create_mcp_http_client(headers=sent) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
