"""Scopes and their catalog: which tools belong to which context, validated once.

A `Scope` names its tools (names or tool objects), a one-line description for the capability
index, its prompt module, and the tools it declares reads (`reads=`). `ScopeCatalog` validates a
list of scopes (or a plain `TOOL_SCOPES` dict) with did-you-mean errors and answers the queries
every model and tool call makes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from attention_scoping.errors import ScopeConfigError, UnknownScopeError, did_you_mean, listing
from attention_scoping.risk import declared_read

LOAD_CONTEXT = "load_context"
"""The navigation tool the model calls to switch scope; visible in every scope."""

STATE_KEY = "active_context"
"""The state key holding the active scope's name (None: unscoped)."""

ToolScopes: TypeAlias = Mapping[str, Iterable[str]]
"""The plain form of a scope map: `TOOL_SCOPES = {"math": {"calculate", ...}, ...}`."""

ToolLike: TypeAlias = Any
"""A LangChain tool or a plain function (turned into a tool as `create_agent` does)."""

_SCOPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def tool_object_name(tool: object) -> str:
    """The name a model calls `tool` by (a function's `__name__`), without converting it.

    Raises:
        ScopeConfigError: `tool` is a provider tool dict (it cannot run locally) or not a tool.
    """
    if isinstance(tool, Mapping):
        msg = f"provider tool dict {tool.get('name', tool.get('type'))!r} cannot run locally"
        raise ScopeConfigError(msg)
    name = getattr(tool, "name", None)
    if isinstance(name, str) and not callable(name):
        return name
    function_name = getattr(tool, "__name__", None)
    if callable(tool) and isinstance(function_name, str):
        return function_name
    msg = f"not a tool: {tool!r}"
    raise ScopeConfigError(msg)


def _text(scope: str, what: str, value: object) -> str:
    if not isinstance(value, str):
        msg = f"scope {scope!r}: {what} must be a string, not {type(value).__name__} {value!r}"
        raise ScopeConfigError(msg)
    return value


def _names(scope: str, what: str, items: object, name_of: Callable[[Any], str]) -> list[str]:
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        kind = "the string " if isinstance(items, str | bytes) else ""
        msg = f"scope {scope!r}: {what}s must be a list of tools or names, not {kind}{items!r}"
        raise ScopeConfigError(msg)
    names = [item if isinstance(item, str) else name_of(item) for item in items]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        msg = f"scope {scope!r} lists {what} {twice[0]!r} twice"
        raise ScopeConfigError(msg)
    return names


@dataclass(frozen=True, init=False)
class Scope:
    """One context of the agent: its tools, a one-line description, its prompt module, and the
    tools it declares reads (everything else may write, so code never opens it).

    Example:
        ```python
        Scope("billing", "invoices and refunds", tools=[get_invoice, refund],
              prompt=Path("prompts/billing.md").read_text(), reads=["get_invoice"])
        ```
    """

    name: str
    description: str
    tools: tuple[str, ...]
    prompt: str
    reads: frozenset[str]
    tool_objects: tuple[Any, ...] = field(compare=False, repr=False)

    def __init__(
        self,
        name: str,
        description: str = "",
        tools: Iterable[str | ToolLike] = (),
        prompt: str = "",
        reads: Iterable[str | ToolLike] = (),
    ) -> None:
        """Validate and build the scope.

        Raises:
            ScopeConfigError: a bad name, a non-string description or prompt, a tool listed
                twice, or a read that is not one of the scope's tools.
        """
        if not isinstance(name, str) or not _SCOPE_NAME.match(name):
            msg = (
                f"invalid scope name {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
                "starting with a letter or digit"
            )
            raise ScopeConfigError(msg)
        names = _names(name, "tool", tools, tool_object_name)
        read_names = _names(name, "read", reads, tool_object_name)
        unknown = [r for r in read_names if r not in names]
        if unknown:
            msg = (
                f"scope {name!r} declares {unknown[0]!r} a read, but it is not one of its "
                f"tools{did_you_mean(unknown[0], names)}; its tools: {listing(names)}"
            )
            raise ScopeConfigError(msg)
        object.__setattr__(self, "name", name)
        object.__setattr__(
            self, "description", " ".join(_text(name, "description", description).split())
        )
        object.__setattr__(self, "tools", tuple(names))
        object.__setattr__(self, "prompt", _text(name, "prompt", prompt).strip())
        object.__setattr__(self, "reads", frozenset(read_names))
        object.__setattr__(self, "tool_objects", tuple(t for t in tools if not isinstance(t, str)))


ScopesInput: TypeAlias = "Sequence[Scope] | ToolScopes | ScopeCatalog"


class ScopeCatalog:
    """The validated scopes, the always-on tools, the default scope, and the declared reads."""

    def __init__(
        self,
        scopes: Sequence[Scope] | ToolScopes,
        *,
        always_on: Iterable[str | ToolLike] = (),
        default_scope: str | None = None,
        tools: Iterable[ToolLike] | None = None,
    ) -> None:
        """Validate `scopes` (`Scope` objects, or a `TOOL_SCOPES` dict of name -> tool names).

        Args:
            scopes: The scopes, in the order the index and `load_context` list them.
            always_on: Tools visible in every scope besides `load_context` (the application
                chose them, so they show whatever their risk).
            default_scope: The scope in force while `active_context` is unset (None: none).
            tools: Every tool the scopes name, as objects (for a `TOOL_SCOPES` dict); given,
                every name is checked now.

        Raises:
            ScopeConfigError: no scope, a duplicate scope, an unknown default scope or tool,
                or two different tools sharing one name.
        """
        parsed = self._parse(scopes)
        self.scopes: dict[str, Scope] = {}
        for scope in parsed:
            if scope.name in self.scopes:
                msg = f"duplicate scope name {scope.name!r}"
                raise ScopeConfigError(msg)
            self.scopes[scope.name] = scope
        self.tool_objects: dict[str, Any] = {}
        """Tool objects known at construction, by name."""
        for obj in [t for s in parsed for t in s.tool_objects] + list(tools or ()):
            self._register(obj)
        names: list[str] = [LOAD_CONTEXT]
        always_on = list(always_on)
        for item in always_on:
            name = item if isinstance(item, str) else self._register(item)
            if name not in names:
                names.append(name)
        self.always_on: tuple[str, ...] = tuple(names)
        """`load_context` and the always-on tools, in order."""
        if default_scope is not None and default_scope not in self.scopes:
            msg = (
                f"unknown default_scope {default_scope!r}{did_you_mean(default_scope, self.scopes)}"
                f"; valid scopes: {listing(self.scopes)}"
            )
            raise ScopeConfigError(msg)
        self.default_scope = default_scope
        self._owners: dict[str, tuple[str, ...]] = {}
        for scope in parsed:
            for name in scope.tools:
                self._owners[name] = (*self._owners.get(name, ()), scope.name)
        self.scoped_names = frozenset(self._owners) | frozenset(self.always_on)
        """Every tool name a scope or the always-on set names."""
        declared = {r for s in parsed for r in s.reads}
        self.reads: frozenset[str] = frozenset(
            name
            for name in self._owners
            if declared_read(self.tool_objects.get(name), name, declared)
        )
        """Scoped tools declared reads at construction (by a scope or the tool's metadata)."""
        self.declared_reads = frozenset(declared)
        """The names scopes declare reads (`Scope.reads`), whatever their objects say."""
        self.checked = False
        """Whether every named tool was found among the registered ones (checked once: at
        construction when the objects are known, else at the first model call)."""
        by_name = any(len(s.tool_objects) < len(s.tools) for s in parsed) or any(
            isinstance(t, str) and t != LOAD_CONTEXT for t in always_on
        )
        if tools is not None or not by_name:
            self.check_tools(self.tool_objects)

    @staticmethod
    def _parse(scopes: object) -> list[Scope]:
        if isinstance(scopes, Mapping):
            return [Scope(name, tools=tools) for name, tools in scopes.items()]
        if isinstance(scopes, str | bytes) or not isinstance(scopes, Iterable):
            msg = "scopes must be a list of Scope objects or a dict of scope name -> tool names"
            raise ScopeConfigError(msg)
        out = list(scopes)
        bad = next((s for s in out if not isinstance(s, Scope)), None)
        if bad is not None:
            msg = f"expected a Scope, got {type(bad).__name__}: {bad!r}"
            raise ScopeConfigError(msg)
        if not out:
            msg = "at least one scope is required"
            raise ScopeConfigError(msg)
        return out

    def _register(self, tool: object) -> str:
        name = tool_object_name(tool)
        known = self.tool_objects.get(name)
        if known is not None and known is not tool:
            msg = f"two different tools are named {name!r}; tool names must be unique"
            raise ScopeConfigError(msg)
        self.tool_objects[name] = tool
        return name

    def check_tools(self, registered: Iterable[str]) -> None:
        """Check that every tool a scope or `always_on` names is among `registered`.

        Raises:
            ScopeConfigError: naming the scope, the unknown tool and the registered tools.
        """
        known = set(registered) | {LOAD_CONTEXT}
        for scope in self.scopes.values():
            for name in scope.tools:
                if name not in known:
                    msg = (
                        f"scope {scope.name!r} names unknown tool {name!r}"
                        f"{did_you_mean(name, known)}; registered tools: {listing(known)}"
                    )
                    raise ScopeConfigError(msg)
        for name in self.always_on:
            if name not in known:
                msg = f"always-on tool {name!r} is not registered; registered: {listing(known)}"
                raise ScopeConfigError(msg)
        self.checked = True

    @property
    def names(self) -> tuple[str, ...]:
        """Scope names in configuration order."""
        return tuple(self.scopes)

    def resolve(self, active: object) -> str | None:
        """The scope in force for a state's `active_context` (the default scope when unset).

        Raises:
            UnknownScopeError: `active` is set but names no scope.
        """
        if active is None or active == "":
            return self.default_scope
        if isinstance(active, str) and active in self.scopes:
            return active
        shown = repr(active)[:80]
        hint = did_you_mean(active, self.scopes) if isinstance(active, str) else ""
        msg = (
            f"state names unknown active_context {shown}{hint}; valid scopes: "
            f"{listing(self.scopes)}. Pass a valid active_context (or None) in the input."
        )
        raise UnknownScopeError(msg)

    def visible(self, scope: str | None) -> tuple[str, ...]:
        """Tool names visible in `scope` before the risk rule: its tools, then always-on ones."""
        own = self.scopes[scope].tools if scope is not None else ()
        return (*own, *(t for t in self.always_on if t not in own))

    def scopes_offering(self, tool: str) -> tuple[str, ...]:
        """Scopes (in configuration order) whose tools include `tool`."""
        return self._owners.get(tool, ())

    def is_read(self, name: str, tool: object = None) -> bool:
        """Whether `name` is a declared read (by a scope, the catalog's objects, or `tool`)."""
        if name in self.reads:
            return True
        obj = tool if tool is not None else self.tool_objects.get(name)
        return declared_read(obj, name, self.declared_reads)

    def describe(self, scope: str) -> str:
        """The scope's description, else its reads named and its other tools counted (text
        code writes never names a tool that may write)."""
        s = self.scopes[scope]
        if s.description:
            return s.description
        reads = [n for n in s.tools if n in self.reads]
        rest = len(s.tools) - len(reads)
        parts = ["tools: " + ", ".join(reads[:6]) + (", …" if len(reads) > 6 else "")] * bool(reads)
        if rest:
            parts.append(f"{rest} tool{'s' * (rest > 1)} that may change data")
        return " and ".join(parts) or "no tools"
