"""Benchmark: how few tools the native modes can disclose (issue 27's 30 % and 35 % bounds).

    python benchmarks/native_announce_frontier.py [--seeds 0,1,2] [--sessions 20] [--turns 10]
        [--part gate|built]

The anthropic-mode gate as built (`gate_anthropic_announced` of `attention-scoping simulate
--sessions`) announces the gate's whole decision at each user turn: its k best above the
threshold (k = 5). Disclosing fewer definitions is the one lever on its bill left (docs/cost.md),
and it costs exposure at once. This plays the same sessions with other announcement rules,
each with the search the model calls for a tool that was not announced returning its `s`
best new tools (exact names first), and prints, per seed, the billed input against eager with
caching (Anthropic prices) next to the needed tools the model could call at once and at all
(`search` "built": the search as built, the gate's k best, those disclosed already among them).
Issue 27's ranked scoping (a scope's k best per load and per pair) is not built on the core
(docs/disclosure.md), so its rows are gone; scoping with `Anthropic()` discloses a scope whole.

`--part built` plays the modes as built on every seed instead (`--seeds 0-9` for ten) and
prints each mode's bill against eager under its own provider's prices (the gate with decisions
announced, Anthropic and OpenAI; scoping with `Anthropic()`), with the median over the seeds
and how many meet the issue's bounds (gate 30 %, scoping 35 %) at exposure at once at least the
per-call gate's.

Seeds are separate catalogs and sessions: choose a rule on one seed, read the others as held
out. The per-call gate's exposure at once is the bar (the issue: exposure at least the
per-call gate's).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.cost import PRICE_MODELS, memo_count, price_model
from attention_scoping_lab.simulate.billing import (
    StrategyBill,
    bill_sessions,
    build_strategies,
    run_sessions,
)
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.native_strategies import NativeGate
from attention_scoping_lab.simulate.session_strategies import SessionStrategy
from attention_scoping_lab.simulate.sessions import Session, build_sessions

Ranked = list[tuple[str, float]]
Rule = Callable[[Ranked, float], list[str]]
"""(the decision's ranked (name, score) best first, its threshold) -> the names to announce."""


def top(k: int) -> Rule:
    """The k best at or above the threshold (k = 5: as built)."""
    return lambda ranked, threshold: [n for n, s in ranked[:k] if s >= threshold]


def margin(gap: float) -> Rule:
    """Those at or above the threshold within `gap` of the best score."""
    return lambda ranked, threshold: [
        n for n, s in ranked if s >= threshold and s >= ranked[0][1] - gap
    ]


def floor(score: float) -> Rule:
    """Those scoring at least `score` (at least the best one above the threshold)."""

    def rule(ranked: Ranked, threshold: float) -> list[str]:
        kept = [n for n, s in ranked if s >= max(threshold, score)]
        return kept or [n for n, s in ranked[:1] if s >= threshold]

    return rule


RULES: dict[str, Rule] = {
    "as built (top 5)": top(5),
    "top 3": top(3),
    "top 2": top(2),
    "top 1": top(1),
    "within 0.1 of the best": margin(0.1),
    "score >= 0.75": floor(0.75),
    "score >= 0.8": floor(0.8),
    "score >= 0.85": floor(0.85),
}
SEARCH_SIZES: tuple[int | None, ...] = (None, 2, 3, 5)
"""None: the search as built (the gate's k best, those disclosed already among them)."""


class AnnouncingGate(NativeGate):
    """The anthropic-mode gate, decisions announced, with another announcement rule and search
    size."""

    def __init__(self, base: NativeGate, rule: Rule, search_size: int | None) -> None:
        """The catalog and fitted gate of `base`."""
        super().__init__(list(base.specs.values()), base.gate, "anthropic", round_trips=False)
        self.rule = rule
        self.search_size = search_size

    def decide(self, conv: Conversation) -> list[str]:
        """The decision's fixed verdicts (exact names, pinned) and what the rule keeps of its
        ranked part."""
        decision = self.gate.decide_names({**self.state, "messages": conv.messages}, self.order)
        rows = decision.as_trace(max_rank=decision.k)["verdicts"]
        ranked: Ranked = [(r["name"], r["score"]) for r in rows if r["reason"] == "ranked"]
        ranked_names = {n for n, _ in ranked}
        keep = {n for n in decision.shown if n not in ranked_names}
        keep.update(self.rule(ranked, decision.threshold))
        return self.ordered([n for n in decision.shown if n in keep])

    def search(self, query: str) -> list[str]:
        """Exact names, then the `search_size` best not disclosed yet at or above the threshold
        (as built when `search_size` is None)."""
        if self.search_size is None:
            return super().search(query)
        exact, ranked = self.ranking(query)
        threshold, seen = self.gate.threshold, self.disclosed
        fresh = [n for n, s in ranked if s >= threshold and n not in exact and n not in seen]
        return exact + fresh[: self.search_size]


def play(strategy: SessionStrategy, sessions: Sequence[Session]) -> StrategyBill:
    """Bill `strategy` over `sessions` at Anthropic prices (its exposure counts from zero)."""
    strategy.exposure = dict.fromkeys(strategy.exposure, 0)
    prices = [price_model("anthropic"), *(p for n, p in PRICE_MODELS.items() if n != "anthropic")]
    return bill_sessions(strategy, sessions, prices, memo_count(get_counter().count))


def run_seed(seed: int, n_sessions: int, turns: int, part: str) -> None:
    """Print one seed's rows."""
    counter = get_counter()
    specs = build_catalog(seed, counter)
    sessions = build_sessions(seed, n_sessions, turns)
    strategies = {s.name: s for s in build_strategies(specs, counter, "default", None)}
    eager = play(strategies["eager"], sessions).billed_per_task["anthropic"]
    gate = play(strategies["per_call_gate"], sessions)
    print(
        f"seed {seed}: per-call gate {gate.billed_per_task['anthropic'] / eager:.1%} of eager, "
        f"exposure at once {gate.exposed_at_once:.1%}"
    )
    rows: list[tuple[str, str, SessionStrategy]] = []
    if part == "gate":
        base: Any = strategies["gate_anthropic_announced"]
        rows += [
            (label, str(size or "built"), AnnouncingGate(base, rule, size))
            for size in SEARCH_SIZES
            for label, rule in RULES.items()
        ]
    head = f"  {'announced':24s} {'search / pair':>13s} {'billed':>8s}"
    print(f"{head} {'at once':>8s} {'at all':>7s}")
    for label, search, strategy in rows:
        bill = play(strategy, sessions)
        ratio = bill.billed_per_task["anthropic"] / eager
        print(
            f"  {label:24s} {search:>13s} {ratio:8.1%} {bill.exposed_at_once:8.1%} "
            f"{bill.exposure:7.1%}",
            flush=True,
        )


BUILT: dict[str, tuple[str, float]] = {
    "gate_anthropic_announced": ("anthropic", 0.30),
    "scoping_anthropic_whole": ("anthropic", 0.35),
    "gate_openai_announced": ("openai", 0.30),
}
"""The modes as built -> (their provider's price model, the issue's bound)."""


def run_built(seeds: Sequence[int], n_sessions: int, turns: int) -> None:
    """Print the modes as built on every seed, then the median and the seeds within bounds."""
    ratios: dict[str, list[float]] = {name: [] for name in BUILT}
    within: dict[str, int] = dict.fromkeys(BUILT, 0)
    print("seed  per-call gate at once  " + "  ".join(f"{n:>26s}" for n in BUILT))
    for seed in seeds:
        result = run_sessions(
            price=price_model("anthropic"),
            seed=seed,
            n_sessions=n_sessions,
            turns=turns,
            only=["per_call_gate", *BUILT],
        )
        bar = result.strategy("per_call_gate").exposed_at_once
        cells = []
        for name, (model, bound) in BUILT.items():
            bill = result.strategy(name)
            ratio = bill.billed_per_task[model] / result.strategy("eager").billed_per_task[model]
            ratios[name].append(ratio)
            within[name] += ratio <= bound and bill.exposed_at_once >= bar
            cells.append(f"{ratio:6.1%} ({bill.exposed_at_once:.1%} at once)".rjust(26))
        print(f"{seed:4d}  {bar:21.1%}  " + "  ".join(cells), flush=True)
    print(
        "median                       "
        + "  ".join(f"{statistics.median(v):26.1%}" for v in ratios.values())
    )
    print(
        "within the bound, at the bar "
        + "  ".join(f"{within[n]:>18d} of {len(seeds):<2d}".rjust(26) for n in BUILT)
    )


def seed_list(text: str) -> list[int]:
    """`0,1,2` or `0-9`."""
    if "-" in text:
        low, high = text.split("-", 1)
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    """Parse the options and print every seed's frontier."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--part", choices=("gate", "built"), default="gate")
    args = parser.parse_args()
    seeds = seed_list(args.seeds)
    if args.part == "built":
        run_built(seeds, args.sessions, args.turns)
        return
    for seed in seeds:
        run_seed(seed, args.sessions, args.turns, args.part)


if __name__ == "__main__":
    main()
