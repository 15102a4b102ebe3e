"""Output helpers of the command: catalog text made safe to print (no rich markup, no terminal
control codes), and matplotlib for the `--plot` options."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from attention_scoping.core.extras import install_hint
from attention_scoping.core.text import printable


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
