"""The six simulated MCP servers: tool names, descriptions, parameters and how users ask.

Hand-written to resemble real servers (GitHub, a filesystem, a SQL database, Slack, web
search/fetch, Jira); the data lives in `data/<server>.json`, shipped inside the package, and
this module loads it into the shapes `catalog.py` and `tasks.py` use. `catalog.py` sizes each
tool to the paper's token profile by choosing optional parameters and usage notes from these
lists with a seeded generator.

A server file holds its `profile` (tools, mean tokens per tool, as the paper gives them), its
`params` (JSON-schema properties by name, plus the `shared_params` it takes from
`data/shared_params.json`), its `generic` parameters (pagination, formats, timeouts, ids: the
boilerplate real servers carry on every tool), usage `notes`, and its `tools`. Only generic
parameters and notes pad a tool to its size, so no tool gains parameters that belong to another
tool. A tool is `(name, description, required, optional, request)` here: `required`/`optional`
are keys of the server's `params`; `request` is how a user asks for it, with `{slots}` filled
from `VALUES` (`data/requests.json`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

Param = tuple[str, str, dict[str, Any]]
"""(JSON type, description, extra schema keys)."""

ToolDef = tuple[str, str, tuple[str, ...], tuple[str, ...], str]
"""(name, description, required params, optional params, user request template)."""

SERVER_NAMES = ("github", "filesystem", "database", "slack", "web", "jira")
"""The servers, in catalog order (`data/<name>.json` each)."""


def _load(name: str) -> Any:
    data = resources.files("attention_scoping_lab.simulate") / "data" / name
    return json.loads(data.read_text(encoding="utf-8"))


def _param(schema: dict[str, Any]) -> Param:
    extra = dict(schema)
    return (extra.pop("type"), extra.pop("description"), extra)


def _tool(tool: dict[str, Any]) -> ToolDef:
    return (
        tool["name"],
        tool["description"],
        tuple(tool["required"]),
        tuple(tool["optional"]),
        tool["request"],
    )


def _server(raw: dict[str, Any], shared: dict[str, Param]) -> dict[str, Any]:
    params = {name: shared[name] for name in raw["shared_params"]}
    params.update((name, _param(schema)) for name, schema in raw["params"].items())
    profile = raw["profile"]
    return {
        "profile": (profile["tools"], profile["mean_tokens"]),
        "params": params,
        "generic": list(raw["generic"]),
        "notes": list(raw["notes"]),
        "tools": [_tool(t) for t in raw["tools"]],
    }


_SHARED = {name: _param(schema) for name, schema in _load("shared_params.json").items()}
_RAW = {name: _load(f"{name}.json") for name in SERVER_NAMES}

SERVERS: dict[str, dict[str, Any]] = {name: _server(raw, _SHARED) for name, raw in _RAW.items()}
"""Server -> profile, params (name -> `Param`), generic params, notes and tools (`ToolDef`)."""

PRECONDITIONS: dict[str, dict[str, Any]] = {
    tool["name"]: tool["preconditions"]
    for raw in _RAW.values()
    for tool in raw["tools"]
    if "preconditions" in tool
}
"""Tools that need state the agent may not have (database writes need write access)."""

_REQUESTS = _load("requests.json")

VALUES: dict[str, list[str]] = _REQUESTS["values"]
"""Values for the `{slots}` of user requests."""

FOLLOW_UPS: tuple[str, ...] = tuple(_REQUESTS["follow_ups"])
"""Vague follow-up turns that repeat the previous turn's tool on another value."""

CHIT_CHAT: tuple[str, ...] = tuple(_REQUESTS["chit_chat"])
"""Turns that need no tool."""
