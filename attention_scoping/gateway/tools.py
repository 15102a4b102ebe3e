"""`ToolGateway`: three LangChain tools that search, disclose and run a catalog of any size.

For catalogs too large to scope by hand the model gets three tools instead of hundreds:
`search_tool_catalog(query)` (ranked one-line summaries), `get_tool_schema(tool_names)` (full
schemas) and `execute_tool(tool_name, arguments)` (checked, then run). Every payload ends with a
`next_step` naming the exact next call. Write tools pause for a human approval bound to the exact
arguments (`attention_scoping.approval.middleware`).

The parts, one job each: `catalog` (the `ToolSpec`s and who may see them), `search` (ranking),
`payloads` (what each tool answers), `execute` (checks and runs, within the size and depth
bounds of `common.limits`); this module binds them to LangChain tools.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import Field, WithJsonSchema

from attention_scoping.adapters.tools import ToolLike, as_base_tool, spec_from_tool
from attention_scoping.common.errors import Payload, render_payload
from attention_scoping.common.limits import RESULT_MAX_CHARS, JsonLimits
from attention_scoping.common.text import did_you_mean
from attention_scoping.common.tool import Risk, ToolSpec, summary_lines
from attention_scoping.gateway.catalog import (
    EXECUTE_TOOL,
    GATEWAY_POOL_HEADER,
    GATEWAY_PROMPT,
    GATEWAY_SIGNATURES_PROMPT,
    GATEWAY_TOOL_NAMES,
    GET_TOOL_SCHEMA,
    SEARCH_TOOL_CATALOG,
    Allow,
    Catalog,
    GatewayConfigError,
)
from attention_scoping.gateway.execute import (
    EXECUTE_PARAMETERS,
    Admitted,
    ArgumentChecker,
    Checked,
    arun_tool,
    execute_call_refusal,
    run_tool,
)
from attention_scoping.gateway.payloads import (
    schema_payload,
    search_payload,
    success_payload,
)
from attention_scoping.gateway.search import Ranker, lexical_ranker
from attention_scoping.risk import declared_read

if TYPE_CHECKING:
    from attention_scoping.approval.middleware import ApprovalGate

__all__ = [
    "EXECUTE_TOOL",
    "GATEWAY_PROMPT",
    "GET_TOOL_SCHEMA",
    "SEARCH_TOOL_CATALOG",
    "Allow",
    "CatalogEntry",
    "Checked",
    "GatewayConfigError",
    "JsonLimits",
    "Ranker",
    "Risk",
    "ToolGateway",
    "lexical_ranker",
    "resolve_ranker",
]

logger = logging.getLogger(__name__)

MAX_SCHEMA_NAMES = 20
"""`get_tool_schema` discloses at most this many tools per call (the rest are ignored)."""

MAX_QUERY_CHARS = 2_000
"""`search_tool_catalog` ranks on at most this much of the query."""


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


@dataclass(frozen=True)
class CatalogEntry:
    """A tool registered with the gateway: its `ToolSpec` and the LangChain tool that runs it.

    The spec is the one record of the tool (risk, approval, suggested defaults included);
    attributes of the spec (`name`, `risk`, `critical()`, ...) read through the entry too.
    `read` says whether someone declared the tool a read (`risk="read"` given here or in its
    metadata, or an MCP `readOnlyHint: true`): only such tools are named by code (the prompt
    pool, a search's `next_step`, routing). A tool nobody classified may write; approval still
    asks only for declared writes.

    Example:
        ```python
        CatalogEntry.from_tool(scheduled_jobs, risk="write",
                               defaults={"schedule_time": "+30m", "folder": "reminders"})
        ```
    """

    spec: ToolSpec
    tool: BaseTool = field(hash=False, compare=False, repr=False)
    read: bool = field(default=False, compare=False)

    @classmethod
    def from_tool(
        cls,
        tool: ToolLike,
        *,
        risk: Risk | None = None,
        requires_approval: bool | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> CatalogEntry:
        """Register `tool`; unset options are read from `tool.metadata` (`risk`,
        `requires_approval`, `defaults`); without them the tool needs no approval and is not a
        declared read (`read=False`: code never names it).

        A write tool requires approval unless `requires_approval=False` is explicit.

        Raises:
            GatewayConfigError: an unknown risk, or defaults naming unknown parameters.
        """
        base = as_base_tool(tool)
        try:
            spec = spec_from_tool(
                base, risk=risk, requires_approval=requires_approval, defaults=defaults
            )
        except ValueError as exc:
            raise GatewayConfigError(str(exc)) from None
        said = risk == "read" or (risk is None and declared_read(base))
        return cls(spec, base, read=said and spec.risk == "read" and not spec.requires_approval)

    def __getattr__(self, name: str) -> Any:
        """Attributes of the spec (`name`, `risk`, `requires_approval`, `critical`, ...)."""
        if name.startswith("__") or name in ("spec", "tool", "read"):
            raise AttributeError(name)
        return getattr(self.spec, name)


class ToolGateway:
    """Three tools that let a model find, inspect and run tools from a large catalog.

    `gateway.tools` are `search_tool_catalog`, `get_tool_schema` and `execute_tool`; give them
    to `create_agent(tools=...)`, to a `Scope`, or to `always_on`. The catalog tools themselves
    are not registered with the agent: they run inside `execute_tool`, after their arguments
    pass the size limits and the JSON schema and, for write tools, after a human approved the
    exact call.

    Example:
        ```python
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver
        from attention_scoping.gateway import ToolGateway
        from attention_scoping.hesitation.middleware import HesitationMiddleware
        from attention_scoping.approval.middleware import ApprovalGate
        from attention_scoping.gateway import CatalogEntry, GATEWAY_PROMPT

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
        argument_limits: JsonLimits | None = None,
        result_limits: JsonLimits | None = None,
    ) -> None:
        """Index the catalog.

        Args:
            tools: Tools (or `CatalogEntry`s with risk and defaults) the gateway serves.
            ranker: Search ranking `(query, specs) -> [(name, score)]`; default:
                `attention_scoping.gating.default_ranker()` when that package provides it, else
                a small lexical fallback.
            approval: Approval gate for write tools (required when any tool needs approval).
            allow: Per-caller permission `(spec, state) -> bool`; refused tools are listed as
                `unauthorized` and never run.
            limit: Default number of search candidates.
            reject_unknown_arguments: Refuse arguments the schema does not declare (a model
                inventing a parameter), even when the schema allows extra properties.
            argument_limits: Size and depth bounds of a call's arguments (default `JsonLimits()`:
                64 levels, 1,000,000 characters); larger ones are refused as invalid.
            result_limits: The same for a tool's result (default: `RESULT_MAX_CHARS`,
                100,000 characters, the bound of every tool result); a larger one is reported
                as `result_too_large` with a preview of text results, cut by `common.limits.clip`.

        Raises:
            GatewayConfigError: two tools with one name, a gateway tool name in the catalog,
                or a write tool without an approval gate.
        """
        entries = [i if isinstance(i, CatalogEntry) else CatalogEntry.from_tool(i) for i in tools]
        self.catalog = Catalog([e.spec for e in entries], allow=allow)
        """The tool records (`ToolSpec`) by name, and the `allow` filter."""
        gated = self.catalog.needing_approval()
        if gated and approval is None:
            msg = (
                f"tools {gated} require approval but no approval gate was given: pass "
                "approval=ApprovalGate(...) (attention_scoping.approval.middleware)"
            )
            raise GatewayConfigError(msg)
        if limit < 1:
            msg = f"limit must be at least 1, not {limit}"
            raise GatewayConfigError(msg)
        self.entries: dict[str, CatalogEntry] = {e.spec.name: e for e in entries}
        """Registered tools by name: each spec with the LangChain tool that runs it."""
        self.approval = approval
        """The approval gate of write tools."""
        self.limit = limit
        self.result_limits = result_limits or JsonLimits(max_chars=RESULT_MAX_CHARS)
        self.checker = ArgumentChecker(
            self.catalog,
            limits=argument_limits or JsonLimits(),
            reject_unknown_arguments=reject_unknown_arguments,
        )
        self.ranker, self.ranker_label = resolve_ranker(ranker)
        self.tools: list[BaseTool] = self._build_tools()
        """`search_tool_catalog`, `get_tool_schema`, `execute_tool`: register these."""

    @property
    def allow(self) -> Allow | None:
        """The per-caller permission, if any."""
        return self.catalog.allow

    @property
    def reject_unknown_arguments(self) -> bool:
        """Whether arguments the schema does not declare are refused."""
        return self.checker.reject_unknown_arguments

    @property
    def reads(self) -> frozenset[str]:
        """Catalog tools declared reads (`CatalogEntry.read`): the only ones code names."""
        return frozenset(n for n, e in self.entries.items() if e.read)

    @property
    def tool_names(self) -> tuple[str, str, str]:
        """Names of the three gateway tools."""
        return GATEWAY_TOOL_NAMES

    def prompt(
        self,
        *,
        pool: bool = False,
        signatures: bool = True,
        state: Mapping[str, Any] | None = None,
    ) -> str:
        """The gateway's instructions for your system prompt. With `pool`, one line per tool
        that reads and the caller may see (`state` for an `allow` rule), so the model needs no
        search for it (the pool is code's choice, so it names declared reads only,
        `ToolGateway.reads`; any other tool stays findable through `search_tool_catalog`): with
        `signatures` (the default) `GATEWAY_SIGNATURES_PROMPT` and each tool's required
        arguments (`ToolSpec.signature`), so it calls `execute_tool` at once; without,
        `GATEWAY_PROMPT` and names only, so it fetches a schema first. Put it in a system
        prompt that does not change: a signature pool is the cheapest set-up measured under
        prompt caching (docs/cost.md)."""
        if not pool:
            return GATEWAY_PROMPT
        specs = [s for s in self.catalog.visible(state) if s.name in self.reads]
        if signatures:
            lines = [(s.signature(), s.summary) for s in specs]
            return summary_lines(GATEWAY_SIGNATURES_PROMPT, lines) or GATEWAY_PROMPT
        index = summary_lines(GATEWAY_POOL_HEADER, [(s.name, s.summary) for s in specs])
        return "\n\n".join(p for p in (GATEWAY_PROMPT, index) if p)

    # -- payloads ---------------------------------------------------------------------------

    def search(
        self, query: str, *, limit: int | None = None, state: Mapping[str, Any] | None = None
    ) -> Payload:
        """Ranked candidates for `query`, with a `next_step` naming the schema call."""
        pool = self.catalog.visible(state)
        allowed = {s.name for s in pool}
        text = query if isinstance(query, str) else ""
        ranked = [
            (self.catalog.specs[n], float(s))
            for n, s in self.ranker(text[:MAX_QUERY_CHARS], pool)
            if n in allowed and s > 0
        ]
        return search_payload(text, ranked[: limit or self.limit], self.reads)

    def schema(
        self, tool_names: Sequence[str], *, state: Mapping[str, Any] | None = None
    ) -> Payload:
        """Full schemas of `tool_names` plus `unauthorized` / `not_found` lists and a
        `next_step` that names the execute call, the defaults, and who asks for approval."""
        allowed = set(self.catalog.allowed(state))
        disclosed: list[ToolSpec] = []
        unauthorized: list[str] = []
        not_found: list[str] = []
        asked = [tool_names] if isinstance(tool_names, str) else list(tool_names)
        names = [n if isinstance(n, str) else f"<{type(n).__name__}>" for n in asked]
        names = names[:MAX_SCHEMA_NAMES]
        for name in dict.fromkeys(names):
            if name not in self.catalog:
                not_found.append(name)
            elif name not in allowed:
                unauthorized.append(name)
            else:
                disclosed.append(self.catalog.specs[name])
        hints = {n: did_you_mean(n, allowed) for n in not_found}
        return schema_payload(
            disclosed, unauthorized, not_found, {n: h for n, h in hints.items() if h}
        )

    def check(
        self, tool_name: str, arguments: Any, *, state: Mapping[str, Any] | None = None
    ) -> Checked | Payload:
        """Validate a call: the checked call, or an error payload with a `next_step`."""
        return self.checker.check(tool_name, arguments, state=state)

    def success(self, entry: CatalogEntry | ToolSpec, result: Any, approval: Any = None) -> Payload:
        """The payload of a call that ran (`result` JSON-safe)."""
        return success_payload(_spec(entry), result, approval)

    # -- execution --------------------------------------------------------------------------

    def _approve(
        self,
        spec: ToolSpec,
        args: dict[str, Any],
        state: Mapping[str, Any] | None,
        tool_call_id: str | None,
    ) -> tuple[dict[str, Any], dict[str, Any]] | Payload:
        """Ask for approval (interrupts the graph): (arguments, receipt) or a refusal payload."""
        if self.approval is None:  # construction refuses this; keep the invariant explicit
            msg = f"{spec.name} requires approval but the gateway has no approval gate"
            raise GatewayConfigError(msg)

        def validate(candidate: Mapping[str, Any]) -> dict[str, Any] | None:
            checked = self.check(spec.name, candidate, state=state)
            return checked if isinstance(checked, dict) else None

        outcome = self.approval.obtain(
            spec.name,
            args,
            tool_call_id=tool_call_id,
            risk=spec.risk,
            description=spec.summary,
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
    ) -> Admitted | Payload:
        """Check the call and, for a write tool, obtain approval (may interrupt the graph):
        the call to run, or a refusal payload."""
        checked = self.check(tool_name, arguments, state=state)
        if isinstance(checked, dict):
            return checked
        entry, args = self.entries[checked.spec.name], checked.arguments
        if not checked.spec.requires_approval:
            return Admitted(entry.tool, entry.spec, args)
        # `interrupt` works the same in async nodes; the approval step itself does no I/O.
        decision = self._approve(checked.spec, args, state, tool_call_id)
        if isinstance(decision, dict):
            return decision
        return Admitted(entry.tool, entry.spec, *decision)

    def execute(
        self,
        tool_name: str,
        arguments: Any,
        *,
        state: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
    ) -> Payload:
        """Check, approve (write tools; may interrupt the graph), run: the payload."""
        admitted = self._admit(tool_name, arguments, state, tool_call_id)
        if isinstance(admitted, dict):
            return admitted
        return run_tool(admitted, self.result_limits)

    async def aexecute(
        self,
        tool_name: str,
        arguments: Any,
        *,
        state: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
    ) -> Payload:
        """Async form of `execute` (async tools are awaited)."""
        admitted = self._admit(tool_name, arguments, state, tool_call_id)
        if isinstance(admitted, dict):
            return admitted
        return await arun_tool(admitted, self.result_limits)

    # -- LangChain tools --------------------------------------------------------------------

    def _build_tools(self) -> list[BaseTool]:
        return _gateway_tools(self)


def _spec(entry: CatalogEntry | ToolSpec) -> ToolSpec:
    return entry.spec if isinstance(entry, CatalogEntry) else entry


def _state_of(runtime: ToolRuntime | None) -> Mapping[str, Any]:
    state = getattr(runtime, "state", None)
    return state if isinstance(state, Mapping) else {}


def _gateway_tools(gateway: ToolGateway) -> list[BaseTool]:
    """The three LangChain tools over `gateway`'s payload methods."""

    def search_tool_catalog(
        query: Annotated[str, Field(description="What the user wants done, in a few words.")],
        runtime: ToolRuntime,
    ) -> str:
        return render_payload(gateway.search(query, state=_state_of(runtime)))

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
        return render_payload(gateway.schema(names, state=_state_of(runtime)))

    # Any value passes to the gateway's own check (which answers with the tool's schema); the
    # model is shown EXECUTE_PARAMETERS. A missing part is answered by execute_call_refusal.
    def execute_tool(
        tool_name: Annotated[Any, WithJsonSchema(EXECUTE_PARAMETERS["properties"]["tool_name"])],
        arguments: Annotated[Any, WithJsonSchema(EXECUTE_PARAMETERS["properties"]["arguments"])],
        runtime: ToolRuntime,
    ) -> str:
        payload = gateway.execute(
            tool_name,
            arguments,
            state=_state_of(runtime),
            tool_call_id=getattr(runtime, "tool_call_id", None),
        )
        return render_payload(payload)

    async def aexecute_tool(tool_name: Any, arguments: Any, runtime: ToolRuntime) -> str:
        payload = await gateway.aexecute(
            tool_name,
            arguments,
            state=_state_of(runtime),
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
            handle_validation_error=execute_call_refusal,
        ),
    ]
