"""README's figures table: every figure matches what its command prints.

The fast, deterministic figures (the example agent's token counts, the radar on its corpus)
are computed here. The slower ones (`simulate`, `bench`) are compared with the `--json`
output of their command committed under `benchmarks/results/`; with
`ATTENTION_SCOPING_FIGURES=1` the commands run again and their output must match that file.
The docs tables that state the same figures are checked against the same source, so no two
pages give one figure two values.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.script_support import load_script

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"
RERUN = os.environ.get("ATTENTION_SCOPING_FIGURES") == "1"

Json = dict[str, Any]


def figures() -> dict[str, str]:
    """README's figures table: `{command: value}`."""
    section = README[README.index("\n## Figures") :]
    section = section[: section.index("\n## ", 1)]
    found = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2].startswith("`"):
            found[cells[2].strip("`")] = cells[1]
    return found


def table_rows(text: str, header: str) -> dict[str, list[str]]:
    """The rows of the markdown table whose header line starts with `header`, by first cell
    (bold marks and a parenthesised note after the name dropped)."""
    lines = text[text.index(header) :].splitlines()[2:]
    rows = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        rows[re.sub(r"\s*\(.*\)$", "", cells[0])] = cells[1:]
    return rows


def percent(share: float) -> str:
    return f"{share:.1%}"


# -- computed here ---------------------------------------------------------------------------


def test_readme_lists_one_command_per_figure() -> None:
    table = figures()
    assert len(table) == 5
    assert README.count("## Figures") == 1


def test_example_agent_tokens_match_the_benchmark() -> None:
    unscoped, *scoped = load_script("example_tokens", register=True).rows()
    by_context = {row.context.split(" (")[0]: row for row in scoped}
    math = by_context["math"]
    share = math.schemas / unscoped.schemas
    expected = f"{math.schemas:,} of {unscoped.schemas:,} ({share:.0%})"
    assert figures()["python benchmarks/example_tokens.py"] == expected
    docs = table_rows((DOCS / "example-agent.md").read_text(), "| active context |")
    assert docs.pop("unscoped") == [
        str(unscoped.tools),
        f"{unscoped.schemas:,}",
        f"{unscoped.prompt:,}",
        f"{unscoped.total:,}",
    ]
    for name, cells in docs.items():
        row = by_context[name]
        assert cells == [
            str(row.tools),
            f"{row.schemas:,} ({row.schemas / unscoped.schemas:.0%})",
            f"{row.prompt:,}",
            f"{row.total:,} ({row.total / unscoped.total:.0%})",
        ], name


def test_radar_figures_match_the_benchmark() -> None:
    bench = load_script("hesitation_corpus", register=True)
    table, _ = bench.evaluate(bench.load(bench.DEFAULT_CORPUS))
    overall = table["all"]
    expected = f"{overall.precision:.3f} / {overall.recall:.3f}"
    assert figures()["python benchmarks/hesitation_corpus.py"] == expected
    assert overall.line("all") in (DOCS / "runtime.md").read_text()


# -- compared with the committed output of the slower commands --------------------------------

SESSIONS = "attention-scoping simulate --sessions 20 --turns 10 --price anthropic"
SIMULATE = "attention-scoping simulate --seed 0"
BFCL = (
    "attention-scoping bench --catalog data/catalog_bfcl.jsonl "
    "--queries data/queries_bfcl_dev.jsonl"
)
RESULT_FILES = {
    SESSIONS: "simulate-sessions.json",
    SIMULATE: "simulate.json",
    BFCL: "bench-bfcl.json",
}


def sessions_value(doc: Json) -> str:
    billed = {name: s["billed_input_per_task"] for name, s in doc["strategies"].items()}
    shown = ("gateway_signatures", "scoping", "per_call_gate")
    return " / ".join(percent(billed[name] / billed["eager"]) for name in shown)


def simulate_value(doc: Json) -> str:
    per_call = {name: s["tool_tokens_per_call"] for name, s in doc["strategies"].items()}
    return f"{per_call['eager']:,.0f} / {per_call['gated']:,.0f}"


def bfcl_value(doc: Json) -> str:
    default = doc["methods"]["default"]
    return f"{default['recall']['5']:.3f}, {default['tokens_per_call']['5']:,.0f}"


VALUES: dict[str, Callable[[Json], str]] = {
    SESSIONS: sessions_value,
    SIMULATE: simulate_value,
    BFCL: bfcl_value,
}


def committed(command: str) -> Json:
    document: Json = json.loads((RESULTS / RESULT_FILES[command]).read_text())
    return document


@pytest.mark.parametrize("command", list(VALUES))
def test_readme_figure_matches_the_committed_output(command: str) -> None:
    assert figures()[command] == VALUES[command](committed(command))


def test_cost_page_tables_match_the_committed_sessions() -> None:
    strategies = committed(SESSIONS)["strategies"]
    eager = strategies["eager"]["billed_input_per_task"]
    text = (DOCS / "cost.md").read_text()
    rows = table_rows(text, "| strategy | billed input | vs eager |")
    assert set(rows) == set(strategies) - {"recommended"}  # an alias of gateway_signatures
    for name, cells in rows.items():
        billed = strategies[name]["billed_input_per_task"]
        assert cells[:2] == [f"{billed:,.0f}", percent(billed / eager).replace("%", " %")], name
    by_price = table_rows(text, "| strategy | anthropic | anthropic-1h |")
    for name, cells in by_price.items():
        models = strategies[name]["billed_by_price_model"]
        eager_models = strategies["eager"]["billed_by_price_model"]
        expected = [
            percent(models[m] / eager_models[m]).replace("%", " %")
            for m in ("anthropic", "anthropic-1h", "openai", "none")
        ]
        assert cells == expected, name


def test_measuring_page_per_call_tokens_match_the_committed_simulation() -> None:
    per_call = {n: s["tool_tokens_per_call"] for n, s in committed(SIMULATE)["strategies"].items()}
    text = (DOCS / "measuring.md").read_text()
    rows = table_rows(text, "| strategy | per call | vs eager |")
    assert rows["eager"][0] == f"{per_call['eager']:,.0f}"
    assert rows["gated"][0] == f"{per_call['gated']:,.0f}"


@pytest.mark.skipif(not RERUN, reason="ATTENTION_SCOPING_FIGURES=1 reruns the slow commands")
@pytest.mark.parametrize("command", list(VALUES))
def test_the_command_still_prints_the_committed_figure(command: str, tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    args = command.split()[1:]
    code = "import sys; from attention_scoping_lab.cli import main; sys.exit(main(sys.argv[1:]))"
    subprocess.run(
        [sys.executable, "-c", code, *args, "--quiet", "--json", str(out)], cwd=ROOT, check=True
    )
    value = VALUES[command]
    assert value(json.loads(out.read_text())) == value(committed(command))
