"""The simulated 120-tool catalog, sized to the paper's per-server token profile.

Each tool starts from its hand-written definition (`servers.py`, loading `data/*.json`); a
generator seeded with `seed` draws a target size around the server's profile mean (+/- 20 %,
averaging the mean), then adds the server's generic parameters and usage notes, in a seeded
order, until the tool's definition (measured with the real tokenizer, as providers receive it)
reaches the target (or drops its own optional parameters when it is already larger). The same
seed gives the same catalog, byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from typing import Any, Literal

from attention_scoping.common.tokens import TokenCounter, get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping_lab.simulate.servers import PRECONDITIONS, SERVERS

SPREAD = 0.2
"""Per-tool target sizes are drawn uniformly within +/- this share of the server's mean."""

PAPER_PROFILE = {name: server["profile"] for name, server in SERVERS.items()}
"""Server -> (tools, mean tokens per tool), as the paper gives them."""

WRITE_VERBS = frozenset(
    "add alter assign backup close create delete drop edit execute export fork insert invite "
    "kill link merge move pin post push release remove reply rerun schedule set start "
    "transition update upload write".split()
)
"""The verbs of the simulated tools that change something (`github_create_issue`,
`slack_post_message`, `db_export_query_csv`, which writes a file)."""

READ_VERBS = frozenset(
    "check describe directory explain extract fetch get image list news read run search "
    "summarize take".split()
)
"""The verbs of the simulated tools that only read (`github_get_issue`, `web_fetch_url`,
`db_run_select_query`, "a read-only SELECT"): each tool's hand-written description in
`data/*.json` says so. A tool whose verb is in neither set stays unclassified (may write)."""


def verb_risk(name: str) -> Literal["read", "write"] | None:
    """The risk a simulated tool `server_verb_object` declares by its verb (None: neither a
    read verb nor a write verb, so nobody classified it)."""
    parts = name.split("_")
    verb = parts[1] if len(parts) > 1 else ""
    if verb in WRITE_VERBS:
        return "write"
    return "read" if verb in READ_VERBS else None


def simulated_reads(names: Iterable[str]) -> list[str]:
    """The names among `names` whose verb declares a read (`verb_risk`), in order."""
    return [n for n in names if verb_risk(n) == "read"]


def _schema(server: dict[str, Any], required: list[str], optional: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key in [*required, *optional]:
        kind, text, extra = server["params"][key]
        properties[key] = {"type": kind, "description": text, **extra}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _tokens(name: str, description: str, schema: dict[str, Any], counter: TokenCounter) -> int:
    fn = {"name": name, "description": description, "parameters": schema}
    return counter.count(json.dumps({"type": "function", "function": fn}, ensure_ascii=False))


def _sized(
    server: dict[str, Any],
    tool: tuple[str, str, tuple[str, ...], tuple[str, ...], str],
    target: int,
    rng: random.Random,
    counter: TokenCounter,
) -> tuple[str, dict[str, Any]]:
    name, description, required, optional = tool[0], tool[1], list(tool[2]), list(tool[3])
    extras = [p for p in server["generic"] if p not in required and p not in optional]
    rng.shuffle(extras)
    notes = list(server["notes"])
    rng.shuffle(notes)
    size = _tokens(name, description, _schema(server, required, optional), counter)
    while size > target and optional:  # too big already: drop optional parameters from the end
        smaller = _tokens(name, description, _schema(server, required, optional[:-1]), counter)
        if target - smaller > size - target:
            break
        optional, size = optional[:-1], smaller
    while size < target and (extras or notes):
        if extras:
            candidate = [*optional, extras[0]]
            grown = _tokens(name, description, _schema(server, required, candidate), counter)
            if grown - target <= target - size:  # only if it brings us closer to the target
                optional = candidate
                extras.pop(0)
                size = grown
                continue
            extras.pop(0)
            continue
        longer = f"{description} {notes.pop(0)}"
        grown = _tokens(name, longer, _schema(server, required, optional), counter)
        if grown - target > target - size:
            break
        description, size = longer, grown
    return description, _schema(server, required, optional)


def build_catalog(seed: int = 0, counter: TokenCounter | None = None) -> list[ToolSpec]:
    """The 120 tools (ids = names, `server` = the server), deterministic for `seed`."""
    c = counter or get_counter()
    out: list[ToolSpec] = []
    for server_name, server in SERVERS.items():
        _, mean = server["profile"]
        draws = random.Random(f"{seed}:{server_name}")
        offsets = [draws.uniform(-SPREAD, SPREAD) for _ in server["tools"]]
        centre = sum(offsets) / len(offsets)  # targets average exactly the profile mean
        for tool, offset in zip(server["tools"], offsets, strict=True):
            rng = random.Random(f"{seed}:{tool[0]}")
            target = round(mean * (1 + offset - centre))
            description, schema = _sized(server, tool, target, rng, c)
            out.append(
                ToolSpec(
                    id=tool[0],
                    name=tool[0],
                    description=description,
                    parameters=schema,
                    server=server_name,
                    preconditions=PRECONDITIONS.get(tool[0]),
                )
            )
    return out


def to_jsonl(specs: list[ToolSpec]) -> str:
    """The catalog in the shared JSON-lines format (`bench` and `audit` read it)."""
    lines = []
    for s in specs:
        record: dict[str, Any] = {
            "id": s.id,
            "name": s.name,
            "description": s.description,
            "parameters": s.parameters,
            "server": s.server,
        }
        if s.preconditions:
            record["preconditions"] = s.preconditions
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"
