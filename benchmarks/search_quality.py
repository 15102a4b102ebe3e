"""Benchmark: the default gate's ranking against its simple peers on several kinds of catalog.

    python benchmarks/search_quality.py [--half tune|report] [--subcatalogs 6] [--methods ...]
        [--kinds ...] [--misses METHOD]

Kinds of catalog, all from the shipped dev data (`data/`):

- `bfcl-full`, `seal-full`: every tool of the catalog, every dev query (multi-gold included);
- `bfcl-near`, `seal-near`: 150-250 tools made of the gold tools of 40 single-gold queries,
  each with its nearest tools by MiniLM vector (hard distractors), then random tools;
- `bfcl-small`, `seal-small`: 150-250 tools drawn at random (the gold tools of 40 single-gold
  queries plus distractors), ranked for those single-gold queries: a small catalog of short,
  single-intent requests;
- `bfcl-short`, `seal-short`: as `-near`, with each single-gold request cut to its first
  seven words (short requests that often lack their tool's words);
- `seal-domains`: 150-250 tools made of whole Seal-Tools servers (near-duplicate tools of one
  domain side by side), with the single-gold queries whose tool is among them.

Queries are split in two fixed halves by a hash of their id: `--half tune` is where choices are
made, `--half report` is the held-out figure. Sub-catalogs of a half are drawn only from that
half's queries. Each row: recall@k of what the gate shows (name detection, threshold and all)
and the mean number of ranked tools shown. A sub-catalog repeats requests another one of its
kind drew, so a kind's 240 requests are fewer distinct ones (printed as `distinct`).

`--misses dense` (or `bm25`) also prints, per kind, each request whose gold tool the default
misses and that method finds, with the default's score breakdown (cosine, BM25, their min-max
values, the fused score) for the gold tool and the tools shown instead. The `fuse-*` and
`bm25-fillers` methods are fusions measured and not kept (docs/gating.md, "Ablations"); the
`late-*` methods pool a multi-part request's parts from one encoder pass (late chunking),
measured for latency and not kept (docs/gating.md, "Latency").
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage

from attention_scoping.common.text import tool_text
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating import Promotion, ToolAttentionMiddleware, ranking
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import MiniLMOnnxEncoder, mean_pool, normalize, shared_minilm
from attention_scoping.gating.ranking import BM25Ranker, DenseRanker, HybridRanker, minmax
from attention_scoping_lab.catalog import Query, load_catalog, load_queries

DATA = Path(__file__).resolve().parent.parent / "data"
SMALL_QUERIES = 40
SIZES = (150, 250)
SHORT_WORDS = 7
SMALL_TALK = tuple(
    (Path(__file__).resolve().parent / "data" / "small_talk.txt").read_text().splitlines()
)
"""Requests no tool serves (generic conversation, not drawn from either dev set)."""
SMALL_TALK_SHOWN: list[float] = []


@dataclass
class Case:
    """One catalog and the queries ranked over it."""

    kind: str
    specs: list[ToolSpec]
    queries: list[Query]


def half_of(query_id: str) -> str:
    """'tune' or 'report', fixed by a hash of the query id."""
    return "tune" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "report"


def _small(kind: str, specs: list[ToolSpec], queries: list[Query], rng: random.Random) -> Case:
    chosen = rng.sample(queries, min(SMALL_QUERIES, len(queries)))
    gold = {g for q in chosen for g in q.gold_ids}
    size = rng.randint(*SIZES)
    others = [s for s in specs if s.id not in gold]
    picked = gold | {s.id for s in rng.sample(others, max(size - len(gold), 0))}
    return Case(kind, [s for s in specs if s.id in picked], chosen)


def _near(
    kind: str, specs: list[ToolSpec], queries: list[Query], rng: random.Random, vectors: Any
) -> Case:
    """The gold tools of 40 queries, each with its nearest tools (by MiniLM vector), then
    random tools up to the size: hard distractors, as in a catalog of one domain."""
    chosen = rng.sample(queries, min(SMALL_QUERIES, len(queries)))
    row = {s.id: i for i, s in enumerate(specs)}
    size = rng.randint(*SIZES)
    picked: dict[str, None] = dict.fromkeys(g for q in chosen for g in q.gold_ids)
    per_gold = max((size // 2) // max(len(picked), 1), 1)
    for gold in list(picked):
        near = (vectors @ vectors[row[gold]]).argsort()[::-1][1 : per_gold + 1]
        picked.update(dict.fromkeys(specs[i].id for i in near))
    others = [s.id for s in specs if s.id not in picked]
    picked.update(dict.fromkeys(rng.sample(others, max(size - len(picked), 0))))
    return Case(kind, [s for s in specs if s.id in picked], chosen)


def _domains(specs: list[ToolSpec], queries: list[Query], rng: random.Random) -> Case:
    """Whole Seal-Tools servers (those of 40 queries' gold tools first) up to the size."""
    servers: dict[str, list[ToolSpec]] = {}
    owner: dict[str, str] = {}
    for spec in specs:
        servers.setdefault(str(spec.server), []).append(spec)
        owner[spec.id] = str(spec.server)
    chosen = rng.sample(queries, min(SMALL_QUERIES, len(queries)))
    names = list(dict.fromkeys(owner[q.gold_ids[0]] for q in chosen))
    size = rng.randint(*SIZES)
    picked: list[ToolSpec] = []
    for name in names:
        if len(picked) >= size:
            break
        picked += servers[name]
    ids = {s.id for s in picked}
    return Case("seal-domains", picked, [q for q in chosen if set(q.gold_ids) <= ids])


def shortened(query: Query) -> Query:
    """The query cut to its first `SHORT_WORDS` words: a short request, often without the
    words of its tool's description."""
    text = " ".join(query.query.split()[:SHORT_WORDS])
    return Query(query.id, text, query.gold_ids, query.system, query.state)


def cases(half: str, subcatalogs: int, kinds: Sequence[str]) -> list[Case]:
    """The catalogs and queries of one half."""
    out: list[Case] = []
    for name, tag in (("bfcl", "bfcl"), ("sealtools", "seal")):
        specs = load_catalog(DATA / f"catalog_{name}.jsonl")
        queries = [
            q
            for q in load_queries(DATA / f"queries_{name}_dev.jsonl", specs)
            if half_of(q.id) == half
        ]
        single = [q for q in queries if len(q.gold_ids) == 1]
        if f"{tag}-full" in kinds:
            out.append(Case(f"{tag}-full", specs, queries))
        if f"{tag}-small" in kinds:
            rng = random.Random(f"{tag}-small:{half}")
            out += [_small(f"{tag}-small", specs, single, rng) for _ in range(subcatalogs)]
        if f"{tag}-near" in kinds or f"{tag}-short" in kinds:
            vectors = VectorCache().vectors(shared_minilm(), [tool_text(s) for s in specs])
        if f"{tag}-near" in kinds:
            rng = random.Random(f"{tag}-near:{half}")
            out += [_near(f"{tag}-near", specs, single, rng, vectors) for _ in range(subcatalogs)]
        if f"{tag}-short" in kinds:
            short = [shortened(q) for q in single if len(q.query.split()) > SHORT_WORDS]
            rng = random.Random(f"{tag}-short:{half}")
            out += [_near(f"{tag}-short", specs, short, rng, vectors) for _ in range(subcatalogs)]
        if tag == "seal" and "seal-domains" in kinds:
            rng = random.Random(f"seal-domains:{half}")
            out += [_domains(specs, single, rng) for _ in range(subcatalogs)]
    return out


class ZScoreHybrid(HybridRanker):
    """Study: z-scores of cosine and BM25 fused, then min-max (instead of min-max of each)."""

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        def z(values: np.ndarray) -> np.ndarray:
            spread = float(values.std())
            return values - values.mean() if spread <= 0 else (values - values.mean()) / spread

        return minmax(self.alpha * z(dense) + (1 - self.alpha) * z(lexical))


class RRFHybrid(HybridRanker):
    """Study: reciprocal-rank fusion (k 60, equal weights), scaled so the best scores 1."""

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        def reciprocal(values: np.ndarray) -> np.ndarray:
            ranks = np.empty(values.size)
            ranks[np.argsort(-values, kind="stable")] = np.arange(values.size)
            return 1.0 / (61.0 + ranks)

        fused = reciprocal(dense) + reciprocal(lexical)
        return (fused / fused.max()).astype(np.float32) if fused.size else fused


class SqrtLexicalHybrid(HybridRanker):
    """Study: min-max of sqrt(BM25), so one strong word counts less against several."""

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        return ranking.fuse(dense, np.sqrt(np.maximum(lexical, 0.0)), alpha=self.alpha)


class GatedLexicalHybrid(HybridRanker):
    """Study: the lexical share counts in proportion to the tool's min-max cosine, so a word
    match on a tool far from the request's meaning counts less (rescaled so the best is 1)."""

    def fuse_text(self, dense: np.ndarray, lexical: np.ndarray, coverage: float) -> np.ndarray:
        close = minmax(dense)
        fused = self.alpha * close + (1 - self.alpha) * minmax(lexical) * close
        top = float(fused.max()) if fused.size else 0.0
        return fused / top if top > 0 else fused


def part_spans(text: str, parts: Sequence[str]) -> list[tuple[int, int]] | None:
    """The character span of each part of `text` (its first word to its last), found in order;
    None when a part's words are not in `text` in order."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for part in parts:
        start = end = -1
        for word in part.split():
            found = text.find(word, cursor)
            if found < 0:
                return None
            start = found if start < 0 else start
            cursor = end = found + len(word)
        if start < 0:
            return None
        spans.append((start, end))
    return spans


def late_vectors(encoder: MiniLMOnnxEncoder, text: str, spans: Sequence[tuple[int, int]]) -> Any:
    """One pass over `text`: row 0 its vector (as `encode([text])`), then per span the mean of
    the states of the tokens that start inside it ("late chunking")."""
    encoding = encoder._runtime[1].encode(text)
    states, mask = encoder._states([encoding])
    starts = np.asarray([a for a, _ in encoding.offsets])
    ordinary = np.asarray(encoding.special_tokens_mask) == 0
    weights = np.zeros((len(spans) + 1, states.shape[1]), dtype=np.int64)
    weights[0] = mask[0]
    for row, (start, end) in enumerate(spans, start=1):
        weights[row, : starts.size] = ordinary & (starts >= start) & (starts < end)
    return normalize(mean_pool(np.broadcast_to(states, (len(weights), *states.shape[1:])), weights))


class LateHybrid(HybridRanker):
    """Study (not kept): each part's vector pooled from one encoder pass over the whole request
    (late chunking) instead of encoding each part on its own; `whole=True` also takes the whole
    request's row from that pass's vector of the request, not the parts' word-weighted mean."""

    def __init__(self, dense: DenseRanker, *, whole: bool = False) -> None:
        super().__init__(dense)
        self.whole = whole

    def _similarities(self, texts: Sequence[str], rows: np.ndarray | None) -> np.ndarray:
        spans = part_spans(texts[0], texts[1:]) if len(texts) > 1 else None
        encoder = self.dense.encoder
        if spans is None or not isinstance(encoder, MiniLMOnnxEncoder):
            return super()._similarities(texts, rows)
        key = ("late", texts[0])
        vectors = self.dense._memo.get(key)
        if vectors is None:
            vectors = late_vectors(encoder, texts[0], spans)
            self.dense._memo.put(key, vectors)
        parts = self.dense.similarities(vectors[1:], rows)
        if self.whole:
            return np.vstack([self.dense.similarities(vectors[:1], rows), parts])
        weights = np.asarray([max(len(t.split()), 1) for t in texts[1:]], dtype=np.float32)
        return np.vstack([((weights / weights.sum()) @ parts)[None, :], parts])


FILLERS = frozenset("d ll m re s t ve like want need would tell help let know".split())
"""Study: conversational words ("I'd like", "I need", "can you tell me") dropped from requests."""


class FillerBM25(BM25Ranker):
    """Study: BM25 with `FILLERS` left out of the request's words."""

    def all_scores(self, text: str) -> tuple[np.ndarray, float]:
        words = re.findall(r"[A-Za-z]+|[0-9]+", text)
        kept = " ".join(w for w in words if w.lower() not in FILLERS)
        return super().all_scores(kept)


def rankers(cache: VectorCache) -> dict[str, Callable[[], Any]]:
    """The methods compared: the default gate and its simple peers (one shared encoder)."""
    encoder = shared_minilm()

    def dense() -> DenseRanker:
        return DenseRanker(encoder, cache=cache)

    return {
        "default": lambda: HybridRanker(dense()),
        "dense": dense,
        "bm25": BM25Ranker,
        # study variants (not shipped)
        "no-exact": lambda: HybridRanker(dense(), exact_names=False),
        "no-calib": lambda: HybridRanker(dense(), confident_cosine=None),
        "no-parts": lambda: HybridRanker(dense(), multi_intent=False),
        "late-parts": lambda: LateHybrid(dense()),
        "late-whole": lambda: LateHybrid(dense(), whole=True),
        "calib-0.3": lambda: HybridRanker(dense(), confident_cosine=0.3),
        "calib-0.2": lambda: HybridRanker(dense(), confident_cosine=0.2),
        "alpha-0.8": lambda: HybridRanker(dense(), alpha=0.8),
        "alpha-0.5": lambda: HybridRanker(dense(), alpha=0.5),
        "alpha-0.75": lambda: HybridRanker(dense(), alpha=0.75),
        "fuse-zscore": lambda: ZScoreHybrid(dense()),
        "fuse-rrf": lambda: RRFHybrid(dense()),
        "fuse-sqrt-bm25": lambda: SqrtLexicalHybrid(dense()),
        "fuse-gated-bm25": lambda: GatedLexicalHybrid(dense()),
        "bm25-fillers": lambda: HybridRanker(dense(), FillerBM25()),
    }


def score_case(
    case: Case, make: Callable[[], Any], k: int, threshold: float | None = None
) -> tuple[list[float], list[int]]:
    """Recall@k and tools shown per query for one method on one case."""
    gate = ToolAttentionMiddleware(
        ranker=make(),
        k=k,
        summary_pool="off",
        emit_events=False,
        promotion=Promotion(threshold=threshold),
    )
    gate.index.fit_catalog(case.specs)
    keys = [s.id for s in case.specs]
    recalls, shown = [], []
    small_talk = [
        len(gate.decide_names({"messages": [HumanMessage(t)]}, keys).shown) for t in SMALL_TALK
    ]
    SMALL_TALK_SHOWN.append(statistics.mean(small_talk))
    for query in case.queries:
        decision = gate.decide_names({"messages": [HumanMessage(query.query)]}, keys)
        found = set(decision.shown)
        recalls.append(sum(g in found for g in query.gold_ids) / len(query.gold_ids))
        shown.append(len(decision.shown))
    return recalls, shown


def _rank(scores: np.ndarray, row: int) -> int:
    return int((scores > scores[row]).sum()) + 1


def _print_breakdown(
    kind: str, query: Query, gold: str, hybrid: HybridRanker, keys: list[str], k: int
) -> None:
    """The default's scores for `gold` and for the tools it showed instead."""
    texts = hybrid.texts(query.query)
    cosine = hybrid._similarities(texts, None)[0]
    lexical = hybrid.lexical.all_scores(query.query)[0]
    calibrated = hybrid.scores(query.query)
    fused = hybrid.fuse_text(cosine, lexical, 1.0)
    print(f"  [{kind}] {query.query!r} gold {gold}, {len(texts) - 1 or 'no'} parts")
    rows = [keys.index(gold), *ranking.top_rows(calibrated, k).tolist()]
    for n, row in enumerate(rows):
        label = "gold" if n == 0 else "shown"
        print(
            f"    {label:5} {keys[row][:36]:36} rank {_rank(calibrated, row):3d}"
            f"  cos {cosine[row]:.3f} (best {cosine.max():.3f})"
            f"  bm25 {lexical[row]:5.2f} (best {lexical.max():5.2f})"
            f"  min-max {minmax(cosine)[row]:.2f}/{minmax(lexical)[row]:.2f}"
            f"  fused {fused[row]:.3f}  final {calibrated[row]:.3f}"
        )


def print_misses(cases: Sequence[Case], peer: str, make: Callable[[], Any], k: int) -> None:
    """Each request whose gold tool the default misses and `peer` finds, with the default's
    scores: cosine, BM25 (raw and min-max over the catalog), fused, calibrated; then both
    directions counted, in gold tools and in distinct requests."""
    lost: list[str] = []
    won: list[str] = []
    for case in cases:
        default = ToolAttentionMiddleware(
            ranker="default", k=k, summary_pool="off", emit_events=False
        )
        other = ToolAttentionMiddleware(ranker=make(), k=k, summary_pool="off", emit_events=False)
        hybrid = HybridRanker(DenseRanker(shared_minilm()))
        for gate in (default, other):
            gate.index.fit_catalog(case.specs)
        hybrid.fit(case.specs)
        keys = [s.id for s in case.specs]
        for query in case.queries:
            state = {"messages": [HumanMessage(query.query)]}
            shown = set(default.decide_names(state, keys).shown)
            found = set(other.decide_names(state, keys).shown)
            for gold in query.gold_ids:
                if gold in found and gold not in shown:
                    lost.append(query.id)
                    _print_breakdown(case.kind, query, gold, hybrid, keys, k)
                elif gold in shown and gold not in found:
                    won.append(query.id)
    print(
        f"  default misses {len(lost)} gold tools {peer} finds ({len(set(lost))} distinct "
        f"requests); {peer} misses {len(won)} the default finds ({len(set(won))} distinct)"
    )


def main() -> None:
    """Print recall@k per kind of catalog and method."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--half", choices=("tune", "report"), default="tune")
    parser.add_argument("--subcatalogs", type=int, default=6)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument(
        "--methods", default="default,dense,bm25", help="names; name@T sets the threshold T"
    )
    parser.add_argument(
        "--kinds",
        default="bfcl-short,seal-short,bfcl-near,seal-near,bfcl-small,seal-small,seal-domains,"
        "bfcl-full,seal-full",
    )
    parser.add_argument("--misses", help="a method: list the requests it finds and default misses")
    args = parser.parse_args()
    ranking.MEMO_SIZE = 1 << 16  # every method reuses the request vectors of the first
    cache = VectorCache()
    makers = rankers(cache)
    methods = args.methods.split(",")
    kinds = args.kinds.split(",")
    all_cases = cases(args.half, args.subcatalogs, kinds)
    print(f"half: {args.half}; k={args.k}; recall@k (mean tools shown)")
    print("kind".ljust(14) + "".join(m.rjust(16) for m in methods) + "  queries distinct  tools")
    for kind in kinds:
        group = [c for c in all_cases if c.kind == kind]
        if not group:
            continue
        row = kind.ljust(14)
        talk: list[str] = []
        started = time.perf_counter()
        for method in methods:
            recalls: list[float] = []
            shown: list[int] = []
            name, _, cut = method.partition("@")
            for case in group:
                r, s = score_case(case, makers[name], args.k, float(cut) if cut else None)
                recalls += r
                shown += s
            row += f"{statistics.mean(recalls):.3f} ({statistics.mean(shown):.1f})".rjust(16)
            talk.append(f"{statistics.mean(SMALL_TALK_SHOWN):.1f}")
            SMALL_TALK_SHOWN.clear()
        queries = sum(len(c.queries) for c in group)
        distinct = len({q.id for c in group for q in c.queries})
        tools = statistics.mean(len(c.specs) for c in group)
        seconds = time.perf_counter() - started
        print(f"{row}  {queries:7d}  {distinct:7d}  {tools:5.0f}  [{seconds:.0f} s]")
        print("  small talk".ljust(14) + "".join(t.rjust(16) for t in talk))
        if args.misses:
            print_misses(group, args.misses, makers[args.misses], args.k)


if __name__ == "__main__":
    main()
