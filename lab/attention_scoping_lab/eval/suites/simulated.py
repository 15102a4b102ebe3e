"""The `simulated` suite: tasks over the 120-tool, six-server simulated benchmark.

Each task is a user request written from a tool's request template; its gold is the tool and
the values the user gave (each must appear in the call's arguments). Multi-step tasks chain two
requests on one or two servers. The catalog's tools are echoing stand-ins; scopes are servers.

Risk comes from each tool's verb (`simulate.catalog.verb_risk`, from the hand-written
descriptions): a write verb (`create`, `delete`, `post`, ...) gives the tool `risk="write"` in
its metadata; a read verb (`get`, `list`, `search`, ...) puts it in its scope's `reads=`, so a
scope the selector opens shows those; nothing else is called a read.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

from attention_scoping_lab.eval.suite import ANSWER_RULE, Suite
from attention_scoping_lab.eval.suites.spec_tools import spec_tools
from attention_scoping_lab.eval.tasks import EvalTask, Expect

_SLOT = re.compile(r"\{(\w+)\}")
DEFAULT_TASKS = 30


def _request(template: str, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    from attention_scoping_lab.simulate.servers import VALUES

    values: list[str] = []

    def pick(match: re.Match[str]) -> str:
        value = rng.choice(VALUES[match.group(1)])
        values.append(value)
        return value

    return _SLOT.sub(pick, template), tuple(values)


def simulated_suite(*, n_tasks: int = DEFAULT_TASKS, seed: int = 0) -> Suite:
    """`n_tasks` seeded tasks (two single-step for every multi-step) over the 120 tools."""
    from attention_scoping.scopes import Scope
    from attention_scoping_lab.simulate.catalog import build_catalog, simulated_reads, verb_risk
    from attention_scoping_lab.simulate.strategies import SCOPE_DESCRIPTIONS

    specs = [
        replace(s, risk="write") if verb_risk(s.name) == "write" else s for s in build_catalog(seed)
    ]
    tools, _ = spec_tools(specs)
    templates = {s.name: (s.server or "", _template(s.name)) for s in specs}
    rng = random.Random(f"eval-simulated:{seed}")
    names = sorted(templates)
    tasks: list[EvalTask] = []
    for i in range(n_tasks):
        steps = 2 if i % 3 == 2 else 1
        chosen = rng.sample(names, steps)
        if steps == 2:  # keep multi-step requests on the first tool's server half the time
            same = [n for n in names if templates[n][0] == templates[chosen[0]][0]]
            if rng.random() < 0.5 and len(same) > 1:
                chosen[1] = rng.choice([n for n in same if n != chosen[0]])
        parts = [_request(templates[n][1], rng) for n in chosen]
        text = ". Then ".join(p[0].rstrip(".?!") for p in parts) + "."
        expect = tuple(
            Expect(tools=(n,), mentions=p[1]) for n, p in zip(chosen, parts, strict=True)
        )
        kind = "multi" if steps == 2 else "single"
        tasks.append(EvalTask(f"sim-{kind}-{i:03d}", (text,), expect, tags=(kind,)))
    servers = sorted({s.server or "" for s in specs})
    scopes = [
        Scope(
            server,
            SCOPE_DESCRIPTIONS.get(server, server),
            tools=[s.name for s in specs if s.server == server],
            reads=simulated_reads(s.name for s in specs if s.server == server),
        )
        for server in servers
    ]
    return Suite(
        "simulated",
        tools=tools,
        tasks=tasks,
        scopes=scopes,
        system_prompt=ANSWER_RULE,
        notes="120 simulated tools (echoing stand-ins) on six servers; gold = tool + user values",
    )


def _template(name: str) -> str:
    from attention_scoping_lab.simulate.servers import SERVERS

    for server in SERVERS.values():
        for tool in server["tools"]:
            if tool[0] == name:
                return str(tool[4])
    msg = f"simulated tool {name!r} has no request template"
    raise KeyError(msg)
