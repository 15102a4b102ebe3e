"""Tokens per model call of the example agent: scoped versus sending every tool.

    python benchmarks/example_tokens.py [--encoding o200k_base|cl100k_base]

For each active context, prints the tool-schema tokens and the system-prompt tokens the model
receives, next to what an unscoped agent would send (all tools, one prompt with every module).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

from agents import CORE_PROMPT, build_scopes
from attention_scoping.common.tokens import ENCODINGS, get_counter
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.observe.tax import tool_tokens


@dataclass(frozen=True)
class Row:
    """What one model call sends in one active context: tools, and their tokens."""

    context: str
    tools: int
    schemas: int
    prompt: int

    @property
    def total(self) -> int:
        """Tool-schema and system-prompt tokens together."""
        return self.schemas + self.prompt


def rows(encoding: str = "o200k_base") -> list[Row]:
    """The unscoped agent first, then one row per active context (`None` = no scope yet),
    each scope opened whole (by the model's `load_context`), under the default layout."""
    counter = get_counter(encoding)
    scoping = AttentionScopingMiddleware(build_scopes())
    tools = {t.name: t for t in scoping.tools}
    everything = [t for name, t in tools.items() if name != "load_context"]
    modules = "\n\n".join(s.prompt for s in scoping.catalog.scopes.values())
    found = [
        Row(
            "unscoped (all tools)",
            len(everything),
            tool_tokens(everything, counter),
            counter.count(CORE_PROMPT + "\n\n" + modules),
        )
    ]
    for scope in (None, *scoping.catalog.names):
        names = scoping.catalog.visible(scope)  # the scope opened whole (load_context)
        found.append(
            Row(
                scope or "none (start)",
                len(names),
                tool_tokens([tools[n] for n in names], counter),
                counter.count(scoping.prompt(scope, CORE_PROMPT)),
            )
        )
    return found


def share(part: int, whole: int) -> str:
    """`part` with its share of `whole`, as the table prints it: `621 (45%)`."""
    return f"{part:,} ({part / whole:.0%})"


def main() -> None:
    """Print the per-context table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--encoding", default="o200k_base", choices=ENCODINGS)
    args = parser.parse_args()
    unscoped, *scoped = rows(args.encoding)
    table = Table(
        title=f"Example agent, tokens per model call ({get_counter(args.encoding).label})"
    )
    for column in ("active context", "tools", "tool schemas", "system prompt", "total"):
        table.add_column(column, justify="right")
    table.add_row(
        unscoped.context,
        str(unscoped.tools),
        f"{unscoped.schemas:,}",
        f"{unscoped.prompt:,}",
        f"{unscoped.total:,}",
    )
    for row in scoped:
        table.add_row(
            row.context,
            str(row.tools),
            share(row.schemas, unscoped.schemas),
            f"{row.prompt:,}",
            share(row.total, unscoped.total),
        )
    Console().print(table)


if __name__ == "__main__":
    main()
