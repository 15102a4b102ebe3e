"""docs/measuring.md's BFCL audit table states what `attention-scoping audit
data/catalog_bfcl.jsonl` prints now (issue 35, 8): every row's tools, tool tokens, share of
eager, prompt tokens, session tokens and cacheable prefix, and the figures its paragraph
quotes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from attention_scoping_lab.cli import main

ROOT = Path(__file__).resolve().parent.parent
MEASURING = (ROOT / "docs" / "measuring.md").read_text()
ROWS = {
    "eager": "eager (all tools)",
    "scoped": "scoped (417 scopes, mean)",
    "gated, k = 5": "gated (k=5)",
    "gateway": "gateway (3 tools)",
    "gateway + signature pool": "gateway + signature pool",
}
"""The page's row names -> the command's."""


def page_rows() -> dict[str, list[str]]:
    """The BFCL audit table of the page, by row name (its parenthesised note dropped)."""
    start = MEASURING.index("### On the BFCL catalog")
    lines = MEASURING[start:].split("| --- |", 1)[1].splitlines()[1:]
    rows = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[re.sub(r"\s*\(.*\)$", "", cells[0])] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The command's figures (`--suggest 0`: the suggestions do not change the table)."""
    path = tmp_path_factory.mktemp("audit") / "bfcl.json"
    argv = ["audit", str(ROOT / "data" / "catalog_bfcl.jsonl"), "--suggest", "0"]
    assert main([*argv, "--json", str(path)]) == 0
    return dict(json.loads(path.read_text()))


def test_the_bfcl_audit_table_is_what_the_command_prints(audit: dict[str, Any]) -> None:
    methods = {m["name"]: m for m in audit["methods"]}
    rows = page_rows()
    assert set(rows) == set(ROWS)
    eager = audit["eager_tokens_per_call"]
    for page_name, name in ROWS.items():
        figure = methods[name]
        tools, tokens, share, prompt, session, cacheable = rows[page_name]
        tools_sent = figure["tools_per_call"]
        assert tools == (
            f"{tools_sent:,}" if tools_sent == int(tools_sent) else f"{tools_sent:.1f}"
        )
        assert tokens == f"{round(figure['tool_tokens_per_call']):,}", page_name
        percent = f"{figure['tool_tokens_per_call'] / eager * 100:.1f} %"
        assert share == percent.replace("100.0 %", "100 %"), page_name
        assert prompt == f"{round(figure['prompt_tokens_per_call']):,}", page_name
        assert session == f"{round(figure['session_tokens']):,}", page_name
        assert cacheable == f"{figure['cacheable_share']:.0%}".replace("%", " %"), page_name


def test_the_paragraph_quotes_the_commands_figures(audit: dict[str, Any]) -> None:
    notes = " ".join(audit["notes"])
    prose = " ".join(MEASURING.split())
    load_context = re.search(r"lists every scope name \(([\d,]+) tokens\)", notes)
    assert load_context is not None and f"costs {load_context.group(1)} tokens" in prose
    assert "capability index has a line per scope (0 tokens)" not in notes
    scoped = audit["billed_per_session"]["scoped (417 scopes, mean)"]
    eager = audit["billed_per_session"]["eager (all tools)"]
    assert f"{round(scoped['anthropic']):,} input-token equivalents" in prose
    assert f"{scoped['anthropic'] / eager['anthropic'] * 100:.1f} % of eager" in prose
    assert f"{audit['mean_tool_tokens']:,.0f} tokens on average" in prose
