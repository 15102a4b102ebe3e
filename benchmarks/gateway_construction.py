"""Benchmark: building `ToolGateway`s in one process, and what the gateway's checks cost.

    python benchmarks/gateway_construction.py [--gateways N]

Builds N gateways over the example agent's nine tools with the default ranker (the MiniLM encoder is
loaded once per process and shared) and prints the construction time of each; then times the
argument check of a small call and the refusal of arguments nested 100,000 levels deep.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

from agents import math, translation, weather
from attention_scoping.gateway import ToolGateway


def _deep(depth: int) -> dict[str, object]:
    root: dict[str, object] = {}
    node = root
    for _ in range(depth):
        child: dict[str, object] = {}
        node["a"] = child
        node = child
    return root


def main() -> None:
    """Print per-gateway construction times and the cost of a check."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateways", type=int, default=3)
    args = parser.parse_args()
    tools = {t.name: t for module in (math, translation, weather) for t in module.TOOLS}
    gateways = []
    for index in range(args.gateways):
        start = time.perf_counter()
        gateways.append(ToolGateway(list(tools.values())))
        took = time.perf_counter() - start
        print(f"gateway {index + 1}: {took:.3f} s ({gateways[-1].ranker_label})")
    gateway = gateways[0]
    name = next(iter(tools))
    runs = 1_000
    start = time.perf_counter()
    for _ in range(runs):
        gateway.check(name, {})
    print(f"check of a small call: {(time.perf_counter() - start) / runs * 1e6:.0f} µs")
    deep = _deep(100_000)
    start = time.perf_counter()
    body = gateway.check(name, {"x": deep})
    assert isinstance(body, dict) and body["error"] == "invalid_arguments"
    print(f"refusal of 100,000-deep arguments: {(time.perf_counter() - start) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
