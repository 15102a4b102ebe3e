"""Calling user hooks that may be sync or async from async code, without blocking the loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["call_async"]


async def call_async(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Await `fn(*args, **kwargs)` if it is async, else run it in a worker thread."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    result = await asyncio.to_thread(fn, *args, **kwargs)
    return await result if inspect.isawaitable(result) else result
