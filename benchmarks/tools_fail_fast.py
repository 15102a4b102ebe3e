"""Benchmark: how fast the example tools refuse abusive input and report an unreachable service.

    python benchmarks/tools_fail_fast.py [--repeat 20]

Times `agents.math.evaluate` on expressions whose results would be astronomically large (the
limits are checked on the operands, so each refusal should take microseconds), and
`get_current_weather` with the real httpx client against a closed port on 127.0.0.1 (one
attempt, no retries: it should fail in milliseconds, far below the client's timeout). The tests
assert the behaviour (the errors and the single attempt); this script prints the times.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

from agents import weather
from agents.math import CalculationError, evaluate

ABUSIVE = ("10 ** 10 ** 10", "9 ** 9 ** 9", "factorial(10 ** 6)", "comb(10**9, 10**8)")


def _times(action: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def _refuse(expression: str) -> Callable[[], object]:
    def run() -> object:
        try:
            return evaluate(expression)
        except CalculationError as exc:
            return exc
        raise AssertionError(f"{expression!r} was not refused")

    return run


def _closed_port_call() -> Callable[[], object]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ[weather.GEOCODING_URL_ENV] = f"http://127.0.0.1:{port}/v1/search"
    tool = next(t for t in weather.TOOLS if t.name == "get_current_weather")
    call = {"type": "tool_call", "name": tool.name, "args": {"city": "Paris"}, "id": "1"}
    return lambda: tool.invoke(call)


def main() -> None:
    """Print median and worst time per case."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    cases = [(f"evaluate({e!r})", _refuse(e)) for e in ABUSIVE]
    cases.append(("get_current_weather, closed port", _closed_port_call()))
    table = Table(title=f"Failing fast ({args.repeat} runs each)")
    for column in ("case", "median", "worst"):
        table.add_column(column, justify="left" if column == "case" else "right")
    for name, action in cases:
        times = _times(action, args.repeat)
        table.add_row(
            name, f"{statistics.median(times) * 1e3:.3f} ms", f"{max(times) * 1e3:.3f} ms"
        )
    Console().print(table)
    print(f"the weather client's timeout: {weather.DEFAULT_TIMEOUT:g} s")


if __name__ == "__main__":
    main()
