"""Scopes: which tools belong to which context, validated once, queried on every model call.

Framework-free: tool objects are kept as given (LangChain tools, plain functions) and named
without converting them; the middleware turns them into LangChain tools once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from attention_scoping.common.blast_radius import tool_listing, writes
from attention_scoping.common.text import did_you_mean_hint, listing
from attention_scoping.common.tool import tool_object_name

if TYPE_CHECKING:
    from attention_scoping.adapters.tools import ToolLike

LOAD_CONTEXT = "load_context"
"""Name of the navigation tool the model calls to switch scope; always visible."""

_SCOPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

ToolScopes: TypeAlias = Mapping[str, Iterable[str]]
"""The plain form of a scope map: `TOOL_SCOPES = {"math": {"calculate", ...}, ...}`."""


class ScopeConfigError(ValueError):
    """A scope configuration names something that does not exist or is given twice."""


class UnknownScopeError(ValueError):
    """State names an `active_context` that is not a configured scope."""


def _closest(value: str, valid: Iterable[str]) -> str:
    """A ' (did you mean ...?)' hint, or an empty string."""
    return did_you_mean_hint(value, valid)


def _listing(values: Iterable[str], limit: int = 40) -> str:
    """A sorted, bounded listing of `values` for error messages."""
    return listing([repr(v) for v in sorted(values)], limit)


@dataclass(frozen=True)
class Scope:
    """One context of the agent: its tools, a one-line description and its prompt module.

    `tools` accepts tool names or tool objects (LangChain tools or plain functions); objects are
    kept as given so the middleware can register them with the agent.

    Example:
        ```python
        Scope("math", "arithmetic and unit conversion", tools=[calculate, convert_units],
              prompt=Path("prompts/math.md").read_text())
        ```
    """

    name: str
    description: str = ""
    tools: tuple[str, ...] = ()
    prompt: str = ""
    tool_objects: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def __init__(
        self,
        name: str,
        description: str = "",
        tools: Iterable[str | ToolLike] = (),
        prompt: str = "",
    ) -> None:
        """Build a scope; tool objects are kept and named (a function by its `__name__`)."""
        if not isinstance(name, str) or not _SCOPE_NAME.match(name):
            msg = (
                f"invalid scope name {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
                "starting with a letter or digit"
            )
            raise ScopeConfigError(msg)
        if isinstance(tools, str):
            msg = f"scope {name!r}: tools must be a collection of names, not the string {tools!r}"
            raise ScopeConfigError(msg)
        names: list[str] = []
        seen: set[str] = set()
        objects: list[Any] = []
        for item in tools:
            if isinstance(item, str):
                tname = item
            else:
                tname = tool_object_name(item)
                objects.append(item)
            if tname in seen:
                msg = f"scope {name!r} lists tool {tname!r} twice"
                raise ScopeConfigError(msg)
            names.append(tname)
            seen.add(tname)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "description", " ".join(description.split()))
        object.__setattr__(self, "tools", tuple(names))
        object.__setattr__(self, "prompt", prompt.strip())
        object.__setattr__(self, "tool_objects", tuple(objects))


ScopesInput: TypeAlias = "Sequence[Scope] | ToolScopes | ScopeCatalog"


class ScopeCatalog:
    """The validated set of scopes plus always-on tools and the default scope.

    Pure and framework-free: the middleware, the graph nodes and the audit command all query it.
    """

    def __init__(
        self,
        scopes: Sequence[Scope] | ToolScopes,
        *,
        always_on: Iterable[str | ToolLike] = (),
        default_scope: str | None = None,
        tools: Iterable[ToolLike] | None = None,
    ) -> None:
        """Validate `scopes` (list of `Scope` or plain `TOOL_SCOPES` dict).

        Args:
            scopes: `Scope` objects, or a mapping of scope name to tool names.
            always_on: Tools visible in every scope besides `load_context`.
            default_scope: Scope used when state has no `active_context` (None: unscoped).
            tools: Every tool the agent can run. When given (or when scopes carry tool
                objects), every tool name in the scopes is checked against it now.

        Raises:
            ScopeConfigError: An unknown tool, an unknown default scope, a duplicate scope,
                or two different tools sharing one name.
        """
        parsed = self._parse(scopes)
        if not parsed:
            msg = "at least one scope is required"
            raise ScopeConfigError(msg)
        self.scopes: dict[str, Scope] = {}
        for scope in parsed:
            if scope.name in self.scopes:
                msg = f"duplicate scope name {scope.name!r}"
                raise ScopeConfigError(msg)
            self.scopes[scope.name] = scope

        registry: dict[str, Any] = {}
        for obj in [t for s in parsed for t in s.tool_objects]:
            self._register(registry, obj)
        always_names, always_as_names = self._always_on(registry, always_on)
        known: set[str] | None = None
        if tools is not None:
            for item in tools:
                if not isinstance(item, Mapping):
                    self._register(registry, item)
            known = set(registry)
        elif not always_as_names and all(len(s.tool_objects) == len(s.tools) for s in parsed):
            known = set(registry)

        self.tool_objects: dict[str, Any] = registry
        """Tool objects known at construction, by name (to be registered with the agent)."""
        self.always_on: tuple[str, ...] = tuple(always_names)
        self._index: dict[str, tuple[str, ...]] = {}
        for scope in parsed:
            for tname in scope.tools:
                self._index.setdefault(tname, ())
                self._index[tname] += (scope.name,)

        if default_scope is not None and default_scope not in self.scopes:
            msg = (
                f"unknown default_scope {default_scope!r}{_closest(default_scope, self.scopes)}; "
                f"valid scopes: {_listing(self.scopes)}"
            )
            raise ScopeConfigError(msg)
        self.default_scope = default_scope
        self._visible: dict[str | None, frozenset[str]] = {
            None: frozenset(self.always_on),
            **{
                name: frozenset(self.always_on) | frozenset(s.tools)
                for name, s in self.scopes.items()
            },
        }
        self.scoped_names: frozenset[str] = frozenset(self._index) | frozenset(self.always_on)
        """Every tool name some scope or the always-on set names."""
        self.writing: frozenset[str] = frozenset(n for n, t in registry.items() if writes(t))
        """Scoped tools known to write (from the tool objects; `add_writes` adds those known
        later): the text code writes about a scope counts them, never names them."""
        self.validated = False
        if known is not None:
            self.validate_tools(known | {LOAD_CONTEXT})

    @staticmethod
    def _parse(scopes: Sequence[Scope] | ToolScopes) -> list[Scope]:
        if isinstance(scopes, Mapping):
            return [Scope(name, tools=tools) for name, tools in scopes.items()]
        if isinstance(scopes, (str, bytes)):
            msg = "scopes must be a list of Scope objects or a dict of scope name -> tool names"
            raise ScopeConfigError(msg)
        out: list[Scope] = []
        for item in scopes:
            if not isinstance(item, Scope):
                msg = f"expected a Scope, got {type(item).__name__}: {item!r}"
                raise ScopeConfigError(msg)
            out.append(item)
        return out

    @classmethod
    def _always_on(
        cls, registry: dict[str, Any], always_on: Iterable[str | ToolLike]
    ) -> tuple[list[str], bool]:
        """Always-on names (`load_context` first), and whether any was given by name only."""
        names: list[str] = [LOAD_CONTEXT]
        by_name = False
        for item in always_on:
            if isinstance(item, str):
                tname = item
                by_name = by_name or item != LOAD_CONTEXT
            else:
                tname = cls._register(registry, item)
            if tname not in names:
                names.append(tname)
        return names, by_name

    @staticmethod
    def _register(registry: dict[str, Any], obj: Any) -> str:
        name = tool_object_name(obj)
        existing = registry.get(name)
        if existing is not None and existing is not obj:
            msg = f"two different tools are named {name!r}; tool names must be unique"
            raise ScopeConfigError(msg)
        registry[name] = obj
        return name

    def validate_tools(self, registered: Iterable[str]) -> None:
        """Check that every tool named by a scope or always-on is among `registered`.

        Raises:
            ScopeConfigError: naming the scope, the unknown tool and the registered tools.
        """
        known = set(registered) | {LOAD_CONTEXT}
        missing = [
            (f"scope {scope.name!r} names unknown tool {tname!r}", tname)
            for scope in self.scopes.values()
            for tname in scope.tools
        ]
        missing += [(f"always-on tool {t!r} is not registered", t) for t in self.always_on]
        missing = [(what, tname) for what, tname in missing if tname not in known]
        if missing:
            what, tname = missing[0]
            msg = f"{what}{_closest(tname, known)}; registered tools: {_listing(known)}"
            raise ScopeConfigError(msg)
        self.validated = True

    # -- queries used on every model / tool call -------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """Scope names in configuration order."""
        return tuple(self.scopes)

    def resolve(self, active: object) -> str | None:
        """The scope in force for `active` (the default scope when None).

        Raises:
            UnknownScopeError: `active` is set but names no scope (or is not a string).
        """
        if active is None or active == "":
            return self.default_scope
        if not isinstance(active, str):
            msg = (
                f"state holds an active_context of type {type(active).__name__} "
                f"({str(active)[:80]!r}); it must be a scope name or None. Valid scopes: "
                f"{_listing(self.scopes)}."
            )
            raise UnknownScopeError(msg)
        if active not in self.scopes:
            msg = (
                f"state names unknown active_context {active[:80]!r}"
                f"{_closest(active[:200], self.scopes)}; valid scopes: {_listing(self.scopes)}. "
                "Pass a valid active_context (or None) in the input to repair the thread."
            )
            raise UnknownScopeError(msg)
        return active

    def visible(self, scope: str | None) -> frozenset[str]:
        """Tool names the model may see and call in `scope` (a resolved scope name)."""
        return self._visible[scope]

    def scopes_offering(self, tool: str) -> tuple[str, ...]:
        """Scopes (in configuration order) whose tools include `tool`."""
        return self._index.get(tool, ())

    def is_scoped(self, tool: str) -> bool:
        """Whether some scope or the always-on set names `tool`."""
        return tool in self.scoped_names

    def add_writes(self, names: Iterable[str]) -> bool:
        """Learn that the scoped tools among `names` write (tools registered by name, whose
        objects arrive with the first request); True when `writing` grew."""
        grown = self.writing | (frozenset(names) & self.scoped_names)
        if grown == self.writing:
            return False
        self.writing = grown
        return True

    def describe(self, scope: str, writing: Iterable[str] = ()) -> str:
        """The scope's one-line description, or a listing of its tools when it has none; the
        tools in `writing` are counted, not named (what the model reads passes `self.writing`:
        code-written text never names a write, `core.blast_radius`)."""
        s = self.scopes[scope]
        if s.description:
            return s.description
        return tool_listing(s.tools, frozenset(writing), limit=6) or "no tools"

    def line(self, scope: str) -> str:
        """The scope's description as the model reads it (index, module, `load_context`):
        `describe` with the tools known to write counted, not named."""
        return self.describe(scope, self.writing)

    def closest_scope(self, name: str) -> str:
        """A ' (did you mean ...?)' hint for a mistyped scope name."""
        return _closest(name, self.scopes)
