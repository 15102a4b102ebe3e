"""How well intent pre-selection picks the example agent's scope from a user's message.

Two labelled sets of questions (math, translation, weather, and off-topic ones that must
activate nothing): `benchmarks/data/scope_questions.jsonl` chose the defaults (it prints the grid
it was chosen on with `--grid`), `benchmarks/data/scope_questions_holdout.jsonl` was written
afterwards and only measured. For each ranker: questions given the right scope, a wrong scope,
no scope (they fall back to the start mode), and off-topic questions that activated a scope.
Run: `python benchmarks/scope_preselection.py [--grid]`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

from agents import build_scopes
from attention_scoping.adapters.tools import specs_from_tools
from attention_scoping.scoping.catalog import ScopeCatalog
from attention_scoping.scoping.preselect import choose, scope_documents, scope_scores
from attention_scoping.scoping.start import CALIBRATION, resolve_rank

DATA = Path(__file__).resolve().parent / "data"
SETS = {"calibration": "scope_questions.jsonl", "holdout": "scope_questions_holdout.jsonl"}


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def score(rows: list[dict[str, Any]], picks: list[str | None]) -> dict[str, int]:
    out = {"right": 0, "wrong": 0, "undecided": 0, "off_topic_activated": 0, "in_scope": 0}
    for row, pick in zip(rows, picks, strict=True):
        if row["scope"] is None:
            out["off_topic_activated"] += pick is not None
            continue
        out["in_scope"] += 1
        key = "right" if pick == row["scope"] else "undecided" if pick is None else "wrong"
        out[key] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", action="store_true", help="print the calibration grid")
    args = parser.parse_args()
    scopes = build_scopes()
    catalog = ScopeCatalog(scopes)
    docs = scope_documents(catalog, specs_from_tools([t for s in scopes for t in s.tool_objects]))
    for ranker in ("dense", "fused", "lexical"):
        rank, label, kind = resolve_rank(ranker)
        floor, lead = CALIBRATION[kind]
        print(f"\n{label}  (min_score {floor}, margin {lead})")
        for set_name, file in SETS.items():
            rows = load(file)
            start = time.perf_counter()
            ranked = [scope_scores(rank(r["text"], docs), catalog) for r in rows]
            per = (time.perf_counter() - start) / len(rows) * 1000
            picks = [choose(s, margin=lead, min_score=floor).scope for s in ranked]
            s = score(rows, picks)
            off = len(rows) - s["in_scope"]
            print(
                f"  {set_name:11} right {s['right']}/{s['in_scope']}, wrong {s['wrong']}, "
                f"undecided {s['undecided']}, off-topic activated {s['off_topic_activated']}/{off}"
                f"  ({per:.1f} ms per message)"
            )
            if args.grid and set_name == "calibration":
                for floor_, lead_ in itertools.product(
                    (0.15, 0.2, 0.25, 0.3), (0.0, 0.02, 0.03, 0.05, 0.1)
                ):
                    g = score(
                        rows, [choose(x, margin=lead_, min_score=floor_).scope for x in ranked]
                    )
                    print(
                        f"    min {floor_:.2f} margin {lead_:.2f}: right {g['right']}, "
                        f"wrong {g['wrong']}, off-topic {g['off_topic_activated']}"
                    )


if __name__ == "__main__":
    main()
