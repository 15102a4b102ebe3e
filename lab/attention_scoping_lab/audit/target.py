"""What `audit` audits: a catalog file, an OpenAI tools file, an MCP client configuration, or
Python objects named `module:attribute` (a list of LangChain tools, a `TOOL_SCOPES` dict, a
list of `Scope`s, a `ScopeCatalog`, an `AttentionScopingMiddleware`, or a function returning
one of these).

Each target also says which tools nobody classified (`AuditTarget.unclassified`): neither a
declared read (`metadata={"risk": "read"}`, MCP `readOnlyHint: true`, `Scope(..., reads=[...])`)
nor a declared write (`attention_scoping.risk.unclassified`). Code never opens them, so a scope
the selector opens does not show them; `audit` lists them so they can be declared.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.tools import BaseTool

from attention_scoping.adapters.tools import specs_from_tools
from attention_scoping.common.tool import ToolSpec
from attention_scoping.errors import ScopeConfigError
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.risk import unclassified
from attention_scoping.scopes import LOAD_CONTEXT, Scope, ScopeCatalog
from attention_scoping_lab.catalog import load_catalog
from attention_scoping_lab.unique import first_repeated

_SCOPE_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


class TargetError(ValueError):
    """The audit target cannot be loaded; the message says what was expected."""


@dataclass
class AuditTarget:
    """A tool set to audit: its tools, and its scopes when it has some."""

    label: str
    specs: list[ToolSpec]
    scopes: dict[str, list[str]] | None = None
    """Scope name -> tool names (as the gate and the scoping middleware key them)."""
    scope_source: str = ""
    always_on: list[str] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unclassified: list[str] = field(default_factory=list)
    """Tools nobody declared a read or a write (sorted; always-on tools left out: the
    application chose them). Code never opens them; the model can, with `load_context`."""
    reads: list[str] = field(default_factory=list)
    """Tools the scopes declare reads (`Scope.reads`), besides those whose metadata does."""


def load_target(target: str, *, mcp_timeout: float = 30.0) -> AuditTarget:
    """Load `target`: a path to a `.jsonl` / `.json` file, an MCP client configuration
    (`{"mcpServers": ...}`, whose servers are started and listed), or `module:attribute`.

    Raises:
        CatalogError: a malformed catalog file (file and line named).
        TargetError: an import problem or an object that is not a tool set.
    """
    path = Path(target)
    from attention_scoping_lab.audit.mcp_target import (
        McpTargetError,
        mcp_target,
        read_mcp_config,
    )

    mcp_config = read_mcp_config(path)
    if mcp_config is not None:
        try:
            return AuditTarget(**mcp_target(path, mcp_config, timeout=mcp_timeout))
        except McpTargetError as exc:
            raise TargetError(str(exc)) from None
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") or path.exists():
        return _from_catalog(path)
    if ":" not in target:
        msg = (
            f"{target}: no such file; TARGET is a catalog .jsonl, a tools .json, or "
            "module:attribute (e.g. myagent.tools:ALL_TOOLS)"
        )
        raise TargetError(msg)
    module_name, _, attribute = target.partition(":")
    module = _import(module_name)
    value = _attribute(module, attribute, target)
    return _from_object(value, module, target)


def _from_catalog(path: Path) -> AuditTarget:
    specs = _unique_names(load_catalog(path))
    servers = [s.server for s in specs]
    # the bench format carries no risk: nobody classified any of its tools
    out = AuditTarget(label=str(path), specs=specs, unclassified=sorted(s.name for s in specs))
    if len({s for s in servers if s}) >= 2:
        scopes: dict[str, list[str]] = {}
        names: dict[str, str] = {}
        for spec in specs:
            server = spec.server or "unassigned"
            scope = names.setdefault(server, _scope_name(server, set(names.values())))
            scopes.setdefault(scope, []).append(spec.name)
        out.scopes = scopes
        out.scope_source = "the catalog's `server` field"
        out.descriptions = {v: f"tools of server {k}" for k, v in names.items() if k != v}
    return out


def _unique_names(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Specs whose names are unique: ids stand in for names when names collide."""
    if len({s.name for s in specs}) == len(specs):
        return specs
    return [replace(s, name=s.id) for s in specs]


def _scope_name(server: str, taken: set[str]) -> str:
    """A valid scope name for a server label (`bfcl/multiple/0` -> `bfcl_multiple_0`)."""
    base = _SCOPE_NAME_BAD.sub("_", server).strip("_.-")[:60] or "scope"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _import(module_name: str) -> ModuleType:
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # audit the user's own project from its root
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        msg = (
            f"cannot import {module_name!r}: {exc} "
            "(run from your project's root, or fix PYTHONPATH)"
        )
        raise TargetError(msg) from None
    except Exception as exc:
        msg = f"importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        raise TargetError(msg) from None


def _attribute(module: ModuleType, attribute: str, target: str) -> Any:
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            msg = (
                f"{target}: module {module.__name__!r} has no attribute {part!r}; "
                f"it has: {', '.join(names[:30])}"
            )
            raise TargetError(msg)
        value = getattr(value, part)
    return value


def _is_factory(value: Any) -> bool:
    """A plain function or method that takes no required argument (called to get the tools)."""
    if isinstance(value, BaseTool) or not (inspect.isfunction(value) or inspect.ismethod(value)):
        return False
    params = inspect.signature(value).parameters.values()
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in params
    )


def _from_object(value: Any, module: ModuleType, target: str) -> AuditTarget:
    if _is_factory(value):
        try:
            value = value()
        except Exception as exc:
            msg = f"{target}: calling it failed: {type(exc).__name__}: {exc}"
            raise TargetError(msg) from None
    if isinstance(value, AttentionScopingMiddleware):
        value = value.catalog
    if isinstance(value, ScopeCatalog):
        return _from_scope_catalog(value, target, "a ScopeCatalog")
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Scope) for v in value):
        return _from_scope_catalog(_scope_catalog(value, target), target, "Scope objects")
    if isinstance(value, Mapping):
        return _from_mapping(value, module, target)
    if isinstance(value, BaseTool):
        value = [value]
    if isinstance(value, (list, tuple)) and value:
        return _from_tools(list(value), target)
    msg = (
        f"{target} is a {type(value).__name__}; expected a list of tools, a TOOL_SCOPES dict, "
        "a list of Scope objects, a ScopeCatalog, or a function returning one"
    )
    raise TargetError(msg)


def _scope_catalog(scopes: Any, target: str, tools: Iterable[Any] | None = None) -> ScopeCatalog:
    try:
        return ScopeCatalog(scopes, tools=tools)
    except (ScopeConfigError, TypeError) as exc:
        msg = f"{target}: invalid scopes: {exc}"
        raise TargetError(msg) from None


def _shown(value: Any) -> str:
    """`value` in an error line: its type and a short repr."""
    text = " ".join(repr(value).split())
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def _check_items(items: list[Any], target: str) -> None:
    """Refuse a list of something other than LangChain tools (or tool dicts), or other than
    Scope objects when it holds one, naming the first item that is not one."""
    scopes = any(isinstance(item, Scope) for item in items)
    for index, item in enumerate(items):
        if scopes:
            wrong = not isinstance(item, Scope)
        else:
            wrong = not isinstance(item, (BaseTool, Mapping)) and not inspect.isfunction(item)
        if wrong:
            expected = "expected LangChain tools or Scope objects"
            msg = f"{target}: item {index} is {_shown(item)}; {expected}"
            raise TargetError(msg)


def _specs(tools: Iterable[Any], target: str) -> list[ToolSpec]:
    items = list(tools)
    _check_items(items, target)
    try:
        specs = specs_from_tools(items)
    except Exception as exc:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        msg = f"{target}: not a list of tools ({reason})"
        raise TargetError(msg) from None
    repeated = first_repeated(spec.name for spec in specs)
    if repeated is not None:
        msg = f"{target}: two tools are named {repeated!r}; tool names must be unique"
        raise TargetError(msg)
    return specs


def _from_tools(tools: list[Any], target: str) -> AuditTarget:
    """A plain list of tools: their specs, and those nobody classified."""
    specs = _specs(tools, target)
    by_name = dict(zip((s.name for s in specs), tools, strict=True))
    return AuditTarget(label=target, specs=specs, unclassified=unclassified(by_name))


def _from_scope_catalog(catalog: ScopeCatalog, target: str, source: str) -> AuditTarget:
    tools = [t for n, t in catalog.tool_objects.items() if n != LOAD_CONTEXT]
    named = {n for s in catalog.scopes.values() for n in s.tools} | set(catalog.always_on)
    missing = sorted(named - set(catalog.tool_objects) - {LOAD_CONTEXT})
    if missing:
        msg = (
            f"{target}: scopes name tools without their objects ({', '.join(missing[:8])}); pass "
            "Scope(..., tools=[tool objects]) or a ScopeCatalog built with tools=..."
        )
        raise TargetError(msg)
    always = set(catalog.always_on)
    scoped = {n: t for n, t in catalog.tool_objects.items() if n not in always}
    return AuditTarget(
        label=target,
        specs=_specs(tools, target),
        unclassified=unclassified(scoped, catalog.declared_reads),
        reads=sorted(catalog.declared_reads),
        scopes={name: list(s.tools) for name, s in catalog.scopes.items()},
        scope_source=source,
        always_on=[n for n in catalog.always_on if n != LOAD_CONTEXT],
        descriptions={name: s.description for name, s in catalog.scopes.items() if s.description},
        prompts={name: s.prompt for name, s in catalog.scopes.items() if s.prompt},
    )


def _module_tools(module: ModuleType) -> list[BaseTool]:
    """Every LangChain tool defined at module level, alone or in a list/tuple/dict."""
    found: dict[str, BaseTool] = {}
    for value in vars(module).values():
        items = value.values() if isinstance(value, Mapping) else value
        if isinstance(value, BaseTool):
            items = [value]
        elif not isinstance(value, (list, tuple, Mapping)):
            continue
        for item in items:
            if isinstance(item, BaseTool):
                found.setdefault(item.name, item)
    return list(found.values())


def _from_mapping(value: Mapping[Any, Any], module: ModuleType, target: str) -> AuditTarget:
    """A `TOOL_SCOPES` dict: scope -> tool names (objects found in the module) or tools."""
    if all(isinstance(v, BaseTool) for v in value.values()):
        return _from_tools(list(value.values()), target)
    scopes: dict[str, list[Any]] = {}
    for name, tools in value.items():
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            msg = f"{target}: scope {name!r} must map to a collection of tool names or tools"
            raise TargetError(msg)
        scopes[str(name)] = list(tools)
        wrong = next((t for t in scopes[str(name)] if not isinstance(t, (str, BaseTool))), None)
        if wrong is not None:
            msg = f"{target}: scope {name!r} lists {_shown(wrong)}; expected tool names or tools"
            raise TargetError(msg)
    names_only = all(isinstance(t, str) for tools in scopes.values() for t in tools)
    if names_only:
        catalog = _scope_catalog(
            {k: sorted(v) for k, v in scopes.items()}, target, tools=_module_tools(module)
        )
        source = f"TOOL_SCOPES (tool objects found in module {module.__name__!r})"
    else:
        catalog = _scope_catalog([Scope(k, tools=v) for k, v in scopes.items()], target)
        source = "a dict of scope -> tools"
    return _from_scope_catalog(catalog, target, source)
