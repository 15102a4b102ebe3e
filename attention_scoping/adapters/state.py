"""The state keys a middleware writes, read from its `state_schema`, and the check that a
hand-built graph's state holds them.

`create_agent` merges every middleware's `state_schema` into the agent's state. A hand-built
`StateGraph` has only the schema its author wrote, and LangGraph drops a node's update to an
undeclared key silently: a middleware that writes a key it reads back later (the start set,
a gate decision) then misbehaves without an error. These helpers make that a build-time error
and build a state that holds every key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, get_type_hints

from langchain.agents.middleware.types import AgentState
from typing_extensions import TypedDict

__all__ = [
    "AGENT_ONLY_KEYS",
    "StateKeys",
    "StateSchemaError",
    "agent_state",
    "check_state_schema",
    "missing_keys",
    "schema_keys",
    "written_keys",
]

AGENT_ONLY_KEYS = frozenset(get_type_hints(AgentState, include_extras=True)) - {"messages"}
"""Keys of `create_agent`'s own state (`jump_to`, `structured_response`): its routing and its
structured output, which no hook run by `attention_scoping.scoping.nodes`'s nodes writes."""


class StateSchemaError(ValueError):
    """A hand-built graph's state schema lacks keys its middleware writes or reads back."""


def _hints(schema: Any) -> dict[str, Any]:
    """`schema`'s annotations as LangGraph reads them (extras kept: reducers, channels)."""
    if not isinstance(schema, type) or not hasattr(schema, "__annotations__"):
        msg = f"a state schema must be a class with annotations (a TypedDict), not {schema!r}"
        raise StateSchemaError(msg)
    return get_type_hints(schema, include_extras=True)


def written_keys(middleware: Any) -> dict[str, Any]:
    """Key -> annotation of the state `middleware` (an instance or a class) writes or reads
    back: its `state_schema`'s keys, `messages` included, without `create_agent`'s own."""
    schema = getattr(middleware, "state_schema", None)
    if schema is None:
        return {}
    return {k: v for k, v in _hints(schema).items() if k not in AGENT_ONLY_KEYS}


def schema_keys(state_schema: Any) -> frozenset[str]:
    """The keys a graph built as `StateGraph(state_schema)` has channels for."""
    return frozenset(k for k in _hints(state_schema) if k != "__slots__")


def _label(middleware: Any) -> str:
    name = getattr(middleware, "name", None)
    if isinstance(name, str) and name:
        return name
    return middleware.__name__ if isinstance(middleware, type) else type(middleware).__name__


def missing_keys(state_schema: Any, middleware: Iterable[Any]) -> dict[str, list[str]]:
    """Key -> names of the middleware that write it, for each key `state_schema` lacks."""
    have = schema_keys(state_schema)
    missing: dict[str, list[str]] = {}
    for mw in middleware:
        for key in written_keys(mw):
            if key not in have:
                missing.setdefault(key, []).append(_label(mw))
    return missing


def check_state_schema(
    state_schema: Any, middleware: Iterable[Any], *, needs: Iterable[str] = (), node: str = ""
) -> None:
    """Raise `StateSchemaError` naming every key `middleware` writes (and every key in `needs`)
    that `state_schema` does not declare; return None when it holds them all."""
    mws = list(middleware)
    missing = missing_keys(state_schema, mws)
    for key in needs:
        if key not in schema_keys(state_schema):
            missing.setdefault(key, []).append(node or "the node")
    if not missing:
        return
    named = "; ".join(f"{key!r} (written by {', '.join(who)})" for key, who in missing.items())
    where = f"{node}: " if node else ""
    schema = getattr(state_schema, "__name__", repr(state_schema))
    msg = (
        f"{where}the graph state {schema} has no key {named}. LangGraph drops an undeclared "
        "key silently, so the middleware would not see what it wrote. Subclass "
        "attention_scoping.scoping.nodes.ScopedAgentState, or build the state with "
        f"attention_scoping.scoping.nodes.agent_state({schema}, *middleware)."
    )
    raise StateSchemaError(msg)


class StateKeys:
    """The keys of one graph state, to check a node's update against at run time."""

    def __init__(self, state_schema: Any) -> None:
        self.keys = schema_keys(state_schema)
        self.name: str = getattr(state_schema, "__name__", repr(state_schema))

    def check_update(self, update: Mapping[str, Any], *, node: str) -> None:
        """Raise `StateSchemaError` when `update` writes a key the state lacks (a middleware
        wrote a key its `state_schema` does not declare: LangGraph would drop it)."""
        extra = sorted(k for k in update if k not in self.keys)
        if extra:
            msg = (
                f"{node}: a middleware wrote {', '.join(map(repr, extra))}, which the graph "
                f"state {self.name} does not declare (LangGraph would drop it); declare it in "
                "that middleware's state_schema and in the graph's state"
            )
            raise StateSchemaError(msg)


def agent_state(*parts: Any, name: str = "AgentGraphState") -> type[Any]:
    """A TypedDict holding every key of `parts`: state schemas (your graph's own state, first)
    and middleware (instances or classes, read through their `state_schema`). Annotations are
    kept as declared, so reducers (`add_messages`) and channels still apply; a key given twice
    keeps its first declaration. Without a `messages` key in the schemas, `AgentState`'s is used.
    """
    fields: dict[str, Any] = {}
    for part in parts:
        hints = written_keys(part) if hasattr(part, "state_schema") else _hints(part)
        for key, annotation in hints.items():
            fields.setdefault(key, annotation)
    fields.setdefault("messages", get_type_hints(AgentState, include_extras=True)["messages"])
    return TypedDict(name, fields)  # type: ignore[operator]
