"""The `example` suite: the example agent's three scopes (math, translation, weather).

Weather runs against an offline fake of Open-Meteo, so the suite needs no network besides the
model. Needs the repository's `agents/` package (run from a clone).
"""

from __future__ import annotations

from pathlib import Path

from attention_scoping.measure.eval.suite import ANSWER_RULE, Suite
from attention_scoping.measure.eval.suites.offline_weather import offline_weather
from attention_scoping.measure.eval.tasks import load_tasks

TASKS_FILE = Path(__file__).with_name("example.json")


def example_suite(tasks_file: str | Path = TASKS_FILE) -> Suite:
    """The example agent's tools and scopes with the tasks of `tasks_file`."""
    try:
        from agents import CORE_PROMPT, build_scopes
    except ImportError as exc:
        msg = (
            "the example suite needs the repository's agents/ package: run the command from a "
            f"clone of the repository ({exc})"
        )
        raise ImportError(msg) from exc
    scopes = build_scopes()
    tools = [tool for scope in scopes for tool in scope.tool_objects]
    return Suite(
        "example",
        tools=tools,
        tasks=load_tasks(tasks_file),
        scopes=scopes,
        system_prompt=f"{CORE_PROMPT.strip()}\n- {ANSWER_RULE}",
        environment=offline_weather,
        notes="weather answers come from an offline fake of Open-Meteo",
    )
