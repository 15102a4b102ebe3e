"""`attention-scoping eval`: the command-line face of the eval (options, suite, output)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from attention_scoping_lab.args import (
    UsageError,
    add_usd_prices,
    check_output,
    name_list,
    non_negative,
    positive,
    positive_seconds,
)
from attention_scoping_lab.eval.strategies import DEFAULT_STRATEGIES, STRATEGIES

DEFAULT_MODEL = "openai/gpt-4o-mini"
SUITE_NAMES = (
    "example",
    "example-heldout",
    "defaults-tuning",
    "defaults-report",
    "simulated",
    "catalog",
)
"""`--suite` choices (`suites.SUITES`, named here so the parser loads no suite)."""
BRIDGES = ("anthropic",)
"""The API bridges `--bridge` can put in front of the endpoint."""
RESULTS_DIR = ".attention-scoping/eval"
"""Where results files go by default (relative to the working directory)."""


def add_eval_parser(sub: Any) -> None:
    """Register the `eval` subcommand on the `attention-scoping` parser."""
    ev = sub.add_parser(
        "eval",
        help="task success, wrong tools, tokens, time and cost of real models per strategy",
        description=(
            "Run a task suite against an OpenAI-compatible endpoint (OpenRouter with "
            "$OPENROUTER_API_KEY, or --base-url for llama.cpp, Ollama, vLLM) under several "
            "strategies, same model, temperature 0, and compare them."
        ),
    )
    ev.add_argument(
        "--suite",
        default="example",
        choices=SUITE_NAMES,
        help="example: the example agent's tasks the strategies were tuned on; "
        "example-heldout: its held-out tasks, never tuned on (report them apart); "
        "defaults-tuning / defaults-report: the held-out tasks the default is chosen on "
        "(tool, no-tool, topic-switch and two-tool tasks): choose on the first, report the second",
    )
    ev.add_argument(
        "--tasks-file", metavar="PATH", help="your own tasks (JSON) for the example agent's tools"
    )
    ev.add_argument("--catalog", metavar="C", help="catalog .jsonl (suite 'catalog')")
    ev.add_argument("--queries", metavar="Q", help="labelled queries .jsonl (suite 'catalog')")
    ev.add_argument(
        "--max-tools", type=positive, default=40, help="tools sampled for 'catalog' (default 40)"
    )
    ev.add_argument(
        "--distractors",
        type=int,
        default=0,
        metavar="N",
        help="add N tools no task needs to the example suite (trimmed simulated tools)",
    )
    ev.add_argument("--seed", type=int, default=0, help="seed of the sampled tools and tasks")
    ev.add_argument(
        "--strategies",
        type=name_list,
        default=list(DEFAULT_STRATEGIES),
        help=f"comma-separated, from: {', '.join(STRATEGIES)} (default: all)",
    )
    ev.add_argument("--model", default=os.environ.get("OPENROUTER_MODEL", DEFAULT_MODEL))
    ev.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OpenRouter)")
    ev.add_argument("--api-key-env", help="environment variable holding the key")
    ev.add_argument(
        "--bridge",
        metavar="API",
        help=f"put a local {' / '.join(BRIDGES)} API bridge in front of the endpoint and talk "
        "to it with that provider's LangChain client, for every strategy of the run (anthropic: "
        "ChatAnthropic, so scoped-anthropic and gated-anthropic run on a local model; the bridge "
        "emulates the documented deferral semantics, not the provider's models)",
    )
    ev.add_argument("--limit", type=positive, help="only the first N tasks")
    ev.add_argument("--task", dest="task_ids", type=name_list, help="only these task ids")
    ev.add_argument(
        "--parse-text-tool-calls",
        action="store_true",
        help="turn tool calls written as text (fenced JSON, <tool_call> tags, bare JSON) into "
        "real calls when they name an offered tool",
    )
    ev.add_argument(
        "--self-heal",
        action="store_true",
        help="add HesitationMiddleware and RepeatedCallMiddleware to every strategy: a reply "
        "that announces or asks instead of calling is nudged and retried (at most twice per "
        "turn); under scoping, the tools pre-selection matched are named before the first "
        "reply, and a first reply that calls none of them is nudged once; a call that repeats "
        "one already answered in the turn gets that result instead of running again",
    )
    ev.add_argument(
        "--digest-turns",
        action="store_true",
        help="add TurnDigestMiddleware to every strategy: earlier turns reach the model as a "
        "digest (questions and answers) in front of the new question, for small local models",
    )
    ev.add_argument("--concurrency", type=positive, default=1, help="tasks in flight (default 1)")
    ev.add_argument("--max-cost", type=non_negative, metavar="USD", help="stop before this spend")
    add_usd_prices(ev, output=True, default=0.0)
    ev.add_argument("--max-steps", type=positive, default=8, help="model calls per task (8)")
    ev.add_argument(
        "--timeout", type=positive_seconds, default=180.0, help="seconds per model call (180)"
    )
    ev.add_argument("--retries", type=int, default=4, help="retries on 429/5xx/timeouts (4)")
    ev.add_argument("--retry-base", type=float, default=1.0, help="first backoff in s (1)")
    ev.add_argument("--max-tokens", type=positive, default=512, help="output cap per call (512)")
    ev.add_argument(
        "--ranker", default="default", choices=["default", "hybrid", "dense", "bm25", "hashing"]
    )
    ev.add_argument("--k", type=positive, default=None, help="tools the gate promotes per call")
    ev.add_argument(
        "--results", metavar="PATH", help=f"results file (default under {RESULTS_DIR}/)"
    )
    ev.add_argument("--resume", action="store_true", help="skip tasks finished in --results")
    ev.add_argument("--json", dest="json_path", metavar="PATH", help="write the figures as JSON")
    ev.add_argument("--plot", metavar="PATH.png", help="chart success and tokens per strategy")
    ev.add_argument("--no-check", action="store_true", help="skip the endpoint check")
    ev.add_argument(
        "--erase-llama-slots",
        action="store_true",
        help="empty a llama.cpp server's KV cache before every task, so runs repeat exactly "
        "(server: --slot-save-path DIR --cache-ram 0; needs --concurrency 1)",
    )
    ev.add_argument("--quiet", action="store_true", help="no progress bar")


def _suite(args: argparse.Namespace) -> Any:
    from attention_scoping_lab.eval.suites import catalog_suite, simulated_suite
    from attention_scoping_lab.eval.suites.catalog import DEFAULT_QUERIES
    from attention_scoping_lab.eval.suites.example import SUITE_FILES, named_suite
    from attention_scoping_lab.eval.tasks import TaskFileError

    if args.tasks_file and args.suite not in SUITE_FILES:
        msg = "--tasks-file gives tasks over the example agent's tools: use it with --suite example"
        raise UsageError(msg)
    try:
        if args.suite == "catalog":
            if not args.catalog or not args.queries:
                msg = "--suite catalog needs --catalog and --queries (bench-format .jsonl files)"
                raise UsageError(msg)
            suite = catalog_suite(
                args.catalog,
                args.queries,
                max_tools=args.max_tools,
                limit=args.limit or DEFAULT_QUERIES,
                seed=args.seed,
            )
        elif args.suite == "simulated":
            suite = simulated_suite(n_tasks=args.limit or 30, seed=args.seed)
        else:
            suite = named_suite(
                args.suite, args.tasks_file, distractors=args.distractors, seed=args.seed
            )
        return suite.select(args.task_ids, args.limit)
    except (TaskFileError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _results_path(args: argparse.Namespace) -> Path:
    if args.results:
        return Path(args.results)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", args.model).strip("_")
    return Path(RESULTS_DIR) / f"{args.suite}-{slug}.jsonl"


def _options(args: argparse.Namespace, base_url: str) -> Any:
    from attention_scoping_lab.eval.pricing import TokenPrices
    from attention_scoping_lab.eval.retry import RetryPolicy
    from attention_scoping_lab.eval.runner import EvalOptions
    from attention_scoping_lab.eval.strategies import StrategyOptions

    return EvalOptions(
        model_name=args.model,
        base_url=base_url,
        prices=TokenPrices(args.price_in, args.price_out, args.price_cached),
        parse_text_calls=args.parse_text_tool_calls,
        self_heal=args.self_heal,
        digest_turns=args.digest_turns,
        concurrency=args.concurrency,
        max_cost=args.max_cost,
        max_steps=args.max_steps,
        retry=RetryPolicy(retries=max(args.retries, 0), base=max(args.retry_base, 0.0)),
        results_path=_results_path(args),
        resume=args.resume,
        strategy_options=StrategyOptions(ranker=args.ranker, k=args.k),
    )


def _slot_eraser(args: argparse.Namespace, base_url: str) -> Any:
    """The per-task cache eraser of `--erase-llama-slots`, or None."""
    if not args.erase_llama_slots:
        return None
    if args.concurrency != 1:
        msg = "--erase-llama-slots needs --concurrency 1 (erasing would cut tasks in flight)"
        raise UsageError(msg)
    from attention_scoping_lab.eval.llama_slots import slot_eraser

    return slot_eraser(base_url)


@contextmanager
def _model(args: argparse.Namespace, endpoint: Any) -> Iterator[Any]:
    """The run's chat model: `ChatOpenAI` on the endpoint, or with `--bridge anthropic`
    `ChatAnthropic` on a bridge serving in front of it while the run lasts."""
    from attention_scoping_lab.eval.endpoint import (
        NO_KEY,
        UNCAPPED_BRIDGE_TOKENS,
        EndpointError,
        bridged_chat_model,
        chat_model,
    )

    try:
        if args.bridge is None:
            yield chat_model(endpoint, args.model, max_tokens=args.max_tokens)
            return
        from attention_scoping_lab.eval.anthropic_bridge import AnthropicBridge

        key = None if endpoint.api_key == NO_KEY else endpoint.api_key
        limit = args.max_tokens or UNCAPPED_BRIDGE_TOKENS
        run = {"model": args.model, "max_tokens": limit, "timeout": endpoint.timeout}
        with AnthropicBridge(endpoint.base_url, api_key=key, **run) as bridge:
            yield bridged_chat_model(bridge, endpoint)  # it sends the bridge's token
    except EndpointError as exc:
        raise UsageError(str(exc)) from None


def run_eval_command(args: argparse.Namespace, console: Console) -> int:
    """`attention-scoping eval`."""
    from attention_scoping_lab.bench.progress import ProgressBars
    from attention_scoping_lab.display import write_outputs
    from attention_scoping_lab.eval import report
    from attention_scoping_lab.eval.endpoint import EndpointError, check_endpoint, resolve_endpoint
    from attention_scoping_lab.eval.judging import unrequested_by_strategy, write_tools
    from attention_scoping_lab.eval.retry import EndpointRejected
    from attention_scoping_lab.eval.runner import run_eval

    check_output(args.json_path)
    check_output(args.plot, ".png")
    check_output(args.results)
    unknown = [s for s in args.strategies if s not in STRATEGIES]
    if unknown or not args.strategies:
        problem = f"unknown strategy {unknown[0]!r}" if unknown else "no strategies given"
        msg = f"{problem}; choose from {', '.join(STRATEGIES)}"
        raise UsageError(msg)
    if args.bridge is not None and args.bridge not in BRIDGES:
        msg = f"unknown --bridge {args.bridge!r}; choose from {', '.join(BRIDGES)}"
        raise UsageError(msg)
    suite = _suite(args)
    try:
        endpoint = resolve_endpoint(args.base_url, args.api_key_env, args.timeout)
        if not args.no_check:
            check_endpoint(endpoint)
        before_task = _slot_eraser(args, endpoint.base_url)
    except EndpointError as exc:
        raise UsageError(str(exc)) from None
    where = endpoint.base_url + (f" (via the {args.bridge} bridge)" if args.bridge else "")
    options = replace(_options(args, where), before_task=before_task)
    try:
        with (
            _model(args, endpoint) as model,
            ProgressBars(enabled=not args.quiet and sys.stderr.isatty()) as bars,
        ):
            result = run_eval(suite, args.strategies, model, options, progress=bars)
    except EndpointRejected as exc:
        msg = f"{endpoint.host} refused the request: {' '.join(str(exc).split())[:300]}"
        raise UsageError(msg) from None
    unrequested = unrequested_by_strategy(result, suite.tasks, write_tools(suite.tools))
    report.render(result, console, unrequested)
    console.print(f"results: {options.results_path} (re-run with --resume to continue)")

    def write_json(done: Any, path: str) -> None:
        report.write_json(done, path, unrequested)

    write_outputs(console, result, args.json_path, write_json, args.plot, report.plot)
    return _all_errored(result)


def _all_errored(result: Any) -> int:
    """1, with one `error:` line on stderr saying why, when every task of the run errored (a
    wrong model name, an endpoint that fails every call); else 0."""
    errors = [r.error for r in result.results if r.error]
    if not result.results or len(errors) < len(result.results):
        return 0
    first = " ".join(str(errors[0]).split())[:300]
    message = f"every task errored ({len(errors)} of {len(result.results)}); the first: {first}"
    Console(stderr=True).print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return 1
