"""Multi-turn sessions for the billed-cost benchmark: user turns over one to three servers of
the simulated catalog, with the model's tool arguments, realistic tool outputs and answers.

Everything is seeded per session and generated turn by turn, so the first t turns of a
30-turn session are exactly the t-turn session (one run gives the cost curve over session
length), and every strategy sees the same outputs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.simulate.tasks import Task, Turn, first_turn, next_turn

OUTPUT_TOKENS: dict[str, tuple[int, int]] = {
    "github": (250, 1500),
    "filesystem": (150, 1200),
    "database": (100, 900),
    "slack": (150, 800),
    "web": (400, 2000),
    "jira": (200, 1000),
}
"""Range (tokens, about 4 characters each) of a tool output, by server: an issue or a pull
request with its comments, a file, query rows, a channel's messages, a fetched page, a ticket."""

CALL_SECONDS = 4.0
"""Seconds between two model calls of one turn (generation plus the tool run)."""

TURN_GAP_SECONDS = 60.0
"""Seconds between the end of one user turn and the next user message (within the 5-minute
cache lifetime; longer gaps can be set on the command line)."""

_WORDS = (
    "the build release branch deploy config owner review change merged open closed pending "
    "customer report weekly error timeout retry user team channel thread summary update note "
    "page section table row column index query result value count total latest previous "
    "draft final status check failed passed warning label priority sprint ticket comment file "
    "folder path line version request response header cache limit token access project board "
    "service database backup schema migration log metric alert incident owner date time link"
).split()


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))


def tool_output(tool: str, server: str, key: str) -> str:
    """A seeded JSON result of `tool` (a list of records), sized by `OUTPUT_TOKENS[server]`."""
    rng = random.Random(f"output:{key}:{tool}")
    low, high = OUTPUT_TOKENS.get(server, (150, 1000))
    target = rng.randint(low, high) * 4
    records: list[dict[str, Any]] = []
    size = 0
    while size < target:
        record = {
            "id": rng.randint(1, 99_999),
            "title": _words(rng, 3, 8).capitalize(),
            "text": _words(rng, 10, 40) + ".",
            "updated": f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}",
        }
        records.append(record)
        size += len(json.dumps(record))
    return json.dumps({"tool": tool, "results": records}, ensure_ascii=False)


_ARG_VALUES = {
    "string": ("acme/web", "main", "deploy-fix", "Q3 report", "#deploys", "orders", "PROJ-142"),
    "integer": (7, 42, 128, 311, 1024),
}


def tool_arguments(spec: ToolSpec, key: str) -> dict[str, Any]:
    """Seeded arguments for `spec`'s required parameters (what the model would send)."""
    rng = random.Random(f"args:{key}:{spec.name}")
    properties = (spec.parameters or {}).get("properties", {})
    out: dict[str, Any] = {}
    for name in (spec.parameters or {}).get("required", []):
        kind = properties.get(name, {}).get("type", "string")
        if kind == "integer":
            out[name] = rng.choice(_ARG_VALUES["integer"])
        elif kind == "boolean":
            out[name] = True
        elif kind == "array":
            out[name] = [rng.choice(_ARG_VALUES["string"])]
        elif kind == "object":
            out[name] = {}
        else:
            out[name] = rng.choice(_ARG_VALUES["string"])
    return out


def answer_text(key: str) -> str:
    """The model's closing answer of a turn (20-80 words)."""
    rng = random.Random(f"answer:{key}")
    return _words(rng, 20, 80).capitalize() + "."


@dataclass(frozen=True)
class Session:
    """A session: its turns (with needed tools) and the agent state it runs in."""

    id: str
    task: Task

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The user turns in order."""
        return self.task.turns


def build_sessions(seed: int = 0, n: int = 20, turns: int = 10) -> list[Session]:
    """`n` sessions of exactly `turns` user turns each, deterministic for `seed`."""
    if n < 1 or turns < 1:
        msg = f"need at least one session of at least one turn, got n={n}, turns={turns}"
        raise ValueError(msg)
    out: list[Session] = []
    for i in range(n):
        rng = random.Random(f"sessions:{seed}:{i}")
        servers, first = first_turn(rng)
        made: list[Turn] = [first]
        last_slot: str | None = None
        while len(made) < turns:
            turn, last_slot = next_turn(rng, servers, made[-1], last_slot)
            made.append(turn)
        sid = f"session-{i:03d}"
        task = Task(sid, "session", tuple(made), {"db_write_access": True})
        out.append(Session(sid, task))
    return out
