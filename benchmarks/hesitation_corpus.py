"""Precision, recall and confusion of the hesitation radar on the labelled corpora.

Usage:
    python benchmarks/hesitation_corpus.py                # the three corpora, per split
    python benchmarks/hesitation_corpus.py --errors       # also print every misclassified row
    python benchmarks/hesitation_corpus.py --corpus other.jsonl [--corpus more.jsonl]
    python benchmarks/hesitation_corpus.py --no-request   # withhold the users' requests

Each corpus line is `{"id", "split", "label": "stall"|"legit", "kind", "tool", "text",
"schemas": [...], "user"?}`; `schemas` are the tool schemas disclosed before the message and
`user`, when present, the request it answers (passed to the radar as `request=`). A line with
a `_meta` key documents the file and is skipped.

- `tests/hesitation_corpus.jsonl`, the project's corpus (no requests). The `holdout` splits
  were written after the radar's weights were frozen, as a check on generalization.
- `tests/hesitation_blind_dev.jsonl`, the development half of a blind set written
  independently of the radar; its other half is held out. Rows with a request are scored with
  it, and once more without it ("text only") to show what the radar makes of the text alone.
- `tests/hesitation_field_answers.jsonl`, legitimate answers that list a write tool's fields
  (wording, explanations, drafts the user sends, translations, docs, comparisons...) with the
  request they answer, and stall controls on the same tools. Written before the radar read the
  request for text, explanations and drafts; its `holdout` split was not looked at while the
  rules were changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attention_scoping.hesitation.radar import detect_hesitation  # noqa: E402

DEFAULT_CORPUS = ROOT / "tests" / "hesitation_corpus.jsonl"
BLIND_DEV_CORPUS = ROOT / "tests" / "hesitation_blind_dev.jsonl"
FIELD_ANSWERS_CORPUS = ROOT / "tests" / "hesitation_field_answers.jsonl"
DEFAULT_CORPORA = (DEFAULT_CORPUS, BLIND_DEV_CORPUS, FIELD_ANSWERS_CORPUS)


@dataclass
class Confusion:
    """Counts of a binary classification, stall = positive."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def line(self, name: str) -> str:
        n = self.tp + self.fp + self.fn + self.tn
        return (
            f"{name:<9} n={n:<4} precision={self.precision:.3f} recall={self.recall:.3f}  "
            f"TP={self.tp} FP={self.fp} FN={self.fn} TN={self.tn}"
        )


def load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if "_meta" in row:
                continue
            if row.get("label") not in ("stall", "legit"):
                raise SystemExit(f"{path}:{number}: label must be 'stall' or 'legit'")
            rows.append(row)
    return rows


def evaluate(
    rows: Sequence[dict[str, Any]], *, use_request: bool = True
) -> tuple[dict[str, Confusion], list[str]]:
    """Confusion per split (and 'all'), plus a line per misclassified row.

    With `use_request`, a row's `user` text is passed to the radar as the request.
    """
    table: dict[str, Confusion] = {"all": Confusion()}
    errors: list[str] = []
    for row in rows:
        request = row.get("user") if use_request else None
        verdict = detect_hesitation(row["text"], row["schemas"], request=request)
        actual = row["label"] == "stall"
        for key in ("all", row.get("split")):
            if key:
                table.setdefault(key, Confusion()).add(bool(verdict), actual)
        if bool(verdict) != actual:
            errors.append(
                f"{row['id']} [{row['label']}/{row.get('kind', '')}] score={verdict.score:.2f} "
                f"{row['text'][:110]!r}\n    " + "\n    ".join(verdict.reasons)
            )
    return table, errors


def report(path: Path, *, use_request: bool = True, show_errors: bool = False) -> None:
    """Print the figures of one corpus."""
    rows = load(path)
    stalls = sum(r["label"] == "stall" for r in rows)
    with_user = sum(bool(r.get("user")) for r in rows)
    requests = f", {with_user} with the user's request" if with_user else ""
    print(f"corpus: {path.name}, {stalls} stalls, {len(rows) - stalls} legitimate{requests}")
    table, errors = evaluate(rows, use_request=use_request)
    for name, confusion in table.items():
        print(confusion.line(name))
    if with_user and use_request:
        text_only, _ = evaluate(rows, use_request=False)
        print(text_only["all"].line("text-only"))
    if show_errors:
        for line in errors:
            print(line)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, action="append", help="a corpus file (repeatable; default: all)"
    )
    parser.add_argument("--errors", action="store_true", help="print misclassified rows")
    parser.add_argument(
        "--no-request", action="store_true", help="judge the text alone, ignoring `user`"
    )
    args = parser.parse_args(argv)
    for path in args.corpus or DEFAULT_CORPORA:
        report(path, use_request=not args.no_request, show_errors=args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
