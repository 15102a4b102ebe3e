"""How `bench` figures are shown: rich tables, the `--json` document and the `--plot` chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from attention_scoping_lab.bench.runner import BenchResult
from attention_scoping_lab.display import pyplot

REPORT_K = 5
"""The k shown in the summary columns (hit, tokens, tools) when it was measured."""


def to_json(result: BenchResult) -> dict[str, Any]:
    """The `--json` document: `{"n_tools", "n_queries", "eager_tokens_per_call", "methods"}`,
    each method with `recall`, `hit`, `tokens_per_call` (keyed by k as a string) and
    `latency_ms_p50` / `latency_ms_p95`."""
    return {
        "n_tools": result.n_tools,
        "n_queries": result.n_queries,
        "eager_tokens_per_call": result.eager_tokens_per_call,
        "methods": {
            m.spec.name: {
                "recall": {str(k): round(v, 4) for k, v in m.recall.items()},
                "hit": {str(k): round(v, 4) for k, v in m.hit.items()},
                "tokens_per_call": {str(k): round(v, 1) for k, v in m.tokens_per_call.items()},
                "latency_ms_p50": round(m.latency_ms_p50, 3),
                "latency_ms_p95": round(m.latency_ms_p95, 3),
            }
            for m in result.methods
        },
    }


def write_json(result: BenchResult, path: str | Path) -> None:
    """Write `to_json(result)` to `path` (parent folders created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(to_json(result), indent=2) + "\n", encoding="utf-8")


def _report_k(result: BenchResult) -> int:
    return REPORT_K if REPORT_K in result.ks else result.ks[len(result.ks) // 2]


def render(result: BenchResult, console: Console) -> None:
    """Print the recall table, then the cost table, then notes."""
    rk = _report_k(result)
    console.print(
        f"[bold]{result.n_tools:,} tools, {result.n_queries:,} queries[/]; sending every tool "
        f"costs [bold]{result.eager_tokens_per_call:,}[/] tokens per call ({result.tokenizer})"
    )
    quality = Table(title="Selection quality (recall@k; hit@k = share of queries with a gold tool)")
    quality.add_column("method")
    for k in result.ks:
        quality.add_column(f"R@{k}", justify="right")
    for k in result.ks:
        quality.add_column(f"H@{k}", justify="right")
    for m in result.methods:
        quality.add_row(
            m.spec.name,
            *(f"{m.recall[k]:.3f}" for k in result.ks),
            *(f"{m.hit[k]:.3f}" for k in result.ks),
        )
    console.print(quality)

    cost = Table(title="Cost per call (tool-schema tokens, summary pool included) and latency")
    cost.add_column("method")
    for k in result.ks:
        cost.add_column(f"tok@{k}", justify="right")
    cost.add_column(f"% eager @{rk}", justify="right")
    cost.add_column(f"tools@{rk}", justify="right")
    cost.add_column("p50 ms", justify="right")
    cost.add_column("p95 ms", justify="right")
    cost.add_column("index build", justify="right")
    for m in result.methods:
        build = (
            f"= {m.shares_decisions_with}"
            if m.shares_decisions_with
            else f"{m.build_s:.2f} s" + (f" (+{m.embedded:,} embedded)" if m.embedded else "")
        )
        share = (
            m.tokens_per_call[rk] / result.eager_tokens_per_call
            if result.eager_tokens_per_call
            else 0
        )
        cost.add_row(
            m.spec.name,
            *(f"{m.tokens_per_call[k]:,.0f}" for k in result.ks),
            f"{share:.2%}",
            f"{m.tools_per_call[rk]:.1f}",
            f"{m.latency_ms_p50:.1f}",
            f"{m.latency_ms_p95:.1f}",
            build,
        )
    console.print(cost)

    notes = Table(title="Methods", show_header=True)
    notes.add_column("method")
    notes.add_column("what it is")
    notes.add_column("ranker")
    for m in result.methods:
        text = m.spec.description + (f" [dim]({m.note})[/]" if m.note else "")
        notes.add_row(m.spec.name, text, m.ranker)
    console.print(notes)
    for name, reason in result.skipped.items():
        console.print(f"[yellow]skipped {name}[/]: {reason}")
    console.print(
        "[dim]Latency: one gate decision per query at k=5 (or the largest k when 5 is not "
        "reported): query embedding, scoring every tool, the cut; after 3 untimed warm-up "
        "decisions. Index build: fitting the ranker with the vectors cached (newly embedded "
        "tools counted apart). Methods marked '= X' reuse X's decisions.[/]"
    )


def plot(result: BenchResult, path: str | Path) -> None:
    """Draw recall@k and tokens per call versus k for every method into a PNG file.

    Raises:
        ImportError: matplotlib is not installed (the `bench` extra).
    """
    plt = pyplot()
    ks = list(result.ks)
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 5.4))
    markers = "osD^v<>px*h"
    palette = plt.get_cmap("tab10" if len(result.methods) <= 10 else "tab20")
    for i, m in enumerate(result.methods):
        default = m.spec.name == "default"
        style: dict[str, Any] = {
            "marker": markers[i % len(markers)],
            "linewidth": 2.6 if default else 1.3,
            "zorder": 5 if default else 2,
            "color": "black" if default else palette(i % palette.N),
            "label": m.spec.name,
        }
        if m.shares_decisions_with is None:  # methods sharing decisions share recall curves
            left.plot(ks, [m.recall[k] for k in ks], **style)
        right.plot(ks, [max(m.tokens_per_call[k], 1.0) for k in ks], **style)
    shared = [m.spec.name for m in result.methods if m.shares_decisions_with]
    if shared:
        left.text(
            0.02,
            0.02,
            "same recall as the method they share decisions with: " + ", ".join(shared),
            transform=left.transAxes,
            fontsize=7,
            color="dimgray",
        )
    right.axhline(result.eager_tokens_per_call, color="black", linestyle="--", linewidth=1)
    right.annotate(
        f"eager: all {result.n_tools:,} tools, {result.eager_tokens_per_call:,} tokens",
        (ks[0], result.eager_tokens_per_call),
        textcoords="offset points",
        xytext=(0, -14),
        fontsize=8,
    )
    lowest = min((m.recall[k] for m in result.methods for k in ks), default=0.0)
    left.set(xlabel="k (tools exposed)", ylabel="recall@k", title="Recall versus k", xticks=ks)
    left.set_ylim(max(0.0, lowest - 0.08), 1.01)
    left.grid(alpha=0.3)
    right.set(
        xlabel="k (tools exposed)",
        ylabel="tokens per call (log)",
        title="Tool tokens per call versus k (summary pool included)",
        xticks=ks,
        yscale="log",
    )
    right.grid(alpha=0.3, which="both")
    handles, labels = right.get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8, frameon=False)
    fig.suptitle(
        f"{result.n_tools:,} tools, {result.n_queries:,} queries ({result.tokenizer})", fontsize=11
    )
    fig.tight_layout(rect=(0, 0, 0.84, 1))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    plt.close(fig)
