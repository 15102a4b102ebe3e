"""Names the model sees for MCP tools: `server__tool` under the capability-manifest rules.

A tool keeps its own name when that name is provider-safe and unique across the configured
servers (and does not shadow one of ours, like `load_context`); otherwise it is namespaced
`<namespace><SEPARATOR><tool>` exactly as `CapabilityManifest` names its tools, within the same
`MAX_NAME_LENGTH`. `naming="always"` namespaces every tool. Framework-free.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from attention_scoping.mcp.config import McpConfigError
from attention_scoping.safety.manifests import MAX_NAME_LENGTH, PROVIDER_SAFE_NAME, SEPARATOR

Naming = Literal["on_collision", "always"]
"""When tools get the `server__` prefix: only where names collide (default), or always."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_RUNS = re.compile(r"_{2,}")
_SCOPE_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def namespace_for(server: str, taken: Iterable[str] = ()) -> str:
    """A manifest-valid namespace for a server name (`"My Git!"` -> `"My-Git"`), unique in `taken`.

    Manifest namespaces start with a letter and use letters, digits, `-` and single `_` (never
    the separator, never a trailing `_`).
    """
    base = _RUNS.sub("_", _UNSAFE.sub("-", server)).strip("-_")
    base = re.sub(r"^[^A-Za-z]+", "", base)[:24].rstrip("-_") or "server"
    used = set(taken)
    name, n = base, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    return name


def scope_name_for(server: str, taken: Iterable[str] = ()) -> str:
    """A valid scope name for a server name, unique in `taken` (scope names allow `.` too)."""
    base = _SCOPE_BAD.sub("_", server).strip("_.-")[:60] or "server"
    used = set(taken)
    name, n = base, 2
    while name in used:
        name, n = f"{base}_{n}", n + 1
    return name


def server_names(servers: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each server's tool-name namespace and scope name, unique in configuration order.

    Returns:
        `({server: namespace}, {server: scope name})`.
    """
    namespaces: dict[str, str] = {}
    scope_names: dict[str, str] = {}
    for name in servers:
        namespaces[name] = namespace_for(name, namespaces.values())
        scope_names[name] = scope_name_for(name, scope_names.values())
    return namespaces, scope_names


def _safe_local(name: str) -> str:
    """A tool name reduced to provider-safe characters (`files/read.v2` -> `files-read-v2`)."""
    return _UNSAFE.sub("-", name).strip("-") or f"tool-{_digest(name)}"


def _fit(name: str, original: str) -> str:
    """`name` cut to `MAX_NAME_LENGTH` with a digest of `original` keeping it unique."""
    if len(name) <= MAX_NAME_LENGTH:
        return name
    suffix = f"-{_digest(original)}"
    return name[: MAX_NAME_LENGTH - len(suffix)].rstrip("-_") + suffix


def exposed_names(
    tools: Mapping[str, Sequence[str]],
    namespaces: Mapping[str, str],
    *,
    naming: Naming = "on_collision",
    reserved: Iterable[str] = (),
) -> dict[tuple[str, str], str]:
    """The model-facing name of every `(server, tool)`.

    Args:
        tools: Server name -> its tool names (as the server lists them).
        namespaces: Server name -> its namespace (`namespace_for`).
        naming: `"on_collision"` or `"always"`.
        reserved: Names taken by other tools of the agent (`load_context`, gateway tools).

    Returns:
        `{(server, tool): exposed name}`; every exposed name is provider-safe and unique.
    """
    if naming not in ("on_collision", "always"):
        msg = f"naming must be 'on_collision' or 'always', not {naming!r}"
        raise McpConfigError(msg)
    taken = set(reserved)
    counts = Counter(_safe_local(t) for names in tools.values() for t in names)
    out: dict[tuple[str, str], str] = {}
    for server, names in tools.items():
        for tool in names:
            local = _safe_local(tool)
            plain = naming == "on_collision" and counts[local] == 1 and local not in taken
            if plain and PROVIDER_SAFE_NAME.match(local):
                exposed = local
            else:
                exposed = _fit(f"{namespaces[server]}{SEPARATOR}{local}", f"{server}/{tool}")
            n = 2
            while exposed in taken:  # two raw names that reduce to one safe name
                exposed = _fit(f"{exposed}-{n}", f"{server}/{tool}/{n}")
                n += 1
            taken.add(exposed)
            out[(server, tool)] = exposed
    return out
