"""The `example` suites: the example agent's three scopes (math, translation, weather).

Three task files over the same tools: `example.json`, the tuning half (strategies and defaults
were tuned on it), `example-heldout.json`, the held-out half (`--suite example-heldout`: written
afterwards and never tuned on; report its figures apart), and `defaults.json`, the tasks the
default is chosen on (issue 38): 48 tasks written after both, in two fixed halves stratified by
kind, `--suite defaults-tuning` to choose on and `--suite defaults-report` to report.

Weather runs against an offline fake of Open-Meteo, so the suite needs no network besides the
model. Needs the repository's `agents/` package (run from a clone).

`distractors=N` adds N tools no task needs, drawn from the simulated benchmark's servers
(GitHub, Jira, Slack, ...) and trimmed to their first sentence and required parameters, each
server a scope: the "many irrelevant tools" condition in which small models lose accuracy.

Reads are declared where the tools are: the example agent's tools carry `metadata={"risk":
"read"}` (`agents/*.py`); a distractor is declared by its verb (`simulate.catalog.verb_risk`: a
write verb gives `risk="write"` in its metadata, a read verb puts it in its scope's `reads=`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_scoping_lab.eval.suite import ANSWER_RULE, Suite
from attention_scoping_lab.eval.suites.offline_weather import offline_weather
from attention_scoping_lab.eval.tasks import load_tasks

if TYPE_CHECKING:
    from attention_scoping.common.tool import Risk

TASKS_FILE = Path(__file__).with_name("example.json")
"""The tuning half of the example agent's tasks."""
HELDOUT_FILE = Path(__file__).with_name("example-heldout.json")
"""The held-out half: tasks no strategy or default was tuned on."""
DEFAULTS_FILE = Path(__file__).with_name("defaults.json")
"""The tasks the default is chosen on: split `tuning` to choose, split `report` to report."""
SUITE_FILES = {
    "example": TASKS_FILE,
    "example-heldout": HELDOUT_FILE,
    "defaults-tuning": DEFAULTS_FILE,
    "defaults-report": DEFAULTS_FILE,
}
"""The example suites by name: their task file."""
SUITE_SPLITS = {"defaults-tuning": "tuning", "defaults-report": "report"}
"""The suites that are one split of their file."""


def _distractors(n: int, seed: int) -> tuple[list[Any], list[Any]]:
    """`n` trimmed simulated tools (round-robin over the servers) and one scope per server."""
    from attention_scoping.common.tool import ToolSpec
    from attention_scoping.scopes import Scope
    from attention_scoping_lab.eval.suites.spec_tools import spec_tools
    from attention_scoping_lab.simulate.catalog import build_catalog
    from attention_scoping_lab.simulate.strategies import SCOPE_DESCRIPTIONS

    by_server: dict[str, list[ToolSpec]] = {}
    for spec in build_catalog(seed):
        by_server.setdefault(spec.server or "other", []).append(spec)
    rng = random.Random(f"distractors:{seed}")
    for specs in by_server.values():
        rng.shuffle(specs)
    picked: list[ToolSpec] = []
    while len(picked) < n and any(by_server.values()):
        for specs in by_server.values():
            if specs and len(picked) < n:
                picked.append(_trim(specs.pop()))
    tools, _ = spec_tools(picked)
    scopes = [
        Scope(
            server,
            SCOPE_DESCRIPTIONS.get(server, server),
            tools=[s.name for s in picked if s.server == server],
            reads=[s.name for s in picked if s.server == server and not s.is_write],
        )
        for server in dict.fromkeys(s.server or "other" for s in picked)
    ]
    return tools, scopes


def _risk(name: str) -> Risk:
    """The declared risk of a simulated tool `server_verb_object`, from its verb
    (`simulate.catalog.verb_risk`); a verb of neither list counts as a write."""
    from attention_scoping_lab.simulate.catalog import verb_risk

    return "read" if verb_risk(name) == "read" else "write"


def _trim(spec: Any) -> Any:
    """The spec with its first sentence and required parameters only (~80 tokens), its risk
    declared."""
    from attention_scoping.common.tool import ToolSpec, summarize

    params = spec.parameters
    required = list(params.get("required") or [])
    props = {k: v for k, v in (params.get("properties") or {}).items() if k in required}
    schema = {"type": "object", "properties": props, "required": required}
    return ToolSpec(
        spec.id,
        spec.name,
        summarize(spec.description),
        schema,
        spec.server,
        risk=_risk(spec.name),
    )


def named_suite(name: str, tasks_file: str | Path | None = None, **options: Any) -> Suite:
    """The example suite called `name` (`SUITE_FILES`): its file (or `tasks_file`) and, for a
    `defaults-*` suite, its split."""
    return example_suite(
        tasks_file or SUITE_FILES[name], name=name, split=SUITE_SPLITS.get(name), **options
    )


def example_suite(
    tasks_file: str | Path = TASKS_FILE,
    *,
    distractors: int = 0,
    seed: int = 0,
    name: str = "example",
    split: str | None = None,
) -> Suite:
    """The example agent's tools and scopes with the tasks of `tasks_file` (+ distractors);
    `name` names the suite in reports (`example-heldout` for `HELDOUT_FILE`); `split` keeps the
    tasks of one split (`tuning` or `report` of `DEFAULTS_FILE`).

    Raises:
        ValueError: no task of the file is in `split`.
    """
    try:
        from agents import CORE_PROMPT, build_scopes
    except ImportError as exc:
        msg = (
            "the example suite needs the repository's agents/ package: run the command from a "
            f"clone of the repository ({exc})"
        )
        raise ImportError(msg) from exc
    scopes: list[Any] = build_scopes()
    tools: list[Any] = [tool for scope in scopes for tool in scope.tool_objects]
    tasks = load_tasks(tasks_file)
    if split is not None:
        tasks = [t for t in tasks if t.split == split]
        if not tasks:
            msg = f"{tasks_file}: no task has split {split!r}"
            raise ValueError(msg)
    notes = "weather answers come from an offline fake of Open-Meteo"
    if distractors:
        extra_tools, extra_scopes = _distractors(distractors, seed)
        tools += extra_tools
        scopes += extra_scopes
        notes += f"; {len(extra_tools)} distractor tools no task needs"
    return Suite(
        name,
        tools=tools,
        tasks=tasks,
        scopes=scopes,
        system_prompt=f"{CORE_PROMPT.strip()}\n- {ANSWER_RULE}",
        environment=offline_weather,
        notes=notes,
    )
