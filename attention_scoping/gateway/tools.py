"""Progressive-disclosure gateway: search the catalog, fetch a schema, execute, with breadcrumbs.

For catalogs too large to scope by hand the model gets three tools instead of hundreds:
`search_tool_catalog(query)` (ranked one-line summaries), `get_tool_schema(tool_names)` (full
schemas) and `execute_tool(tool_name, arguments)` (validated with `jsonschema`, then run). Every
payload ends with a `next_step` naming the exact next call: after a rich schema the last thing the
model reads is "call execute_tool now, with these defaults, the gateway asks for approval", not
the schema (the seed's "broken breadcrumb trail"). Write tools pause for a human approval bound
to the exact arguments (`attention_scoping.approval.middleware`).

The payload builders (`search`, `schema`, `check`) are plain methods returning dicts; the three
LangChain tools are thin wrappers over them.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp
from pydantic import Field, WithJsonSchema

from attention_scoping.adapters.tools import ToolLike, as_base_tool, to_provider_schema
from attention_scoping.core.errors import render_payload
from attention_scoping.core.tool import summarize
from attention_scoping.safety.validation import check_arguments, compile_schema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from attention_scoping.approval.middleware import ApprovalGate

logger = logging.getLogger(__name__)

__all__ = [
    "EXECUTE_TOOL",
    "GATEWAY_PROMPT",
    "GET_TOOL_SCHEMA",
    "SEARCH_TOOL_CATALOG",
    "CatalogEntry",
    "GatewayConfigError",
    "Ranker",
    "ToolGateway",
    "lexical_ranker",
]

SEARCH_TOOL_CATALOG = "search_tool_catalog"
GET_TOOL_SCHEMA = "get_tool_schema"
EXECUTE_TOOL = "execute_tool"

Risk = Literal["read", "write"]
"""A tool either only reads (`read`) or changes something (`write`)."""

GATEWAY_PROMPT = f"""\
# Tool catalog
Most tools are behind a gateway. To use one: call `{SEARCH_TOOL_CATALOG}(query)` with what the \
user wants done, then `{GET_TOOL_SCHEMA}(tool_names=[...])` for the best match, then \
`{EXECUTE_TOOL}(tool_name, arguments)`. Follow the `next_step` of every gateway result. Fill \
arguments from the user's request and use the defaults the schema result names for anything \
the user did not say. Call write tools directly: do not ask the user to confirm or to list \
parameters, the gateway asks the user for approval itself. Ask the user only for a required \
value that cannot be inferred and has no default."""
"""Prompt text for the core layer of an agent using the gateway (add it to your core)."""


class GatewayConfigError(ValueError):
    """A gateway configuration names something twice, or a write tool has no approval gate."""


def _identifier_words(name: str) -> str:
    return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").split())


@dataclass(frozen=True)
class CatalogEntry:
    """One tool behind the gateway: its schema, its risk and the defaults the model may use.

    Rankers get a sequence of entries and may rely on `id`, `name`, `summary`, `description`
    and `parameters` (the same attributes as `attention_scoping.core.catalog.ToolSpec`).

    Example:
        ```python
        CatalogEntry.from_tool(scheduled_jobs, risk="write",
                               defaults={"schedule_time": "+30m", "folder": "reminders"})
        ```
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(hash=False, compare=False)
    tool: BaseTool = field(hash=False, compare=False, repr=False)
    risk: Risk = "read"
    requires_approval: bool = False
    defaults: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """Suggested values for parameters the user does not give (beyond the schema defaults)."""

    @classmethod
    def from_tool(
        cls,
        tool: ToolLike,
        *,
        risk: Risk | None = None,
        requires_approval: bool | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> CatalogEntry:
        """Build an entry; unset options are read from `tool.metadata` (`risk`,
        `requires_approval`, `defaults`), then default to a read tool without approval.

        A write tool requires approval unless `requires_approval=False` is explicit.

        Raises:
            GatewayConfigError: an unknown risk, or defaults naming unknown parameters.
        """
        base = as_base_tool(tool)
        meta = base.metadata or {}
        risk = risk or meta.get("risk") or "read"
        if risk not in ("read", "write"):
            msg = f"tool {base.name!r}: risk must be 'read' or 'write', not {risk!r}"
            raise GatewayConfigError(msg)
        if requires_approval is None:
            requires_approval = bool(meta.get("requires_approval", risk == "write"))
        spec = to_provider_schema(base)["function"]
        params = dict(spec.get("parameters") or {"type": "object", "properties": {}})
        hints = dict(defaults if defaults is not None else meta.get("defaults") or {})
        unknown = sorted(set(hints) - set(params.get("properties", {})))
        if unknown:
            valid = ", ".join(sorted(params.get("properties", {}))) or "none"
            msg = f"tool {base.name!r}: defaults for unknown parameters {unknown}; valid: {valid}"
            raise GatewayConfigError(msg)
        return cls(
            name=base.name,
            description=str(spec.get("description") or ""),
            parameters=params,
            tool=base,
            risk=risk,
            requires_approval=requires_approval,
            defaults=hints,
        )

    @property
    def id(self) -> str:
        """The entry's id (its name), as catalog rankers expect."""
        return self.name

    @property
    def summary(self) -> str:
        """One-line summary: the first sentence of the description."""
        return summarize(self.description)

    @property
    def properties(self) -> Mapping[str, Any]:
        """The schema's top-level properties."""
        props = self.parameters.get("properties")
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> list[str]:
        """Required parameters, in schema order."""
        names = set(self.parameters.get("required") or ())
        return [p for p in self.properties if p in names]

    def suggested_defaults(self) -> dict[str, Any]:
        """Defaults for optional parameters: the gateway's hints, then the schema's own."""
        out: dict[str, Any] = {}
        for pname, spec in self.properties.items():
            if pname in self.defaults:
                out[pname] = self.defaults[pname]
            elif isinstance(spec, Mapping) and "default" in spec:
                out[pname] = spec["default"]
        return out

    def critical(self) -> list[str]:
        """Required parameters without any default: the values only the user can give."""
        defaults = self.suggested_defaults()
        return [p for p in self.required if p not in defaults]

    def disclosure(self) -> dict[str, Any]:
        """What `get_tool_schema` shows of this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
            "risk": self.risk,
            "requires_approval": self.requires_approval,
            "defaults": self.suggested_defaults(),
        }


Ranker = Callable[[str, Sequence[CatalogEntry]], list[tuple[str, float]]]
"""(query, entries) -> [(tool name, score)], best first; scores > 0 count as matches."""

# -- lexical fallback ranker -------------------------------------------------------------------
# FALLBACK ONLY: used when `attention_scoping.gating.default_ranker` is not available. The gating
# package's BM25 / embedding rankers replace it; keep this small and dependency-free.

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP_TEXT = """
    a an and at by can for i in is it me my of on please the to with you
"""
_STOP = frozenset(_STOP_TEXT.split())


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in _STOP]


def lexical_ranker(query: str, entries: Sequence[CatalogEntry]) -> list[tuple[str, float]]:
    """Fallback ranking: IDF-weighted overlap of query words with each tool's name words
    (counted twice) and description. Small on purpose; the gating package's BM25 replaces it."""
    docs = {
        e.name: Counter(_tokens(_identifier_words(e.name)) * 2 + _tokens(e.description))
        for e in entries
    }
    df: Counter[str] = Counter()
    for counts in docs.values():
        df.update(set(counts))
    n = max(len(docs), 1)
    query_words = set(_tokens(query))
    scored: list[tuple[str, float]] = []
    for name, counts in docs.items():
        length = math.sqrt(sum(counts.values()) or 1)
        score = sum(
            math.log(1 + n / df[w]) * (1 + math.log(counts[w])) for w in query_words if counts[w]
        )
        if score > 0:
            scored.append((name, round(score / length, 4)))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def resolve_ranker(ranker: Ranker | None) -> tuple[Ranker, str]:
    """The ranker to use and its label: `ranker`, else the gating package's default, else
    the lexical fallback."""
    if ranker is not None:
        return ranker, getattr(ranker, "__name__", type(ranker).__name__)
    try:
        from attention_scoping.gating.catalog_ranker import default_ranker
    except ImportError:  # the `gate` extra is not installed
        return lexical_ranker, "lexical (fallback)"
    try:
        return default_ranker(), "gating.default_ranker"
    except Exception as exc:  # an optional encoder missing, say: degrade, loudly
        logger.warning("gating.default_ranker() failed (%s); using the lexical fallback", exc)
        return lexical_ranker, "lexical (fallback)"


# -- the gateway -------------------------------------------------------------------------------

Allow = Callable[[CatalogEntry, Mapping[str, Any]], bool]
"""(entry, graph state) -> whether this caller may see and run the tool."""


def _call(name: str, **kwargs: Any) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in kwargs.items())
    return f"{name}({args})"


def _render_default(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if hasattr(value, "model_dump"):
        return value.model_dump()
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


@dataclass(frozen=True)
class Checked:
    """A call that passed the gateway's checks: the entry and the validated arguments."""

    entry: CatalogEntry
    arguments: dict[str, Any]


class ToolGateway:
    """Three tools that let a model find, inspect and run tools from a large catalog.

    `gateway.tools` are `search_tool_catalog`, `get_tool_schema` and `execute_tool`; give them
    to `create_agent(tools=...)`, to a `Scope`, or to `always_on`. The catalog tools themselves
    are not registered with the agent: they run inside `execute_tool`, after their arguments
    pass the JSON schema and, for write tools, after a human approved the exact call.

    Example:
        ```python
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver
        from attention_scoping import ToolGateway, HesitationMiddleware
        from attention_scoping.approval.middleware import ApprovalGate
        from attention_scoping.gateway.tools import CatalogEntry, GATEWAY_PROMPT

        gateway = ToolGateway(
            [get_weather, CatalogEntry.from_tool(scheduled_jobs, risk="write",
                                                 defaults={"schedule_time": "+30m"})],
            approval=ApprovalGate(),  # HMAC key from $ATTENTION_SCOPING_SECRET
        )
        agent = create_agent(model, tools=gateway.tools, system_prompt=GATEWAY_PROMPT,
                             middleware=[HesitationMiddleware()], checkpointer=InMemorySaver())
        ```
    """

    def __init__(
        self,
        tools: Iterable[ToolLike | CatalogEntry],
        *,
        ranker: Ranker | None = None,
        approval: ApprovalGate | None = None,
        allow: Allow | None = None,
        limit: int = 5,
        reject_unknown_arguments: bool = True,
    ) -> None:
        """Index the catalog.

        Args:
            tools: Tools (or `CatalogEntry`s with risk and defaults) the gateway serves.
            ranker: Search ranking; default: `attention_scoping.gating.default_ranker()` when
                that package provides it, else a small lexical fallback.
            approval: Approval gate for write tools (required when any tool needs approval).
            allow: Per-caller permission `(entry, state) -> bool`; refused tools are listed as
                `unauthorized` and never run.
            limit: Default number of search candidates.
            reject_unknown_arguments: Refuse arguments the schema does not declare (a model
                inventing a parameter), even when the schema allows extra properties.

        Raises:
            GatewayConfigError: two tools with one name, a gateway tool name in the catalog,
                or a write tool without an approval gate.
        """
        entries: dict[str, CatalogEntry] = {}
        for item in tools:
            entry = item if isinstance(item, CatalogEntry) else CatalogEntry.from_tool(item)
            if entry.name in entries:
                msg = f"two catalog tools are named {entry.name!r}; names must be unique"
                raise GatewayConfigError(msg)
            if entry.name in (SEARCH_TOOL_CATALOG, GET_TOOL_SCHEMA, EXECUTE_TOOL):
                msg = f"{entry.name!r} is a gateway tool name; rename the catalog tool"
                raise GatewayConfigError(msg)
            entries[entry.name] = entry
        gated = [e.name for e in entries.values() if e.requires_approval]
        if gated and approval is None:
            msg = (
                f"tools {gated} require approval but no approval gate was given: pass "
                "approval=ApprovalGate(...) (attention_scoping.approval.middleware)"
            )
            raise GatewayConfigError(msg)
        if limit < 1:
            msg = f"limit must be at least 1, not {limit}"
            raise ValueError(msg)
        self.entries = entries
        """Catalog entries by name."""
        self.approval = approval
        """The approval gate of write tools."""
        self.allow = allow
        self.limit = limit
        self.reject_unknown_arguments = reject_unknown_arguments
        self.ranker, self.ranker_label = resolve_ranker(ranker)
        self._validators: dict[str, Validator] = {
            name: compile_schema(entry.parameters, where=f"schema of {name!r}")
            for name, entry in entries.items()
        }
        self.tools: list[BaseTool] = self._build_tools()
        """`search_tool_catalog`, `get_tool_schema`, `execute_tool`: register these."""

    @property
    def tool_names(self) -> tuple[str, str, str]:
        """Names of the three gateway tools."""
        return (SEARCH_TOOL_CATALOG, GET_TOOL_SCHEMA, EXECUTE_TOOL)

    # -- payloads (pure) --------------------------------------------------------------------

    def _allowed(self, state: Mapping[str, Any] | None) -> set[str]:
        if self.allow is None:
            return set(self.entries)
        view = state or {}
        return {n for n, e in self.entries.items() if self.allow(e, view)}

    def search(
        self, query: str, *, limit: int | None = None, state: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Ranked candidates for `query`, with a `next_step` naming the schema call."""
        allowed = self._allowed(state)
        pool = [e for n, e in self.entries.items() if n in allowed]
        ranked = [(n, s) for n, s in self.ranker(query, pool) if n in allowed and s > 0]
        ranked = ranked[: limit or self.limit]
        candidates = [
            {
                "name": name,
                "summary": self.entries[name].summary,
                "risk": self.entries[name].risk,
                "score": round(float(score), 4),
            }
            for name, score in ranked
        ]
        if candidates:
            best = candidates[0]["name"]
            step = (
                f"Call {_call(GET_TOOL_SCHEMA, tool_names=[best])} now to get its full schema "
                f"(or name another candidate that fits better), then call {EXECUTE_TOOL}."
            )
        else:
            step = (
                f"No tool matched. Call {SEARCH_TOOL_CATALOG} again with other words: the "
                "action and the object, e.g. 'create invoice' or 'schedule reminder'."
            )
        return {"query": query, "candidates": candidates, "next_step": step}

    def schema(
        self, tool_names: Sequence[str], *, state: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Full schemas of `tool_names` plus `unauthorized` / `not_found` lists and a
        `next_step` that names the execute call, the defaults, and who asks for approval."""
        allowed = self._allowed(state)
        disclosed: list[dict[str, Any]] = []
        unauthorized: list[str] = []
        not_found: list[str] = []
        for name in dict.fromkeys(tool_names):
            if name not in self.entries:
                not_found.append(name)
            elif name not in allowed:
                unauthorized.append(name)
            else:
                disclosed.append(self.entries[name].disclosure())
        payload: dict[str, Any] = {
            "disclosed": disclosed,
            "unauthorized": unauthorized,
            "not_found": not_found,
        }
        hints = {n: self._closest(n, allowed) for n in not_found}
        if any(hints.values()):
            payload["did_you_mean"] = {n: h for n, h in hints.items() if h}
        payload["next_step"] = self._schema_step(disclosed, unauthorized or not_found)
        return payload

    def _schema_step(self, disclosed: list[dict[str, Any]], missing: list[str]) -> str:
        if not disclosed:
            return (
                f"None of these tools is available. Call {SEARCH_TOOL_CATALOG}(query=...) to "
                "find the right tool name; names must match exactly."
            )
        parts: list[str] = []
        for item in disclosed:
            entry = self.entries[item["name"]]
            call = f"{EXECUTE_TOOL}(tool_name={json.dumps(entry.name)}, arguments={{...}})"
            critical = entry.critical()
            defaults = item["defaults"]
            text = f"Call {call} now."
            if critical:
                text += f" Fill {', '.join(critical)} from the user's request."
            if defaults:
                named = ", ".join(f"{k}={_render_default(v)}" for k, v in defaults.items())
                text += f" For anything the user did not specify, use the defaults: {named}."
            text += " Synthesize the remaining arguments from the request and the conversation."
            if entry.requires_approval:
                text += (
                    f" {entry.name} needs approval: do NOT ask the user to confirm or to list "
                    "parameters in text; the gateway asks the user for approval itself when you "
                    "call it."
                )
            else:
                text += " It runs immediately; do not ask the user for confirmation."
            parts.append(text)
        if len(parts) > 1:
            parts.insert(0, "Pick the tool that fits the request.")
        return " ".join(parts)

    def _closest(self, name: str, allowed: Iterable[str]) -> str | None:
        match = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.6)
        return match[0] if match else None

    def check(
        self, tool_name: str, arguments: Any, *, state: Mapping[str, Any] | None = None
    ) -> Checked | dict[str, Any]:
        """Validate a call: the checked call, or an error payload with a `next_step`."""
        allowed = self._allowed(state)
        if tool_name not in self.entries or tool_name not in allowed:
            hint = self._closest(str(tool_name), allowed)
            known = tool_name in self.entries
            return {
                "error": "unauthorized" if known else "unknown_tool",
                "tool": tool_name,
                "message": (
                    f"{tool_name!r} is not available to you; it was not run."
                    if known
                    else f"There is no tool named {tool_name!r}"
                    + (f" (did you mean {hint!r}?)" if hint else "")
                    + "; nothing was run."
                ),
                "next_step": (
                    f"Call {_call(GET_TOOL_SCHEMA, tool_names=[hint])} and then {EXECUTE_TOOL} "
                    "with that exact name."
                    if hint
                    else f"Call {SEARCH_TOOL_CATALOG}(query=...) to find the right tool name."
                ),
            }
        entry = self.entries[tool_name]
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return self._invalid(
                    entry,
                    [
                        {
                            "field": None,
                            "path": "",
                            "message": (
                                "arguments must be a JSON object, got a string that is not JSON"
                            ),
                            "rule": "type",
                        }
                    ],
                )
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            kind = type(arguments).__name__
            return self._invalid(
                entry,
                [
                    {
                        "field": None,
                        "path": "",
                        "message": (f"arguments must be a JSON object, got {kind}"),
                        "rule": "type",
                    }
                ],
            )
        problems = [p.as_dict() for p in check_arguments(self._validators[tool_name], arguments)]
        if self.reject_unknown_arguments:
            extra = sorted(set(arguments) - set(entry.properties))
            if extra and not any(p["rule"] == "additionalProperties" for p in problems):
                valid = ", ".join(entry.properties) or "none"
                names = ", ".join(repr(k) for k in extra)
                problems.append(
                    {
                        "field": extra[0],
                        "path": extra[0],
                        "message": f"unknown argument {names} (valid: {valid})",
                        "rule": "additionalProperties",
                    }
                )
        if problems:
            return self._invalid(entry, problems)
        return Checked(entry, dict(arguments))

    def _invalid(self, entry: CatalogEntry, problems: list[dict[str, Any]]) -> dict[str, Any]:
        first = problems[0]
        fields = [p["field"] for p in problems if p.get("field")]
        payload: dict[str, Any] = {
            "error": "invalid_arguments",
            "tool": entry.name,
            "message": f"The arguments for {entry.name} do not match its schema; nothing was run.",
            "problems": problems,
        }
        if first.get("field") in entry.properties:
            payload["expected"] = {first["field"]: entry.properties[first["field"]]}
        fix = ", ".join(dict.fromkeys(fields)) if fields else "the arguments object"
        payload["next_step"] = (
            f"Call {EXECUTE_TOOL}(tool_name={json.dumps(entry.name)}, arguments={{...}}) again "
            f"with {fix} fixed as described; keep the other arguments. Do not ask the user "
            "unless the value cannot be inferred."
        )
        return payload

    def success(self, entry: CatalogEntry, result: Any, approval: Mapping[str, Any] | None) -> dict:
        """The payload of a call that ran."""
        payload: dict[str, Any] = {"status": "ok", "tool": entry.name, "result": _jsonable(result)}
        if approval:
            payload["approval"] = dict(approval)
        payload["next_step"] = (
            "Tell the user what was done, from this result, in a sentence or two; or, if the "
            "request needs another tool, call it now."
        )
        return payload

    def failure(self, entry: CatalogEntry, exc: BaseException) -> dict[str, Any]:
        """The payload of a tool that raised."""
        return {
            "error": "tool_failed",
            "tool": entry.name,
            "message": f"{entry.name} raised {type(exc).__name__}: {exc}",
            "next_step": (
                "If the error names a bad argument value, call "
                f"{EXECUTE_TOOL}(tool_name={json.dumps(entry.name)}, arguments={{...}}) once more "
                "with it fixed; otherwise tell the user it failed and why. Do not repeat the "
                "same call."
            ),
        }

    # -- execution --------------------------------------------------------------------------

    def _approve(
        self,
        entry: CatalogEntry,
        args: dict[str, Any],
        state: Mapping[str, Any] | None,
        tool_call_id: str | None,
    ) -> tuple[dict[str, Any], dict[str, Any]] | dict[str, Any]:
        """Ask for approval (interrupts the graph): (arguments, receipt) or a refusal payload."""
        if self.approval is None:  # construction refuses this; keep the invariant explicit
            msg = f"{entry.name} requires approval but the gateway has no approval gate"
            raise GatewayConfigError(msg)

        def validate(candidate: Mapping[str, Any]) -> dict[str, Any] | None:
            checked = self.check(entry.name, candidate, state=state)
            return checked if isinstance(checked, dict) else None

        outcome = self.approval.obtain(
            entry.name,
            args,
            tool_call_id=tool_call_id,
            risk=entry.risk,
            description=entry.summary,
            validate=validate,
        )
        if outcome.refusal is not None:
            return outcome.refusal
        return outcome.arguments, dict(outcome.receipt or {})

    def _admit(
        self,
        tool_name: str,
        arguments: Any,
        state: Mapping[str, Any] | None,
        tool_call_id: str | None,
    ) -> tuple[CatalogEntry, dict[str, Any], dict[str, Any] | None] | dict[str, Any]:
        """Check the call and, for a write tool, obtain approval (may interrupt the graph):
        (entry, arguments to run with, approval receipt) or a refusal payload."""
        checked = self.check(tool_name, arguments, state=state)
        if isinstance(checked, dict):
            return checked
        entry, args = checked.entry, checked.arguments
        if not entry.requires_approval:
            return entry, args, None
        # `interrupt` works the same in async nodes; the approval step itself does no I/O.
        decision = self._approve(entry, args, state, tool_call_id)
        if isinstance(decision, dict):
            return decision
        return entry, decision[0], decision[1]

    def execute(
        self,
        tool_name: str,
        arguments: Any,
        *,
        state: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
    ) -> dict[str, Any]:
        """Check, approve (write tools; may interrupt the graph), run: the payload."""
        admitted = self._admit(tool_name, arguments, state, tool_call_id)
        if isinstance(admitted, dict):
            return admitted
        entry, args, approval = admitted
        try:
            result = entry.tool.invoke(args)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            logger.info("gateway tool %s failed: %s", entry.name, exc)
            return self.failure(entry, exc)
        return self.success(entry, result, approval)

    async def aexecute(
        self,
        tool_name: str,
        arguments: Any,
        *,
        state: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
    ) -> dict[str, Any]:
        """Async form of `execute` (async tools are awaited)."""
        admitted = self._admit(tool_name, arguments, state, tool_call_id)
        if isinstance(admitted, dict):
            return admitted
        entry, args, approval = admitted
        try:
            result = await entry.tool.ainvoke(args)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            logger.info("gateway tool %s failed: %s", entry.name, exc)
            return self.failure(entry, exc)
        return self.success(entry, result, approval)

    # -- LangChain tools --------------------------------------------------------------------

    def _build_tools(self) -> list[BaseTool]:
        gateway = self

        def state_of(runtime: ToolRuntime | None) -> Mapping[str, Any]:
            state = getattr(runtime, "state", None)
            return state if isinstance(state, Mapping) else {}

        def search_tool_catalog(
            query: Annotated[str, Field(description="What the user wants done, in a few words.")],
            runtime: ToolRuntime,
        ) -> str:
            return render_payload(gateway.search(query, state=state_of(runtime)))

        def get_tool_schema(
            tool_names: Annotated[
                list[str] | str,
                WithJsonSchema(
                    {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Exact tool names from search_tool_catalog.",
                    }
                ),
            ],
            runtime: ToolRuntime,
        ) -> str:
            names = [tool_names] if isinstance(tool_names, str) else list(tool_names)
            return render_payload(gateway.schema(names, state=state_of(runtime)))

        def execute_tool(
            tool_name: Annotated[str, Field(description="Exact name of the tool to run.")],
            arguments: Annotated[
                dict[str, Any] | str | None,
                WithJsonSchema(
                    {
                        "type": "object",
                        "description": "The tool's arguments, as its schema describes them.",
                    }
                ),
            ],
            runtime: ToolRuntime,
        ) -> str:
            payload = gateway.execute(
                tool_name,
                arguments,
                state=state_of(runtime),
                tool_call_id=getattr(runtime, "tool_call_id", None),
            )
            return render_payload(payload)

        async def aexecute_tool(
            tool_name: str, arguments: dict[str, Any] | str | None, runtime: ToolRuntime
        ) -> str:
            payload = await gateway.aexecute(
                tool_name,
                arguments,
                state=state_of(runtime),
                tool_call_id=getattr(runtime, "tool_call_id", None),
            )
            return render_payload(payload)

        return [
            StructuredTool.from_function(
                search_tool_catalog,
                name=SEARCH_TOOL_CATALOG,
                description=(
                    "Search the tool catalog for tools that can do what the user wants. Returns "
                    "ranked candidates with one-line summaries."
                ),
            ),
            StructuredTool.from_function(
                get_tool_schema,
                name=GET_TOOL_SCHEMA,
                description=(
                    "Get the full parameter schemas of catalog tools by exact name, before "
                    "calling execute_tool."
                ),
            ),
            StructuredTool.from_function(
                execute_tool,
                coroutine=aexecute_tool,
                name=EXECUTE_TOOL,
                description=(
                    "Run a catalog tool with arguments that follow its schema. Write tools ask "
                    "the user for approval by themselves: call them directly."
                ),
            ),
        ]
