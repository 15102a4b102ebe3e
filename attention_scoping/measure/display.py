"""Text from a user's catalog, made safe to print: no rich markup, no terminal control codes."""

from __future__ import annotations

from rich.markup import escape

from attention_scoping.core.text import printable


def plain(text: object) -> str:
    """`text` for a rich console: control characters escaped, `[markup]` shown literally."""
    return escape(printable(str(text)))
