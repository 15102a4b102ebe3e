"""Output helpers of the command: catalog text made safe to print (no rich markup, no terminal
control codes), matplotlib for the `--plot` options, and the `--json` figures file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from attention_scoping.common.extras import install_hint
from attention_scoping.common.text import printable

R = TypeVar("R")


class HasFigures(Protocol):
    """A result that gives its figures as a JSON-able dict."""

    def as_dict(self) -> dict[str, Any]:
        """The figures."""
        ...


def write_figures_json(result: HasFigures, path: str | Path) -> None:
    """Write `result.as_dict()` as indented JSON to `path` (its folder created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result.as_dict(), indent=2) + "\n", encoding="utf-8")


def plain(text: object) -> str:
    """`text` for a rich console: control characters escaped, `[markup]` shown literally."""
    return escape(printable(str(text)))


def pyplot() -> Any:
    """`matplotlib.pyplot` on the file-only Agg backend, or an ImportError naming the extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        msg = f"--plot needs matplotlib: {install_hint('bench')}"
        raise ImportError(msg) from exc
    return plt


def write_outputs(
    console: Console,
    result: R,
    json_path: str | None,
    write_json: Callable[[R, str], None],
    plot_path: str | None = None,
    plot: Callable[[R, str], None] | None = None,
) -> None:
    """The `--json` figures and the `--plot` chart of `result`, each written when asked for and
    where it went printed (the common tail of the measuring commands)."""
    if json_path:
        write_json(result, json_path)
        console.print(f"figures written to {json_path}")
    if plot_path and plot is not None:
        plot(result, plot_path)
        console.print(f"plot written to {plot_path}")


def figures_table(title: str, columns: Iterable[str]) -> Table:
    """A rich table of figures: the first column (each row's label) left-aligned, the figures
    right-aligned."""
    table = Table(title=title)
    for index, column in enumerate(columns):
        table.add_column(column, justify="right" if index else "left")
    return table
