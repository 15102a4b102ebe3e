"""The core stays small: what one call enters and what a default agent loads (issue 38 goals),
measured by `benchmarks/trace_call.py` in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_traced_calls_stay_within_the_goals() -> None:
    out = subprocess.run(
        [sys.executable, "benchmarks/trace_call.py", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    report = json.loads(out.stdout)
    files = {name: phase["files"] for name, phase in report["phases"].items()}
    assert files["first model call of a turn"] <= 8
    assert files["a later model call"] <= 6
    assert files["a refused call of a hidden tool"] <= 5
    assert report["lines_loaded"] <= 2500
    assert all(m.count(".") <= 1 for m in report["modules_loaded"])  # no add-on loaded
