"""Print the per-strategy figures of an `attention-scoping eval --json` file as a Markdown table.

python benchmarks/eval_table.py eval.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> None:
    """Print the table of one eval JSON file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    print(f"suite {data['suite']}, model {data['model']}")
    print()
    print(
        "| strategy | tasks | success | first tool right | wrong first tool | no tool | "
        "text-call replies | steps/task | input tok/task | cached tok/task | output tok/task | "
        "s/call (median) | s/task | s/task shared |"
    )
    print("|" + " --- |" * 14)
    for row in data["strategies"]:
        calls = sorted(
            s for t in data["tasks"] if t["strategy"] == row["strategy"] for s in t["call_seconds"]
        )
        median = calls[len(calls) // 2] if calls else 0.0
        per_task = [  # from the tasks, so files written before `seconds_per_task` work too
            sum(t["call_seconds"]) for t in data["tasks"] if t["strategy"] == row["strategy"]
        ]
        shared = row.get("seconds_per_shared_task")  # files written before it existed: none
        print(
            f"| {row['strategy']} | {row['tasks']} | {row['success']:.0%} | "
            f"{row['first_tool_right']:.0%} | {row['wrong_first_tool']:.0%} | "
            f"{row['no_tool']:.0%} | "
            f"{row['text_call_replies']} | {row['steps']:.1f} | {row['input_tokens']:,.0f} | "
            f"{row['cached_tokens']:,.0f} | {row['output_tokens']:,.0f} | "
            f"{row['seconds_per_call']:.1f} ({median:.1f}) | "
            f"{sum(per_task) / max(len(per_task), 1):.1f} | "
            f"{'-' if shared is None else format(shared, '.1f')} |"
        )
    if data.get("shared_tasks"):
        print()
        print(f"s/task shared: over the {len(data['shared_tasks'])} tasks every strategy completed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python benchmarks/eval_table.py EVAL.json")
    main(sys.argv[1])
