"""How the simulated benchmark is shown: the catalog's token profile next to the paper's, and
the tools tax per call, turn and session of each strategy next to the paper's figures."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from attention_scoping_lab.display import figures_table
from attention_scoping_lab.simulate.run import (
    PAPER_EAGER_PER_TURN,
    PAPER_GATED_PER_TURN,
    SimulationResult,
)


def render(result: SimulationResult, console: Console) -> None:
    """Print the profile table, the strategy table and the comparison with the paper."""
    kinds = ", ".join(f"{n} {k}" for k, n in result.tasks_by_kind.items())
    console.print(
        f"[bold]Simulated benchmark[/] (seed {result.seed}): {result.n_tools} tools on "
        f"{len(result.profile)} servers, {result.n_tasks} tasks ({kinds}; {result.turns:,} user "
        f"turns), {result.tokenizer}"
    )
    profile = figures_table(
        "Token profile: paper versus generated catalog",
        ("server", "tools", "paper tokens/tool", "ours tokens/tool", "ours total"),
    )
    for row in result.profile:
        profile.add_row(
            row["server"],
            str(row["tools"]),
            f"~{row['paper_tokens_per_tool']}",
            f"{row['tokens_per_tool']:,.0f}",
            f"{row['tokens']:,}",
        )
    paper_sum = sum(r["tools"] * r["paper_tokens_per_tool"] for r in result.profile)
    profile.add_row(
        "all (as one tools array)",
        str(result.n_tools),
        f"{paper_sum:,} (profile) / {PAPER_EAGER_PER_TURN:,} (paper)",
        "",
        f"{result.eager_tokens_per_call:,}",
    )
    console.print(profile)

    eager = result.strategies[0]
    columns = (
        "strategy",
        "per call",
        "vs eager",
        "per turn",
        "calls/turn",
        "per session",
        "single task",
        "multi-step task",
        "prompt/call",
    )
    table = figures_table("Tools tax: tool-definition tokens carried by model calls", columns)
    for s in result.strategies:
        table.add_row(
            s.name,
            f"{s.tool_tokens_per_call:,.0f}",
            f"{s.tool_tokens_per_call / eager.tool_tokens_per_call:.1%}",
            f"{s.tool_tokens_per_turn:,.0f}",
            f"{s.calls_per_turn:.2f}",
            f"{s.tool_tokens_per_session:,.0f}",
            f"{s.tool_tokens_per_task.get('single', 0):,.0f}",
            f"{s.tool_tokens_per_task.get('multi', 0):,.0f}",
            f"{s.prompt_tokens_per_call:,.0f}",
        )
    console.print(table)
    for s in result.strategies:
        plain = {k: v for k, v in s.counters.items() if ": " not in k}
        extra = "; ".join(f"{k}: {v:,}" for k, v in plain.items())
        console.print(f"[dim]{s.name}: {s.description}" + (f" ({extra})" if extra else "") + "[/]")
    _exposure(result, console)
    gated = next((s for s in result.strategies if s.name == "gated"), None)
    if gated is not None:
        console.print(
            f"Paper: {PAPER_EAGER_PER_TURN:,} -> {PAPER_GATED_PER_TURN:,} tool tokens per turn "
            f"({1 - PAPER_GATED_PER_TURN / PAPER_EAGER_PER_TURN:.1%} less). Ours, per model call: "
            f"{eager.tool_tokens_per_call:,.0f} -> {gated.tool_tokens_per_call:,.0f} "
            f"({1 - gated.tool_tokens_per_call / eager.tool_tokens_per_call:.1%} less)."
        )
    console.print(
        "[dim]per call: tool schemas (and the summary pool, or the gateway payloads kept in the "
        "history) sent with one model call; per turn: summed over the calls one user message "
        "causes; per session: summed over a 15-40-turn session. prompt/call: other fixed "
        "prompt text of the strategy (scope index and module, gateway instructions).[/]"
    )


OUTCOMES = ("exposed at once", "refused, then promoted", "missed")
"""What happened to a needed tool under a gate (counter suffixes of `strategies.Gated`)."""


def _exposure(result: SimulationResult, console: Console) -> None:
    """For the gated strategies: was the needed tool's schema there when the model needed it?"""
    gated = [s for s in result.strategies if any(": " in k for k in s.counters)]
    if not gated:
        return
    table = Table(title="Gated: was the needed tool's schema sent when the model needed it?")
    table.add_column("strategy")
    table.add_column("turn kind")
    for outcome in OUTCOMES:
        table.add_column(outcome, justify="right")
    for s in gated:
        kinds = sorted({k.split(": ")[0] for k in s.counters if ": " in k})
        for kind in kinds:
            counts = [s.counters.get(f"{kind}: {o}", 0) for o in OUTCOMES]
            total = sum(counts) or 1
            table.add_row(s.name, kind, *(f"{c:,} ({c / total:.0%})" for c in counts))
    console.print(table)
