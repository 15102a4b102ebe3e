"""`ManifestMiddleware`: bind an agent to capability manifests, with two-phase writes.

Per model call it narrows the tools to the manifests' own (when `exclusive`); per tool call it
refuses anything outside them, validates arguments against the tool's JSON schema before the
tool runs, and sends every write through the `IntentGuard`: a first call returns a preview and
a confirmation code, a second call with the same arguments plus that code runs the mutation.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ModelRequest,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import ToolMessage
from typing_extensions import override

from attention_scoping.adapters.hooks import AsyncToolHandler, ToolHandler, ToolResult
from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.adapters.refusals import bounded_result
from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.errors import ErrorCode, render_payload
from attention_scoping.common.limits import RESULT_MAX_CHARS, clip
from attention_scoping.safety import payloads
from attention_scoping.safety.adapters import manifest_tools
from attention_scoping.safety.intents import (
    DuplicateIntentError,
    IntentError,
    IntentGuard,
    Outcome,
    PreflightError,
    Proposal,
)
from attention_scoping.safety.manifests import (
    ArgumentError,
    Capability,
    CapabilityManifest,
    ManifestConfigError,
    ManifestRegistry,
    UnknownToolError,
)
from attention_scoping.safety.records import Intent
from attention_scoping.safety.tokens import TokenError

if TYPE_CHECKING:
    pass

__all__ = ["AccountResolver", "ManifestMiddleware", "default_account"]

logger = logging.getLogger(__name__)

AccountResolver = Callable[[ToolCallRequest], str]
"""Who a write acts for: part of the intent hash, so a code never crosses accounts."""


def default_account(request: ToolCallRequest) -> str:
    """The `account` of the run's context (`context={"account": ...}` or an attribute), else
    `configurable["account"]`, else `"default"`."""
    runtime = getattr(request, "runtime", None)
    context = getattr(runtime, "context", None)
    if isinstance(context, Mapping) and context.get("account"):
        return str(context["account"])
    if context is not None and getattr(context, "account", None):
        return str(context.account)
    config = getattr(runtime, "config", None) or {}
    account = (config.get("configurable") or {}).get("account")
    return str(account) if account else "default"


def _thread_id(request: ToolCallRequest) -> str | None:
    config = getattr(getattr(request, "runtime", None), "config", None) or {}
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else None


class _WriteCall:
    """One write call, split into its intent, its confirmation code and its hooks."""

    def __init__(self, name: str, spec: Capability, args: dict[str, Any], code: Any, account: str):
        self.name = name
        self.spec = spec
        self.args = args
        self.code = code
        self.intent = Intent(account, name, spec.target_of(args), args)

    def preflight(self) -> Any:
        return self.spec.preflight(**self.args) if self.spec.preflight else None

    def mutate(self) -> Any:
        return self.spec.handler(**self.args)

    def affected(self, result: Any) -> Iterable[str]:
        return self.spec.affected(self.args, result) if self.spec.affected else ()


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def bounded_field(body: dict[str, Any], key: str, limit: int | None) -> dict[str, Any]:
    """`body` whose rendered JSON fits `limit` by cutting only its `key` field (`clip`: the cut
    marked, the full size reported; a non-text value is cut as its JSON text): the payload stays
    valid JSON with every other field whole. `body` itself when it fits or has no `key`."""
    if limit is None or key not in body or len(render_payload(body)) <= limit:
        return body
    text = _as_text(body[key])
    room = limit - len(render_payload({**body, key: ""}))
    while room > 0:
        cut = {**body, key: clip(text, room, total=len(text))}
        over = len(render_payload(cut)) - limit
        if over <= 0:
            return cut
        room -= over  # escapes (quotes, newlines) made the text longer in JSON
    return {**body, key: clip(text, 0, total=len(text))}


class ManifestMiddleware(
    ModelCallHooks, AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]
):
    """Bind an agent to capability manifests; writes run only after a confirmed preview.

    Example:
        ```python
        guard = IntentGuard(TokenIssuer(store=SqliteTokenStore("safety.db")),
                            SqliteIntentJournal("safety.db"))
        agent = create_agent(model, middleware=[ManifestMiddleware([repo], guard=guard)])
        agent.invoke({"messages": [...]}, context={"account": "acme"})
        ```

    With `AttentionScopingMiddleware`, make each manifest a scope (`manifest_scope(manifest)`),
    list the scoping middleware first, and pass `exclusive=False` here so scoping decides what
    is visible while this middleware validates and guards.

    Every result it passes on (a read's, a write's outcome) is bounded by
    `common.limits.RESULT_MAX_CHARS`, cut marked (`result_max_chars` on the instance; None
    leaves results whole).

    Args:
        manifests: The manifests the agent is bound to (distinct namespaces).
        guard: The `IntentGuard` for write tools; required when any manifest has one.
        exclusive: Hide and refuse every tool outside the manifests (except `allow`).
        allow: Names of other tools the agent may still see and call.
        account: Who writes act for, from the tool call request (`default_account`).
        name: Middleware name, to use two instances in one agent.

    Raises:
        ManifestConfigError: duplicate namespaces, or write tools without a guard.
    """

    def __init__(
        self,
        manifests: Sequence[CapabilityManifest],
        *,
        guard: IntentGuard | None = None,
        exclusive: bool = True,
        allow: Iterable[str] = (),
        account: AccountResolver = default_account,
        name: str | None = None,
    ) -> None:
        """Index the manifests and build their tools."""
        super().__init__()
        self.registry = ManifestRegistry(manifests)
        writes = [n for m in self.registry.manifests.values() for n in m.write_names]
        if writes and guard is None:
            msg = (
                f"write tools {writes} need two-phase confirmation: pass "
                "guard=IntentGuard(TokenIssuer(...)) to ManifestMiddleware"
            )
            raise ManifestConfigError(msg)
        self.guard = guard
        self.exclusive = exclusive
        self.allow = frozenset(allow)
        self.account = account
        self.tools = [t for m in self.registry.manifests.values() for t in manifest_tools(m)]
        self._name = name

    result_max_chars: int | None = RESULT_MAX_CHARS
    """The bound of every tool result this middleware passes on (`common.limits`)."""

    @property
    def name(self) -> str:
        """Node-name prefix; set `name=` to add two instances to one agent."""
        return self._name or type(self).__name__

    # -- model calls ------------------------------------------------------------------------

    @override
    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """Keep only the manifests' tools (and `allow`) when exclusive."""
        if not self.exclusive:
            return request
        keep = set(self.registry.names) | self.allow
        tools = [t for t in request.tools if tool_name(t) in keep]
        if len(tools) == len(request.tools):
            return request
        return request.override(tools=tools)

    # -- tool calls -------------------------------------------------------------------------

    def _message(
        self,
        request: ToolCallRequest,
        body: Mapping[str, Any],
        *,
        error: bool,
        artifact: Any = None,
    ) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(
            render_payload(dict(body)),
            tool_call_id=call["id"],
            name=call["name"],
            status="error" if error else "success",
            artifact=artifact,
        )

    def review(self, request: ToolCallRequest) -> ToolMessage | _WriteCall | None:
        """Refuse, route to two-phase (a `_WriteCall`), or let the call through (None)."""
        call = request.tool_call
        name = call["name"]
        if not self.registry.owns(name):
            if name in self.allow or not self.exclusive:
                return None
            try:
                self.registry.resolve(name)
            except UnknownToolError as exc:
                body = (
                    payloads.unknown_tool(exc)
                    if exc.reason == ErrorCode.UNKNOWN_TOOL
                    else payloads.not_in_manifests(name, self.registry.names)
                )
                return self._message(request, body, error=True)
        manifest, spec = self.registry.resolve(name)
        raw = call.get("args")
        args = dict(raw) if isinstance(raw, Mapping) else raw
        code = (
            args.pop(payloads.CONFIRMATION_FIELD, None)
            if spec.write and isinstance(args, dict)
            else None
        )
        if code is not None and not str(code).strip():
            code = None  # models often send an empty optional field on the first call
        try:
            valid = manifest.validate(name, args)
        except ArgumentError as exc:
            return self._message(request, payloads.invalid_arguments(exc), error=True)
        if not spec.write:
            return None
        return _WriteCall(name, spec, valid, code, self.account(request))

    def _phase_one_error(self, request: ToolCallRequest, exc: Exception) -> ToolMessage:
        name = request.tool_call["name"]
        if isinstance(exc, DuplicateIntentError):
            return self._message(request, payloads.duplicate_intent(name, exc), error=True)
        if isinstance(exc, PreflightError):
            return self._message(request, payloads.preflight_refused(name, exc), error=True)
        if isinstance(exc, TokenError):
            return self._message(request, payloads.confirmation_error(name, exc), error=True)
        body = {
            "error": ErrorCode.INTENT_REFUSED,
            "tool": name,
            "message": f"{exc}. Nothing was run.",
            "next_step": (
                f"Call {name} again without {payloads.CONFIRMATION_FIELD} to preview it anew."
            ),
        }
        return self._message(request, body, error=True)

    def _proposal_message(self, request: ToolCallRequest, proposal: Proposal) -> ToolMessage:
        assert self.guard is not None
        body = payloads.proposal(request.tool_call["name"], proposal, self.guard.clock())
        return self._message(request, body, error=False, artifact={"intent_id": proposal.intent_id})

    def _outcome_message(self, request: ToolCallRequest, outcome: Outcome) -> ToolMessage:
        body, is_error = payloads.outcome(request.tool_call["name"], outcome)
        body = bounded_field(body, "result", self.result_max_chars)
        artifact = {"intent": payloads.record_summary(outcome.record)}
        return self._message(request, body, error=is_error, artifact=artifact)

    def run_write(self, request: ToolCallRequest, write: _WriteCall) -> ToolMessage:
        """Phase 1 (no code: preview and code) or phase 2 (code: execute once)."""
        assert self.guard is not None
        hooks = (write.spec.handler, write.spec.preflight, write.spec.reconcile)
        if any(inspect.iscoroutinefunction(h) for h in hooks if h is not None):
            body = {
                "error": ErrorCode.ASYNC_TOOL_IN_SYNC_RUN,
                "tool": write.name,
                "message": f"{write.name} has async hooks; run the agent with ainvoke/astream. "
                "Nothing was run.",
                "next_step": "Tell the user this change cannot be made from a synchronous run.",
            }
            return self._message(request, body, error=True)
        try:
            if write.code is None:
                proposal = self.guard.propose(
                    write.intent, preflight=write.preflight, correlation=_thread_id(request)
                )
                return self._proposal_message(request, proposal)
            outcome = self.guard.execute(
                str(write.code),
                write.intent,
                write.mutate,
                reconcile=write.spec.reconcile,
                affected=write.affected,
                transport_errors=write.spec.transport_errors,
            )
        except (IntentError, TokenError) as exc:
            return self._phase_one_error(request, exc)
        return self._outcome_message(request, outcome)

    async def arun_write(self, request: ToolCallRequest, write: _WriteCall) -> ToolMessage:
        """Async `run_write`: handlers and hooks may be async."""
        assert self.guard is not None
        spec = write.spec
        try:
            if write.code is None:
                proposal = await self.guard.apropose(
                    write.intent,
                    preflight=write.preflight if spec.preflight else None,
                    correlation=_thread_id(request),
                )
                return self._proposal_message(request, proposal)
            outcome = await self.guard.aexecute(
                str(write.code),
                write.intent,
                write.mutate,
                reconcile=spec.reconcile,
                affected=write.affected,
                transport_errors=spec.transport_errors,
            )
        except (IntentError, TokenError) as exc:
            return self._phase_one_error(request, exc)
        return self._outcome_message(request, outcome)

    @override
    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResult:
        """Refuse, validate, or run through two-phase confirmation (the result bounded)."""
        verdict = self.review(request)
        if verdict is None:
            return bounded_result(handler(request), self.result_max_chars)
        if isinstance(verdict, ToolMessage):
            return verdict
        return bounded_result(self.run_write(request, verdict), self.result_max_chars)

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResult:
        """Async form of `wrap_tool_call`."""
        verdict = self.review(request)
        if verdict is None:
            return bounded_result(await handler(request), self.result_max_chars)
        if isinstance(verdict, ToolMessage):
            return verdict
        return bounded_result(await self.arun_write(request, verdict), self.result_max_chars)
