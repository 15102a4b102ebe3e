"""`attention-scoping bill FILE`: what a recorded session of your agent is billed under prompt
caching, per price model (the file: `attention_scoping_lab.recorded`; written by
`RequestLogMiddleware` or `example_agent.py --record-requests FILE`)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from attention_scoping.common.tokens import DEFAULT_ENCODING, ENCODINGS, get_counter
from attention_scoping_lab.args import (
    UsageError,
    add_price_options,
    check_output,
    prices_from_args,
)
from attention_scoping_lab.cost import PriceModel, SessionCost, memo_count
from attention_scoping_lab.display import write_figures_json, write_outputs
from attention_scoping_lab.recorded import SessionFileError, bill_session, read_session

__all__ = ["BillFigures", "add_bill_parser", "run_bill_command"]


class BillFigures:
    """The bill of one session file under each price model."""

    def __init__(
        self, path: str, tokenizer: str, prices: list[PriceModel], bills: dict[str, SessionCost]
    ) -> None:
        """Keep what the report and the JSON need."""
        self.path = path
        self.tokenizer = tokenizer
        self.prices = prices
        self.bills = bills

    def as_dict(self) -> dict[str, Any]:
        """The JSON figures: totals and per-call figures per price model."""
        models = {}
        for price in self.prices:
            bill = self.bills[price.name]
            models[price.name] = {
                "billed_input": round(bill.billed, 1),
                "input_tokens": bill.input_tokens,
                "cache_read_tokens": bill.cache_read_tokens,
                "cache_write_tokens": bill.cache_write_tokens,
                "cache_hit_ratio": round(bill.hit_ratio, 4),
                "calls": [
                    {
                        "input_tokens": c.input_tokens,
                        "cache_read_tokens": c.cache_read_tokens,
                        "cache_write_tokens": c.cache_write_tokens,
                        "billed": round(c.billed, 1),
                    }
                    for c in bill.calls
                ],
            }
        first = self.bills[self.prices[0].name]
        return {
            "file": self.path,
            "tokenizer": self.tokenizer,
            "n_calls": len(first.calls),
            "price_model": self.prices[0].name,
            "price_models": models,
        }


def add_bill_parser(sub: Any) -> None:
    """Register the `bill` subcommand."""
    bill = sub.add_parser(
        "bill",
        help="what a recorded session of your agent is billed under prompt caching",
        description=(
            "Bill a session file (one model request per JSON line: tools, system, messages, "
            "t; written by RequestLogMiddleware) on the simulated prompt cache, under each "
            "price model. See docs/cost.md."
        ),
    )
    bill.add_argument("file", metavar="FILE")
    bill.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    add_price_options(bill)
    bill.add_argument("--calls", action="store_true", help="also list every call")
    bill.add_argument("--json", dest="json_path", metavar="PATH", help="write the figures")


def _render(figures: BillFigures, console: Console, calls: bool) -> None:
    none = figures.bills.get("none")
    table = Table(title=f"Billed input of {figures.path} ({figures.tokenizer})")
    for header in ("price model", "calls", "input tokens", "cache read", "cache write"):
        table.add_column(header, justify="left" if header == "price model" else "right")
    table.add_column("billed input", justify="right")
    table.add_column("vs no caching", justify="right")
    for price in figures.prices:
        bill = figures.bills[price.name]
        share = f"{bill.billed / none.billed:.1%}" if none and none.billed else "-"
        table.add_row(
            price.name,
            str(len(bill.calls)),
            f"{bill.input_tokens:,}",
            f"{bill.cache_read_tokens:,}",
            f"{bill.cache_write_tokens:,}",
            f"{bill.billed:,.0f}",
            share,
        )
    console.print(table)
    if calls:
        main = figures.bills[figures.prices[0].name]
        per_call = Table(title=f"Per call ({figures.prices[0].name})")
        for header in ("call", "input", "read", "written", "billed"):
            per_call.add_column(header, justify="right")
        for i, c in enumerate(main.calls, start=1):
            per_call.add_row(
                str(i),
                f"{c.input_tokens:,}",
                f"{c.cache_read_tokens:,}",
                f"{c.cache_write_tokens:,}",
                f"{c.billed:,.0f}",
            )
        console.print(per_call)
    console.print(
        "billed input: input-token equivalents (uncached x 1 + cache reads and writes at the "
        "price model's multipliers); multiply by the model's input price for money."
    )


def run_bill_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping bill FILE`."""
    check_output(args.json_path)
    prices = prices_from_args(args)
    try:
        calls = read_session(args.file)
    except SessionFileError as exc:
        raise UsageError(str(exc)) from None
    counter = get_counter(args.encoding)
    bills = bill_session(calls, prices, memo_count(counter.count))
    figures = BillFigures(args.file, counter.label, prices, bills)
    _render(figures, console, args.calls)
    write_outputs(console, figures, args.json_path, write_figures_json)
    return 0
