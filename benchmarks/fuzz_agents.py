"""A longer property-based fuzzing run of the agents than CI's (see docs/reliability.md).

Runs `tests/test_fuzz_agents.py` with more examples per agent and prints the count and time.
`python benchmarks/fuzz_agents.py --examples 5000` (CI runs 700 per agent; both runs are
derandomised, so a larger count explores further along the same sequence).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000, help="examples per agent")
    args = parser.parse_args()
    env = {**os.environ, "FUZZ_EXAMPLES": str(args.examples), "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_fuzz_agents.py",
        ],
        cwd=ROOT,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - start
    total = 3 * args.examples
    print(
        f"{total:,} fuzzed runs (3 agents x {args.examples:,}) in {elapsed:.0f} s: "
        f"{'no invariant broken' if done.returncode == 0 else 'FAILED'}"
    )
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
