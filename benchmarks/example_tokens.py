"""Tokens per model call of the example agent: scoped versus sending every tool.

    python benchmarks/example_tokens.py [--encoding o200k_base|cl100k_base]

For each active context, prints the tool-schema tokens and the system-prompt tokens the model
receives, next to what an unscoped agent would send (all tools, one prompt with every module).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

from agents import CORE_PROMPT, build_scopes
from attention_scoping import AttentionScopingMiddleware
from attention_scoping.core.tokens import ENCODINGS, get_counter
from attention_scoping.observe.tax import tool_tokens


def main() -> None:
    """Print the per-context table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--encoding", default="o200k_base", choices=ENCODINGS)
    args = parser.parse_args()
    counter = get_counter(args.encoding)
    scoping = AttentionScopingMiddleware(build_scopes())
    tools = {t.name: t for t in scoping.tools}
    everything = [t for name, t in tools.items() if name != "load_context"]
    modules = "\n\n".join(s.prompt for s in scoping.catalog.scopes.values())
    all_tools = tool_tokens(everything, counter)
    all_prompt = counter.count(CORE_PROMPT + "\n\n" + modules)

    table = Table(title=f"Example agent, tokens per model call ({counter.label})")
    for column in ("active context", "tools", "tool schemas", "system prompt", "total"):
        table.add_column(column, justify="right")
    table.add_row(
        "unscoped (all tools)",
        str(len(everything)),
        f"{all_tools:,}",
        f"{all_prompt:,}",
        f"{all_tools + all_prompt:,}",
    )
    for scope in (None, *scoping.catalog.names):
        state = {"active_context": scope}
        names = scoping.visible_tool_names(state)
        sent = tool_tokens([tools[n] for n in names], counter)
        prompt = counter.count(scoping.prompt_layers(state, CORE_PROMPT).render())
        table.add_row(
            scope or "none (start)",
            str(len(names)),
            f"{sent:,} ({sent / all_tools:.0%})",
            f"{prompt:,}",
            f"{sent + prompt:,} ({(sent + prompt) / (all_tools + all_prompt):.0%})",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
