"""When does a message need a tool? The threshold of `hesitation.assist`, chosen and measured.

`benchmarks/data/assist_messages.jsonl` holds labelled messages: greetings, thanks, farewells,
chit-chat, meta-questions and acknowledgements (no tool) and requests in nine domains (the
example agent's math, translation and weather, and the distractor servers' GitHub, filesystem,
database, Slack, web and Jira). Rows alternate, per kind and domain, between a calibration half
(the threshold is chosen there) and a held-out half (only measured).

For each message and catalog (the example agent's 9 tools; the same plus 40 distractors, 49
tools, where the distractor domains exist), the core's default selector
(`attention_scoping.select.LexicalSelector`, its defaults) selects, and the hint is due:
- before: on a confident or close-call selection (any matched declared read named);
- after: on a confident selection whose message `needs_tool` (a content word shared with a
  matched read, or the best score at least the threshold).
Code names declared reads only, so the hints name the selection's `reads`.
A no-tool message must get no hint; a request should get the hint of its own domain.
Run: `python benchmarks/assist_threshold.py` (prints the grid on the calibration half, then
both halves at the chosen threshold).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_scoping.adapters.tools import specs_from_tools
from attention_scoping.common.tool import ToolSpec
from attention_scoping.hesitation.assist import ASSIST_MIN_SCORE, needs_tool, tool_words
from attention_scoping.scopes import ScopeCatalog
from attention_scoping.select import LexicalSelector, Selection
from attention_scoping_lab.eval.suites.example import example_suite

DATA = Path(__file__).resolve().parent / "data" / "assist_messages.jsonl"
EXAMPLE_DOMAINS = frozenset({"math", "translation", "weather"})
GRID = [round(0.2 + 0.025 * i, 3) for i in range(21)]


def load() -> list[dict[str, Any]]:
    """The labelled rows, each with its half (`calibration` or `holdout`)."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    seen: Counter[tuple[str, str | None]] = Counter()
    for row in rows:
        key = (row["kind"], row["domain"])
        row["half"] = "calibration" if seen[key] % 2 == 0 else "holdout"
        seen[key] += 1
    return rows


@dataclass
class Case:
    """One message in one catalog: its label and what pre-selection made of it."""

    row: dict[str, Any]
    catalog: str
    choice: Selection
    words: list[set[str]]

    @property
    def best(self) -> float | None:
        return max(self.choice.scores.values()) if self.choice.scores else None

    def hinted_before(self) -> bool:
        return self.choice.reason in ("confident", "close_call") and bool(self.choice.reads)

    def hinted_after(self, threshold: float) -> bool:
        if self.choice.reason != "confident" or not self.choice.reads:
            return False
        return needs_tool(self.row["text"], self.words, self.best, min_score=threshold)


def cases(rows: list[dict[str, Any]]) -> list[Case]:
    """Every row in the 9-tool catalog (its domains and no-tool rows) and the 49-tool one."""
    selector = LexicalSelector()
    out: list[Case] = []
    for label, distractors in (("9 tools", 0), ("49 tools", 40)):
        suite = example_suite(distractors=distractors)
        catalog = ScopeCatalog(list(suite.scopes or ()), tools=list(suite.tools))
        specs = {s.name: s for s in specs_from_tools(suite.tools)}
        for row in rows:
            if distractors == 0 and row["domain"] not in EXAMPLE_DOMAINS | {None}:
                continue
            choice = selector.select(row["text"], catalog)
            words = [_words(specs[t]) for t in choice.reads if t in specs]
            out.append(Case(row, label, choice, words))
    return out


def _words(spec: ToolSpec) -> set[str]:
    return tool_words(spec.name, spec.description, spec.parameter_names())


def tally(chosen: list[Case], hinted: list[bool]) -> dict[str, int]:
    """No-tool messages hinted (wrong), requests hinted toward their own domain (right)."""
    out = Counter[str]()
    for case, hint in zip(chosen, hinted, strict=True):
        if not case.row["needs_tool"]:
            out["no_tool"] += 1
            out["no_tool_hinted"] += hint
        else:
            out["requests"] += 1
            out["requests_hinted_right"] += hint and case.choice.scope == case.row["domain"]
            out["requests_hinted_wrong"] += hint and case.choice.scope != case.row["domain"]
    return dict(out)


def errors(chosen: list[Case], threshold: float) -> int:
    """No-tool messages hinted plus requests left without their domain's hint."""
    t = tally(chosen, [c.hinted_after(threshold) for c in chosen])
    return t["no_tool_hinted"] + t["requests"] - t["requests_hinted_right"]


def line(name: str, t: dict[str, int]) -> str:
    return (
        f"{name:10} no-tool messages hinted {t['no_tool_hinted']}/{t['no_tool']}; requests "
        f"hinted toward their domain {t['requests_hinted_right']}/{t['requests']} "
        f"(toward another {t['requests_hinted_wrong']})"
    )


def main() -> None:
    all_cases = cases(load())
    calibration = [c for c in all_cases if c.row["half"] == "calibration"]
    print("calibration grid (errors = no-tool messages hinted + requests without their hint):")
    for threshold in GRID:
        print(f"  threshold {threshold:.3f}: {errors(calibration, threshold)} errors")
    best = min(GRID, key=lambda x: (errors(calibration, x), x))
    print(f"best on calibration: {best:.3f}; in use (ASSIST_MIN_SCORE): {ASSIST_MIN_SCORE}")
    for catalog in ("9 tools", "49 tools"):
        for half in ("calibration", "holdout"):
            chosen = [c for c in all_cases if c.catalog == catalog and c.row["half"] == half]
            print(f"\n{catalog}, {half} half ({len(chosen)} messages)")
            print(line("before", tally(chosen, [c.hinted_before() for c in chosen])))
            after = [c.hinted_after(ASSIST_MIN_SCORE) for c in chosen]
            print(line("after", tally(chosen, after)))


if __name__ == "__main__":
    main()
