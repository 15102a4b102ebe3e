"""One asyncio event loop on a daemon thread, where every MCP session of a process lives.

An MCP session is bound to the task that opened it, while LangGraph runs tools from threads
(sync `invoke`) or from the caller's loop (`ainvoke`). Keeping the sessions on their own loop
lets both kinds of caller share them: sync callers block on a future, async callers await it.
The thread starts on the first submission, so building an agent starts nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """An event loop on a daemon thread, started lazily and stopped by `stop()`."""

    def __init__(self, name: str = "attention-scoping-mcp") -> None:
        """Prepare (not start) the loop; `name` names the thread."""
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """Whether the thread is up."""
        return self._thread is not None and self._thread.is_alive()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name=self.name, daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def in_loop(self) -> bool:
        """Whether the caller runs on this loop's thread (blocking there would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the loop; returns a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result (from any other thread)."""
        if self.in_loop():
            coro.close()
            msg = "BackgroundLoop.run called from its own thread; await the coroutine instead"
            raise RuntimeError(msg)
        return self.submit(coro).result(timeout)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` run on the loop, from another event loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and join its thread (idempotent)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is threading.current_thread():
            return  # stopping from inside: run_forever returns after this callback
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()
