"""How well a selector picks the example agent's scope from a user's message.

Two labelled sets of questions (math, translation, weather, and off-topic ones that must
select nothing): `benchmarks/data/scope_questions.jsonl` chose the defaults (`--grid` prints the
`LexicalSelector` calibration grid on it), `benchmarks/data/scope_questions_holdout.jsonl` was
written afterwards and only measured. Any `attention_scoping.select.Selector` is measured the
same way, through its `select(text, catalog)`: the core's `LexicalSelector` (its defaults),
plus each `--selector module:attribute` (a selector, or a function of no argument returning
one; an add-on's, say). Per selector and set: questions given the right scope, a wrong scope,
no scope (the model then loads one itself), and off-topic questions that selected a scope.

Run: `python benchmarks/scope_preselection.py [--grid] [--selector module:attribute ...]`.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

from agents import build_scopes
from attention_scoping.scopes import ScopeCatalog
from attention_scoping.select import LexicalSelector, Selector

DATA = Path(__file__).resolve().parent / "data"
SETS = {"calibration": "scope_questions.jsonl", "holdout": "scope_questions_holdout.jsonl"}
GRID = tuple(itertools.product((0.15, 0.2, 0.25, 0.3, 0.35), (0.0, 0.05, 0.1, 0.15, 0.2)))
"""(min_score, margin) pairs of the `--grid` over `LexicalSelector`."""


def load(name: str) -> list[dict[str, Any]]:
    """The labelled rows of one set (`text`, `scope`: None for off-topic)."""
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def score(rows: list[dict[str, Any]], picks: list[str | None]) -> dict[str, int]:
    """Right, wrong and undecided in-scope questions, and off-topic ones that selected."""
    out = {"right": 0, "wrong": 0, "undecided": 0, "off_topic_activated": 0, "in_scope": 0}
    for row, pick in zip(rows, picks, strict=True):
        if row["scope"] is None:
            out["off_topic_activated"] += pick is not None
            continue
        out["in_scope"] += 1
        key = "right" if pick == row["scope"] else "undecided" if pick is None else "wrong"
        out[key] += 1
    return out


def picks(
    selector: Selector, rows: list[dict[str, Any]], catalog: ScopeCatalog
) -> list[str | None]:
    """The scope `selector` selects for each row (None: none)."""
    return [selector.select(row["text"], catalog).scope for row in rows]


def load_selector(spec: str) -> tuple[str, Selector]:
    """The selector named `module:attribute` (called when it is a function), and its label.

    Raises:
        SystemExit: not `module:attribute`, or not a `Selector`.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--selector {spec!r}: expected module:attribute")
    value: Any = getattr(importlib.import_module(module_name), attribute)
    if isinstance(value, type) or (not isinstance(value, Selector) and callable(value)):
        value = value()
    if not isinstance(value, Selector):
        raise SystemExit(f"--selector {spec!r}: not a selector (no select(text, catalog))")
    return spec, value


def line(label: str, rows: list[dict[str, Any]], chosen: list[str | None], ms: float) -> str:
    """One result line."""
    s = score(rows, chosen)
    off = len(rows) - s["in_scope"]
    return (
        f"  {label:11} right {s['right']}/{s['in_scope']}, wrong {s['wrong']}, "
        f"undecided {s['undecided']}, off-topic activated {s['off_topic_activated']}/{off}"
        f"  ({ms:.2f} ms per message)"
    )


def main(argv: list[str] | None = None) -> None:
    """Print each selector's figures on both sets (and, with --grid, the lexical grid)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", action="store_true", help="print the calibration grid")
    parser.add_argument(
        "--selector",
        action="append",
        default=[],
        metavar="MODULE:ATTRIBUTE",
        help="also measure this selector (repeatable)",
    )
    args = parser.parse_args(argv)
    catalog = ScopeCatalog(build_scopes())
    default = LexicalSelector()
    label = f"LexicalSelector (min_score {default.min_score}, margin {default.margin})"
    selectors = [(label, default), *(load_selector(s) for s in args.selector)]
    for name, selector in selectors:
        print(f"\n{name}")
        for set_name, file in SETS.items():
            rows = load(file)
            started = time.perf_counter()
            chosen = picks(selector, rows, catalog)
            ms = (time.perf_counter() - started) / len(rows) * 1000
            print(line(set_name, rows, chosen, ms))
    if args.grid:
        rows = load(SETS["calibration"])
        print("\nLexicalSelector grid on the calibration set")
        for floor, lead in GRID:
            g = score(rows, picks(LexicalSelector(min_score=floor, margin=lead), rows, catalog))
            print(
                f"    min {floor:.2f} margin {lead:.2f}: right {g['right']}, "
                f"wrong {g['wrong']}, off-topic {g['off_topic_activated']}"
            )


if __name__ == "__main__":
    main()
