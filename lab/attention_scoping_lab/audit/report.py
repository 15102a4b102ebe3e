"""How `audit` figures are shown: rich tables on the terminal, and the `--json` document."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from attention_scoping_lab.audit.figures import AuditFigures
from attention_scoping_lab.display import figures_table, plain, write_figures_json

SCOPE_ROWS = 15
"""Scopes listed one by one; above this, the heaviest ones and a summary line."""


def write_json(figures: AuditFigures, path: str | Path) -> None:
    """Write the figures (at least `n_tools`, `tokenizer`, `eager_tokens_per_call`) as JSON."""
    write_figures_json(figures, path)


def _money(tokens: float, price_in: float | None) -> str:
    return f"${tokens * price_in / 1e6:,.2f}" if price_in is not None else ""


def render(figures: AuditFigures, console: Console, *, price_in: float | None = None) -> None:
    """Print the audit: headline, heaviest tools, scopes, per-method comparison, suggestions
    (`price_in`: USD per million input tokens, to show costs)."""
    f = figures
    console.print(
        f"[bold]{plain(f.target)}[/]: {f.n_tools:,} tool{'s' if f.n_tools != 1 else ''}; "
        "sending all of them costs "
        f"[bold]{f.eager_tokens_per_call:,}[/] tokens per model call ({f.tokenizer}); "
        f"a tool costs {f.mean_tool_tokens:,.0f} on average (median {f.median_tool_tokens:,.0f})."
    )
    console.print(_heaviest(f))
    if f.scopes:
        console.print(_scopes(f))
    console.print(_comparison(f, price_in))
    for m in f.methods:
        if m.note:
            console.print(f"[dim]{m.name}: {m.note}[/]")
    console.print(
        "[dim]cacheable prefix: the share of the request (tools array, then system prompt: "
        "the order providers render and cache) that is identical to the previous call's, which "
        "a provider's prompt cache can reuse; billed cost per task: attention-scoping simulate "
        "--sessions (docs/cost.md).[/]"
    )
    _billed(f, console, price_in)
    if f.suggested_scopes:
        console.print(_suggestions(f))
        console.print("[dim]The full lists are in the --json output under suggested_scopes.[/]")
    if f.unclassified:
        console.print(f"[yellow]note:[/] {plain(unclassified_line(f.unclassified))}")
    for note in f.notes:
        console.print(f"[yellow]note:[/] {note}")


UNCLASSIFIED_SHOWN = 12
"""Unclassified tools named on the terminal; the rest are counted (all in the --json output)."""


def unclassified_line(names: list[str]) -> str:
    """The line naming the tools nobody classified, and how to declare them."""
    shown = ", ".join(names[:UNCLASSIFIED_SHOWN])
    more = len(names) - UNCLASSIFIED_SHOWN
    rest = f" and {more:,} more (under unclassified in --json)" if more > 0 else ""
    count = f"{len(names):,} tool{'s' if len(names) != 1 else ''}"
    return (
        f"{count} nobody classified, so code never opens them (the model can, with "
        f"load_context): {shown}{rest}. Declare reads with metadata={{'risk': 'read'}} or "
        "Scope(..., reads=[...]), writes with metadata={'risk': 'write'}."
    )


def _billed(f: AuditFigures, console: Console, price_in: float | None) -> None:
    """The projected session's billed input under each price model (provider prompt caching)."""
    from attention_scoping_lab.audit.billing import CALLS_PER_SCOPE, CONVERSATION_PER_CALL

    if not f.billed_per_session:
        return
    models = list(next(iter(f.billed_per_session.values())))
    eager = next((v for k, v in f.billed_per_session.items() if k.startswith("eager")), None)
    table = Table(title=f"Billed input per session of {f.turns} calls (projection, prompt caching)")
    table.add_column("method")
    for model in models:
        table.add_column(model, justify="right")
    table.add_column("vs eager (anthropic)", justify="right")
    if price_in is not None:
        table.add_column(f"anthropic @ ${price_in:g}/M", justify="right")
    for name, bills in f.billed_per_session.items():
        cells = [name, *(f"{bills[m]:,.0f}" for m in models)]
        base = eager.get("anthropic") if eager else None
        cells.append(f"{bills['anthropic'] / base:.1%}" if base else "")
        if price_in is not None:
            cells.append(_money(bills["anthropic"], price_in))
        table.add_row(*cells)
    console.print(table)
    console.print(
        f"[dim]billed input: input-token equivalents (cache reads and writes at each price "
        f"model's multipliers). Projection: 2 calls per user turn, {CONVERSATION_PER_CALL} "
        f"tokens of conversation per call, a scope switch every {CALLS_PER_SCOPE} calls, a new "
        "gate set per call (or per turn). Measured on real sessions: attention-scoping "
        "simulate --sessions 20 (docs/cost.md).[/]"
    )


def _heaviest(f: AuditFigures) -> Table:
    heavy = Table(title=f"Heaviest {len(f.heaviest)} tools")
    heavy.add_column("tool")
    heavy.add_column("tokens", justify="right")
    heavy.add_column("share of all", justify="right")
    for row in f.heaviest:
        heavy.add_row(plain(row["name"]), f"{row['tokens']:,}", f"{row['share']:.1%}")
    return heavy


def _scopes(f: AuditFigures) -> Table:
    ordered = sorted(f.scopes, key=lambda s: -s.tool_tokens)
    shown = ordered if len(ordered) <= SCOPE_ROWS else ordered[:SCOPE_ROWS]
    title = f"Scopes from {f.scope_source}: {len(f.scopes):,}"
    if len(ordered) > len(shown):
        title += f" (the {len(shown)} heaviest)"
    scopes = figures_table(title, ("scope", "tools", "tool tokens / call", "prompt tokens / call"))
    for s in shown:
        tokens = (f"{s.tool_tokens:,}", f"{s.prompt_tokens:,}")
        scopes.add_row(plain(s.name), str(s.n_tools), *tokens)
    return scopes


def _comparison(f: AuditFigures, price_in: float | None) -> Table:
    columns = [
        "method",
        "tools sent",
        "tool tokens",
        "% of eager",
        "prompt tokens",
        f"session ({f.turns} calls)",
        "cacheable prefix",
    ]
    if price_in is not None:
        columns.append(f"session cost @ ${price_in:g}/M")
    compare = figures_table(f"Per model call, and over a session of {f.turns} calls", columns)
    for m in f.methods:
        share = m.tool_tokens_per_call / f.eager_tokens_per_call if f.eager_tokens_per_call else 0
        cells = [
            m.name,
            f"{m.tools_per_call:,.0f}",
            f"{m.tool_tokens_per_call:,.0f}",
            f"{share:.1%}",
            f"{m.prompt_tokens_per_call:,.0f}",
            f"{m.session_tokens:,.0f}",
            f"{m.cacheable_share:.0%}",
        ]
        if price_in is not None:
            cells.append(_money(m.session_tokens, price_in))
        compare.add_row(*cells)
    return compare


def _suggestions(f: AuditFigures) -> Table:
    table = Table(title=f"Suggested scopes ({len(f.suggested_scopes)}; {f.suggestion_method})")
    for column in ("scope", "tools", "tokens", "examples"):
        table.add_column(column, justify="right" if column in ("tools", "tokens") else "left")
    for group in f.suggested_scopes:
        tools = group["tools"]
        examples = plain(", ".join(tools[:4]) + (", …" if len(tools) > 4 else ""))
        table.add_row(plain(group["name"]), str(len(tools)), f"{group['tokens']:,}", examples)
    return table
