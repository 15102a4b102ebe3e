"""How the billed-cost benchmark is shown: one table per run (the chosen price model), the
billed share of eager under every price model, and a plot of cumulative cost against turns."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from attention_scoping_lab.display import figures_table, pyplot
from attention_scoping_lab.simulate.billing import RECOMMENDED, SessionBenchmark, StrategyBill
from attention_scoping_lab.simulate.native_strategies import is_mode_strategy


def render(result: SessionBenchmark, console: Console) -> None:
    """Print the strategy table, the price-model table and where the curves cross."""
    p = result.price
    console.print(
        f"[bold]Billed input per task[/] (seed {result.seed}): {result.n_sessions} sessions of "
        f"{result.turns} user turns, 120 tools, price model [bold]{p.name}[/] (cache reads "
        f"{p.cache_read:g}x, writes {p.cache_write:g}x, TTL {p.ttl_s:g} s, minimum "
        f"{p.min_cacheable:,} tokens), {result.turn_gap_s:g} s between turns; {result.tokenizer}"
    )
    eager = result.strategy("eager")
    base = eager.billed_per_task[p.name]
    columns = (
        "strategy",
        "billed input",
        "vs eager",
        "raw input",
        "cache hit",
        "later calls >= 90 %",
        "whole prefix reused",
        "exposure (at once)",
        "calls/turn",
    )
    table = figures_table(f"Per task (a {result.turns}-turn session), {p.name} prices", columns)
    for s in result.strategies:
        label = f"{s.name} [bold](recommended)[/]" if s.name == RECOMMENDED else s.name
        table.add_row(
            label,
            f"{s.billed_per_task[p.name]:,.0f}",
            f"{s.billed_per_task[p.name] / base:.1%}",
            f"{s.input_tokens_per_task:,.0f}",
            f"{s.hit_ratio[p.name]:.1%}",
            f"{s.later_hit_share[p.name]:.0%}",
            f"{s.prefix_reuse[p.name]:.0%}",
            f"{s.exposure:.0%} ({s.exposed_at_once:.0%})",
            f"{s.calls_per_turn:.2f}",
        )
    console.print(table)
    prices = Table(title="Billed input relative to eager, by price model")
    prices.add_column("strategy")
    for model in result.prices:
        prices.add_column(model.name, justify="right")
    for s in result.strategies:
        cells = []
        for model in result.prices:
            reference = eager.billed_per_task[model.name]
            cells.append(f"{s.billed_per_task[model.name] / reference:.1%}")
        prices.add_row(s.name, *cells)
    console.print(prices)
    _modes_table(result, console)
    for rec in (s for s in result.strategies if s.name == RECOMMENDED):
        ratios = [r / e for r, e in zip(rec.curve[p.name], eager.curve[p.name], strict=True)]
        worst = max(range(len(ratios)), key=ratios.__getitem__)
        console.print(
            f"{RECOMMENDED} against eager, cumulative over turns 1..{result.turns}: at most "
            f"{ratios[worst]:.1%} (after turn {worst + 1}); after the last turn {ratios[-1]:.1%}."
        )
    for s in result.strategies:
        console.print(f"[dim]{s.name}: {s.description}[/]")
    console.print(
        "[dim]billed input: input-token equivalents (uncached x 1 + cache reads and writes at "
        "the price model's multipliers), mean per session; raw input: prompt tokens without "
        "caching; later calls: the calls after the first of a user turn; exposure: needed tool "
        "uses the model could make (at once: without a refusal or a search first).[/]"
    )


def _per_task(s: StrategyBill, key: str, n: int) -> str:
    return f"{s.counters.get(key, 0) / n:.1f}"


def _disclosure_calls(s: StrategyBill, n: int) -> str:
    """Search and load_context calls per session (rewrite scoping: its switches)."""
    key = "disclosure calls" if "disclosure calls" in s.counters else "scope switches"
    return _per_task(s, key, n)


def _modes_table(result: SessionBenchmark, console: Console) -> None:
    """The provider-native disclosure modes beside the rewrite set-ups they replace: billed
    input, its worst point over the session, with output, and the calls the modes add."""
    p = result.price.name
    eager = result.strategy("eager")
    rows = [
        s
        for s in result.strategies
        if is_mode_strategy(s.name) or s.name in ("per_call_gate", "turn_gate", "scoping")
    ]
    if not any(is_mode_strategy(s.name) for s in rows):
        return
    columns = (
        "strategy",
        "billed input",
        f"highest, turns 1..{result.turns}",
        f"with output ({result.price.output:g}x)",
        "model calls",
        "search / load_context calls",
        "announced",
        "tools disclosed",
        "exposure (at once)",
    )
    title = f"Disclosure modes (issue 27), {p} prices; eager with caching = 100 %"
    table = figures_table(title, columns)
    n = result.n_sessions
    for s in rows:
        ratios = [a / b for a, b in zip(s.curve[p], eager.curve[p], strict=True)]
        table.add_row(
            s.name,
            f"{s.billed_per_task[p] / eager.billed_per_task[p]:.1%}",
            f"{max(ratios):.1%}",
            f"{s.billed_total_per_task[p] / eager.billed_total_per_task[p]:.1%}",
            f"{s.calls_per_task:.1f}",
            _disclosure_calls(s, n),
            _per_task(s, "announced disclosures", n),
            _per_task(s, "tools disclosed", n),
            f"{s.exposure:.0%} ({s.exposed_at_once:.0%})",
        )
    console.print(table)
    console.print(
        "[dim]per session; search / load_context calls: model calls made to disclose tools "
        "(input and output billed); announced: disclosures the middleware adds without a call; "
        "tools disclosed: definitions expanded into the conversation; with output: billed input "
        "plus generated tokens at the output price, against eager's.[/]"
    )


def plot(result: SessionBenchmark, path: str | Path) -> None:
    """Cumulative billed input against turns, one line per strategy (needs matplotlib)."""
    plt = pyplot()
    p = result.price.name
    turns = list(range(1, result.turns + 1))
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for s in result.strategies:
        width = 2.6 if s.name in (RECOMMENDED, "eager") else 1.2
        style = ":" if s.name == "conversation_only" else "-"
        ax.plot(turns, s.curve[p], style, linewidth=width, label=s.name)
    ax.set_xlabel("user turns in the session")
    ax.set_ylabel(f"cumulative billed input (input-token equivalents, {p})")
    ax.set_title(f"Billed input per task against session length ({result.n_sessions} sessions)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    plt.close(fig)
