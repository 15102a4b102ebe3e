"""The 500 simulated tasks: single-step requests, multi-step requests, and 15-40-turn sessions.

Every task is a list of user turns; each turn names the tools it needs (its gold sequence,
empty for small talk). Requests are the servers' hand-written phrasings with slots filled from
`VALUES`; sessions stay on one to three servers, mixing new requests, vague follow-ups that
repeat the previous tool ("Do the same for #deploys."), two-tool turns and small talk. The
same seed gives the same tasks.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from attention_scoping_lab.simulate.servers import (
    CHIT_CHAT,
    FOLLOW_UPS,
    PRECONDITIONS,
    SERVERS,
    VALUES,
)

TaskKind = Literal["single", "multi", "session"]

MIX: dict[TaskKind, float] = {"single": 0.4, "multi": 0.4, "session": 0.2}
"""Share of each kind of task."""

SESSION_TURNS = (15, 40)
"""Inclusive range of turns in a session."""

_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Turn:
    """One user message and the tools that answer it, in order."""

    text: str
    tools: tuple[str, ...] = ()
    kind: str = "request"
    """`request` (one tool), `multi-step` (2-4 tools), `follow-up` (vague, repeats the previous
    turn's tool) or `small talk` (no tool)."""


@dataclass(frozen=True)
class Task:
    """A simulated task: its turns and the agent state it runs in."""

    id: str
    kind: TaskKind
    turns: tuple[Turn, ...]
    state: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def _fill(template: str, rng: random.Random) -> tuple[str, str | None]:
    """The template with its slots filled; also the value of the first slot (for follow-ups)."""
    first: list[str] = []

    def pick(match: re.Match[str]) -> str:
        value = rng.choice(VALUES[match.group(1)])
        first.append(match.group(1))
        return value

    text = _SLOT.sub(pick, template)
    return text, (first[0] if first else None)


_TOOLS = {t[0]: (server, t) for server, spec in SERVERS.items() for t in spec["tools"]}


def _request(name: str, rng: random.Random) -> tuple[str, str | None]:
    return _fill(_TOOLS[name][1][4], rng)


def _server_tools(server: str) -> list[str]:
    return [t[0] for t in SERVERS[server]["tools"]]


def _join(parts: list[str], rng: random.Random) -> str:
    glue = rng.choice([", then ", ". After that, ", " and then ", "; also "])
    parts = [p.rstrip("?.!") for p in parts]
    text = parts[0]
    for part in parts[1:]:
        text += glue + part[0].lower() + part[1:]
    return text + rng.choice(["", ".", " please."])


def _single(rng: random.Random, servers: list[str]) -> Turn:
    name = rng.choice(_server_tools(rng.choice(servers)))
    text, _ = _request(name, rng)
    return Turn(text, (name,))


def _multi(rng: random.Random, servers: list[str], steps: int) -> Turn:
    names: list[str] = []
    for _ in range(steps):
        pool = [n for n in _server_tools(rng.choice(servers)) if n not in names]
        names.append(rng.choice(pool))
    return Turn(_join([_request(n, rng)[0] for n in names], rng), tuple(names), "multi-step")


def _state(rng: random.Random, turns: list[Turn]) -> dict[str, Any]:
    """Write access to the database when a task needs it; otherwise by chance."""
    needs = any(t in PRECONDITIONS for turn in turns for t in turn.tools)
    return {"db_write_access": True if needs else rng.random() < 0.5}


def next_turn(
    rng: random.Random, servers: list[str], previous: Turn, last_slot: str | None
) -> tuple[Turn, str | None]:
    """The session's next turn after `previous`: small talk, a vague follow-up that repeats
    the previous tool, a two-tool request or a new request (and the slot it filled)."""
    roll = rng.random()
    if roll < 0.15:
        return Turn(rng.choice(CHIT_CHAT), kind="small talk"), last_slot
    if roll < 0.40 and previous.tools:
        name = previous.tools[-1]
        _, slot = _request(name, rng)
        slot = slot or last_slot or "term"
        value = rng.choice(VALUES[slot])
        return Turn(rng.choice(FOLLOW_UPS).format(value=value), (name,), "follow-up"), last_slot
    if roll < 0.55:
        return _multi(rng, servers, 2), last_slot
    name = rng.choice(_server_tools(rng.choice(servers)))
    text, slot = _request(name, rng)
    return Turn(text, (name,)), slot


def first_turn(rng: random.Random) -> tuple[list[str], Turn]:
    """A session's one to three servers and its opening request."""
    servers = rng.sample(list(SERVERS), rng.randint(1, 3))
    return servers, _single(rng, servers)


def _session(rng: random.Random) -> list[Turn]:
    servers, first = first_turn(rng)
    turns: list[Turn] = [first]
    last_slot: str | None = None
    for _ in range(rng.randint(*SESSION_TURNS) - 1):
        turn, last_slot = next_turn(rng, servers, turns[-1], last_slot)
        turns.append(turn)
    return turns


def build_tasks(seed: int = 0, n: int = 500) -> list[Task]:
    """`n` tasks in the `MIX` proportions, deterministic for `seed`."""
    rng = random.Random(f"tasks:{seed}")
    counts = {kind: round(n * share) for kind, share in MIX.items()}
    counts["single"] += n - sum(counts.values())
    all_servers = list(SERVERS)
    out: list[Task] = []
    for kind, count in counts.items():
        for i in range(count):
            if kind == "single":
                turns = [_single(rng, all_servers)]
            elif kind == "multi":
                servers = rng.sample(all_servers, rng.randint(1, 2))
                turns = [_multi(rng, servers, rng.randint(2, 4))]
            else:
                turns = _session(rng)
            out.append(Task(f"{kind}-{i:03d}", kind, tuple(turns), _state(rng, turns)))
    return out
