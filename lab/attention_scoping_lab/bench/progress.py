"""Rich progress bars for long command-line work (embedding a catalog, running queries).

Library code reports progress through a plain `progress(description, done, total)` callback;
this module turns those calls into bars on stderr, so stdout stays clean for reports. Without a
terminal (a log file, CI) bars would be drawn once, cut to 80 columns: each task then gets one
plain line when it finishes instead.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ProgressBars:
    """A context manager whose instances are `progress(description, done, total)` callbacks.

    Example:
        ```python
        with ProgressBars() as bars:
            run_bench(specs, queries, methods, progress=bars)
        ```
    """

    def __init__(self, console: Console | None = None, *, enabled: bool = True) -> None:
        """`console`: where bars are drawn (default stderr); `enabled=False` draws nothing."""
        self.enabled = enabled
        self.console = console or Console(stderr=True)
        self.plain = enabled and not self.console.is_terminal
        """No terminal: one line per finished task instead of bars."""
        self._started: dict[str, float] = {}
        self._finished: set[str] = set()
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not enabled or self.plain,
        )
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> ProgressBars:
        """Start drawing."""
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop drawing (bars stay on screen)."""
        self._progress.stop()

    def __call__(self, description: str, done: int, total: int) -> None:
        """Advance (or create) the bar named `description`."""
        if self.plain:
            self._line(description, done, total)
            return
        task = self._tasks.get(description)
        if task is None:
            task = self._progress.add_task(description, total=total)
            self._tasks[description] = task
        self._progress.update(task, completed=done, total=total)

    def _line(self, description: str, done: int, total: int) -> None:
        """Without a terminal: one line when a task finishes (its count and duration)."""
        started = self._started.setdefault(description, time.perf_counter())
        if done >= total and description not in self._finished:
            self._finished.add(description)
            elapsed = time.perf_counter() - started
            self.console.print(
                f"{description}: {done:,}/{total:,} in {elapsed:.1f} s",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
