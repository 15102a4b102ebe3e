"""Which of the package's files and functions one call enters, and what a default agent loads.

Builds README's kind of agent with the default `AttentionScopingMiddleware` (two scopes, one
declared read, a scripted model), runs one turn, and records with `sys.setprofile` the runtime
files and functions entered by: the first model call of the turn, a later model call, and the
tool hook refusing a call of a hidden tool. It also counts the package's modules loaded by
building the middleware and running the turn, and their lines. `docs/architecture.md` is
written from its output.

Usage:
    python benchmarks/trace_call.py            # a table
    python benchmarks/trace_call.py --json     # the same as JSON
    python benchmarks/trace_call.py --list     # every function entered, per phase
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "attention_scoping"
EXCLUDED = {PACKAGE / "testing.py"}
"""The scripted model stands in for the provider: its frames are not the package's work."""

Phase = dict[str, set[str]]


class Tracer:
    """Records (file, function) of the package's frames while a phase is open."""

    def __init__(self) -> None:
        self.phases: dict[str, Phase] = {}
        self.current: str | None = None

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or self.current is None:
            return
        path = Path(frame.f_code.co_filename)
        if PACKAGE in path.parents and path not in EXCLUDED:
            phase = self.phases.setdefault(self.current, {})
            name = path.relative_to(ROOT).as_posix()
            phase.setdefault(name, set()).add(frame.f_code.co_qualname)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        sys.setprofile(self.profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            self.current = previous


def traced(
    tracer: Tracer, method: Callable[..., Any], name: Callable[[], str]
) -> Callable[..., Any]:
    """`method` run inside a phase; the model handler it calls is left out of the phase."""

    def run(request: Any, handler: Callable[[Any], Any]) -> Any:
        def untraced(inner: Any) -> Any:
            sys.setprofile(None)
            try:
                return handler(inner)
            finally:
                sys.setprofile(tracer.profile)

        with tracer.phase(name()):
            return method(request, untraced)

    return run


def build_and_run() -> tuple[Tracer, set[str]]:
    """Build the default middleware and run one turn: load_context, a hidden tool refused, an
    answer. Returns the tracer and the package's modules loaded."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from attention_scoping import AttentionScopingMiddleware, Scope
    from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

    @tool
    def get_invoice(order_id: str) -> str:
        """Look up the invoice of an order."""
        return f"invoice {order_id}: 40 EUR"

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    @tool
    def open_ticket(text: str) -> str:
        """Open a support ticket."""
        return "ticket 7"

    get_invoice.metadata = {"risk": "read"}
    scoping = AttentionScopingMiddleware(
        [
            Scope("billing", "invoices and refunds", [get_invoice, refund]),
            Scope("support", "support tickets", [open_ticket]),
        ]
    )
    tracer = Tracer()
    calls_seen = {"model": 0}

    def model_phase() -> str:
        calls_seen["model"] += 1
        return "first model call of a turn" if calls_seen["model"] == 1 else "a later model call"

    scoping.wrap_model_call = traced(tracer, scoping.wrap_model_call, model_phase)  # type: ignore[method-assign]
    scoping.wrap_tool_call = traced(  # type: ignore[method-assign]
        tracer, scoping.wrap_tool_call, lambda: "a refused call of a hidden tool"
    )
    model = ScriptedChatModel(
        script=[calls(tool_call("open_ticket", {"text": "refund"})), say("Which order?")]
    )
    agent = create_agent(model, tools=[get_invoice, refund, open_ticket], middleware=[scoping])
    question: Any = {"messages": [("user", "How do refunds work for order 1234?")]}
    agent.invoke(question)
    loaded = {
        n for n in sys.modules if n == "attention_scoping" or n.startswith("attention_scoping.")
    }
    return tracer, loaded


def lines_of(modules: set[str]) -> int:
    """Lines of the package's source files behind `modules`."""
    total = 0
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path and Path(path).is_file():
            total += len(Path(path).read_text(encoding="utf-8").splitlines())
    return total


def report(tracer: Tracer, loaded: set[str]) -> dict[str, Any]:
    """Files and functions per phase, and what was loaded."""
    phases = {
        name: {
            "files": len(files),
            "functions": sum(len(f) for f in files.values()),
            "entered": {path: sorted(funcs) for path, funcs in sorted(files.items())},
        }
        for name, files in tracer.phases.items()
    }
    runtime = {m for m in loaded if m != "attention_scoping.testing"}
    return {
        "phases": phases,
        "modules_loaded": sorted(runtime),
        "lines_loaded": lines_of(runtime),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--list", action="store_true", help="list the functions entered")
    args = parser.parse_args(argv)
    tracer, loaded = build_and_run()
    result = report(tracer, loaded)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print("| phase | runtime files | functions |")
    print("| --- | --- | --- |")
    for name, phase in result["phases"].items():
        print(f"| {name} | {phase['files']} | {phase['functions']} |")
    print(
        f"\nModules of ours loaded by building the default middleware and running a turn: "
        f"{len(result['modules_loaded'])}, {result['lines_loaded']:,} lines"
    )
    if args.list:
        for name, phase in result["phases"].items():
            print(f"\n{name}:")
            for path, funcs in phase["entered"].items():
                print(f"  {path}: {', '.join(funcs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
