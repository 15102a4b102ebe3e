"""Rich progress bars for long command-line work (embedding a catalog, running queries).

Library code reports progress through a plain `progress(description, done, total)` callback;
this module turns those calls into bars on stderr, so stdout stays clean for reports.
"""

from __future__ import annotations

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
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=False,
            disable=not enabled,
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
        task = self._tasks.get(description)
        if task is None:
            task = self._progress.add_task(description, total=total)
            self._tasks[description] = task
        self._progress.update(task, completed=done, total=total)
