"""Benchmark: the search's latency at scale, side by side with the bare encoder, in one run.

    python benchmarks/search_latency.py [--sizes 1000,5000,20000] [--queries 150] [--clock wall]
        [--ort KEY=VALUE ...] [--threads N]

For each catalog size, over the same requests (BFCL and Seal-Tools dev queries, alternating):

- `encoder`: the bare encoder on the texts the gate embeds for the request (the request, or
  its parts), called directly (no memo), and the dot products of those vectors with every
  tool's: the floor every search pays;
- `gate`: the gate decision per model call (`ToolAttentionMiddleware.decide` over the tool
  objects: their names, pinned marks, writes and preconditions, name detection, hybrid scores
  over every tool, threshold, top k), the request never seen before;
- `first call`: what the first model call of a user turn pays with scopes: the scoping
  middleware's selection (its default `attention_scoping.select.LexicalSelector` over every
  scoped tool, scopes of 10 tools) and then the gate decision, the request never seen before;
- `preselect`: the selection alone.

Every tenth tool writes (`metadata={"risk": "write"}`) and the others are declared reads
(`{"risk": "read"}`: the stand-ins change nothing), so the risk rule has work to do.
Besides p50 / p95 per column, `ratio` is each column's p50 over the encoder's p50 from the same
run: on a loaded machine the absolute figures move with the load, the ratio much less.
`--clock cpu` times process CPU instead of wall time (the encoder's threads included).
`--ort KEY=VALUE` replaces the encoder's onnxruntime session config entries
(`encoders.SESSION_CONFIG`; repeatable, e.g. `--ort session.intra_op.allow_spinning=0` for the
setting before spinning was measured) and `--threads` its intra-op threads, so settings can be
compared on the same machine state.

Catalogs: BFCL's and Seal-Tools' tools (5,108 real tools) cut to the size, or repeated under new
names to reach it (a repeated tool reuses its original's vector: only its name differs, and the
timing does not depend on the vector's values). Tool vectors come from the on-disk cache; run
`attention-scoping bench` (or this script) once to fill it. Prints p50 / p95 in ms and the
machine's load average, since other work on the machine moves every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool

from attention_scoping.common.text import tool_text
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating import ToolAttentionMiddleware, encoders
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import Encoder, shared_minilm
from attention_scoping.gating.ranking import DenseRanker, HybridRanker
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import LexicalSelector
from attention_scoping_lab.catalog import load_catalog, load_queries

DATA = Path(__file__).resolve().parent.parent / "data"
SCOPE_SIZE = 10


class ReplicaCache(VectorCache):
    """A vector cache that serves a repeated tool's text with its original's vector."""

    def __init__(self) -> None:
        super().__init__()
        self.origin: dict[str, str] = {}

    def vectors(self, encoder: Encoder, texts: Sequence[str]) -> Any:
        """Vectors of the original texts."""
        return super().vectors(encoder, [self.origin.get(t, t) for t in texts])


def catalog(size: int, cache: ReplicaCache) -> list[ToolSpec]:
    """`size` tools: the real ones first, then renamed repeats."""
    real = load_catalog(DATA / "catalog_bfcl.jsonl")
    seen = {s.id for s in real}
    real += [s for s in load_catalog(DATA / "catalog_sealtools.jsonl") if s.id not in seen]
    out = real[:size]
    copy = 1
    while len(out) < size:
        for spec in real[: size - len(out)]:
            name = f"{spec.name}_r{copy}"
            twin = ToolSpec(name, name, spec.description, spec.parameters, server=spec.server)
            for representation in ("full",):
                cache.origin[tool_text(twin, representation)] = tool_text(spec, representation)
            out.append(twin)
        copy += 1
    return out


def requests(count: int) -> list[str]:
    """BFCL and Seal-Tools dev requests, alternating."""
    bfcl = load_catalog(DATA / "catalog_bfcl.jsonl")
    seal = load_catalog(DATA / "catalog_sealtools.jsonl")
    a = [q.query for q in load_queries(DATA / "queries_bfcl_dev.jsonl", bfcl)]
    b = [q.query for q in load_queries(DATA / "queries_sealtools_dev.jsonl", seal)]
    mixed = [q for pair in zip(a, b, strict=False) for q in pair]
    return mixed[:count]


WRITE_EVERY = 10
"""Every WRITE_EVERY-th tool is marked as a write."""


def as_tools(specs: Sequence[ToolSpec]) -> list[StructuredTool]:
    """Light LangChain tools with the specs' JSON schemas (what the scoping middleware ranks);
    every `WRITE_EVERY`-th one is declared a write, the others reads (they change nothing)."""

    def run(**kwargs: Any) -> str:
        return "ok"

    return [
        StructuredTool(
            name=s.name,
            description=s.description,
            args_schema=dict(s.parameters),
            func=run,
            metadata={"risk": "write" if i % WRITE_EVERY == WRITE_EVERY - 1 else "read"},
        )
        for i, s in enumerate(specs)
    ]


def percentiles(samples: list[float]) -> str:
    """'p50 / p95' in ms."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(ordered):6.1f} / {p95:6.1f}"


COLUMNS = ("encoder", "gate", "preselect", "first call")


def measure(size: int, texts: list[str], encoder: Encoder, clock: str) -> dict[str, list[float]]:
    """Per-request timings (ms) of the encoder, the gate, pre-selection and the first call."""
    cache = ReplicaCache()
    specs = catalog(size, cache)
    hybrid = HybridRanker(DenseRanker(encoder, cache=cache))
    gate = ToolAttentionMiddleware(ranker=hybrid, summary_pool="off", emit_events=False)
    tools = as_tools(specs)
    gate.index.update(tools)
    keys = [t.name for t in tools]
    matrix = hybrid.dense._matrix
    assert matrix is not None
    scopes = [
        Scope(
            f"scope_{i // SCOPE_SIZE}",
            f"tools {i} to {i + SCOPE_SIZE}",
            tools=keys[i : i + SCOPE_SIZE],
        )
        for i in range(0, size, SCOPE_SIZE)
    ]
    scoped = ScopeCatalog(scopes, tools=tools)
    selector = LexicalSelector()
    selector.select("warm up the ranking", scoped)
    gate.decide({"messages": [HumanMessage("warm up the gate")]}, tools)
    out: dict[str, list[float]] = {column: [] for column in COLUMNS}
    timer = time.process_time if clock == "cpu" else time.perf_counter

    def bare(parts: list[str]) -> None:
        _ = encoder.encode(parts) @ matrix.T

    def decide(text: str) -> None:
        gate.decide({"messages": [HumanMessage(text)]}, tools)

    def select(text: str) -> None:
        selector.select(text, scoped)

    def first_call(text: str) -> None:
        select(text)
        decide(text)

    for number, text in enumerate(texts):
        parts = hybrid.texts(text)
        timed(timer, out["encoder"], bare, parts[1:] if len(parts) > 1 else parts)
        # a text never seen before, so nothing is memoized
        timed(timer, out["gate"], decide, f"{text} ({number} a)")
        timed(timer, out["preselect"], select, f"{text} ({number} b)")
        timed(timer, out["first call"], first_call, f"{text} ({number} c)")
    return out


def timed(
    timer: Callable[[], float], into: list[float], work: Callable[..., Any], *args: Any
) -> None:
    """Run `work(*args)` and append its time in ms."""
    started = timer()
    work(*args)
    into.append((timer() - started) * 1000.0)


def main() -> None:
    """Print p50 / p95 per catalog size, and each column's p50 over the encoder's."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--ort", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.ort:
        encoders.SESSION_CONFIG = dict(entry.split("=", 1) for entry in args.ort)
    encoder = shared_minilm(threads=args.threads)
    texts = requests(args.queries)
    print(
        f"{len(texts)} requests; {args.clock} clock; p50 / p95 ms (ratio: p50 / encoder p50); "
        f"load average before: {os.getloadavg()[0]:.1f}; onnxruntime: {encoders.SESSION_CONFIG}, "
        f"threads {args.threads or 'default'}"
    )
    print("tools".rjust(7) + "".join(c.rjust(18) for c in COLUMNS) + "   ratio gate / pre / first")
    for size in (int(s) for s in args.sizes.split(",")):
        row = measure(size, texts, encoder, args.clock)
        cells = "".join(percentiles(row[c]).rjust(18) for c in COLUMNS)
        floor = statistics.median(row["encoder"])
        ratios = " / ".join(f"{statistics.median(row[c]) / floor:.2f}" for c in COLUMNS[1:])
        print(f"{size:7d}{cells}   {ratios}   (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
