"""Does the scoping core prompt's "answer directly" make a small model skip its tools?

Runs the example suite's `scoped` strategy (the layered layout) with a core prompt that never
says "answer directly" (strategy `scoped-toolfirst`: the middleware's public `prompt()` with the
core's navigation rules replaced) against a local OpenAI-compatible server, for comparison with
`attention-scoping eval --strategies scoped` on the same tasks.

    python benchmarks/eval_scoped_core_prompt.py --base-url http://127.0.0.1:8089/v1 \\
        --model qwen2.5-coder-1.5b-instruct-q4_k_m --task math-multiply,tr-detect-french
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.prompt import NAVIGATION_RULES
from attention_scoping.scopes import ScopeCatalog
from attention_scoping_lab.eval import EvalOptions, register_strategy, run_eval
from attention_scoping_lab.eval.endpoint import chat_model, resolve_endpoint
from attention_scoping_lab.eval.report import render, write_json
from attention_scoping_lab.eval.strategies import StrategyOptions, create_eval_agent
from attention_scoping_lab.eval.suite import Suite
from attention_scoping_lab.eval.suites import example_suite

TOOL_FIRST_CORE = (
    "# Core\nYour tools are grouped into the contexts listed above. Use the tools you were "
    "given; when a request needs a tool of another context, call `load_context` with that "
    "context's name first. Never answer a number, reading or term without a tool result."
)


class ToolFirstCore(AttentionScopingMiddleware):
    """The layered layout with `TOOL_FIRST_CORE` in place of the core's navigation rules."""

    def prompt(self, scope: str | None, system_prompt: str | None) -> str:
        """The usual prompt for `scope`, its navigation rules replaced."""
        return super().prompt(scope, system_prompt).replace(NAVIGATION_RULES, TOOL_FIRST_CORE)


def build_toolfirst(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
    """The suite's scopes (layered) under `ToolFirstCore`."""
    catalog = ScopeCatalog(list(suite.scopes or ()), tools=list(suite.tools))
    scoping = ToolFirstCore(catalog, layout="layered")
    return create_eval_agent(model, suite.tools, suite.system_prompt, [scoping, *tail])


def main() -> None:
    """Run the variant and print the eval table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--task", help="comma-separated task ids (default: all)")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    register_strategy(
        "scoped-toolfirst",
        build_toolfirst,
        "scoped, core prompt without 'answer directly'",
        needs_scopes=True,
    )
    suite = example_suite().select(args.task.split(",") if args.task else None)
    model = chat_model(resolve_endpoint(args.base_url), args.model, max_tokens=256)
    options = EvalOptions(model_name=args.model, base_url=args.base_url, parse_text_calls=True)
    result = run_eval(suite, ["scoped-toolfirst"], model, options)
    render(result, Console(width=200))
    if args.json_path:
        write_json(result, args.json_path)


if __name__ == "__main__":
    main()
