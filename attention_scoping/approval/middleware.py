"""Approval of write tools by a human, with signed single-use tokens bound to the exact call.

The model never asks "would you like me to proceed?": it calls the write tool, and the runtime
pauses the graph with LangGraph `interrupt` and asks the human. The interrupt carries an
approval token (`appr_...`, from `attention_scoping.safety.tokens`): HMAC-signed, expiring,
single-use and bound to the hash of the tool name plus the canonical JSON of the arguments. The
human (their UI) answers with the token; the call runs only if the token verifies for exactly
the arguments about to run. Tampered, expired, replayed tokens and arguments changed after
approval are refused with a clear message, and an edit gets a new token and a new question.

The interrupt value follows `HumanInTheLoopMiddleware`'s per-call shape (`type:
"tool_approval"`, `tool_call_id`, `name`, `args`, `description`) plus the token, so a UI built for
HITL needs one addition: send the token back.

Resume values:
    - `{"type": "approve", "token": "appr_..."}` (or the bare token string)
    - `{"type": "edit", "args": {...}}` (HITL's `{"edited_action": {"name", "args"}}` works too):
      validated, then asked again with a new token
    - `{"type": "reject", "message": "..."}`

`ApprovalGate` is used by `ToolGateway.execute_tool`; `ApprovalMiddleware` gives tools bound
directly to the model (e.g. the tools of a scope) the same flow.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import AgentMiddleware, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.config import get_config
from langgraph.types import interrupt
from typing_extensions import override

from attention_scoping.adapters.hooks import AsyncToolHandler, ToolHandler, ToolResult
from attention_scoping.adapters.refusals import bounded_result, refusal_message
from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.errors import ErrorCode, refusal
from attention_scoping.common.limits import RESULT_MAX_CHARS
from attention_scoping.common.options import check_at_least
from attention_scoping.risk import declared_write, metadata_of
from attention_scoping.safety.canonical import CanonicalJSONError, tool_call_hash
from attention_scoping.safety.tokens import TokenError, TokenIssuer
from attention_scoping.storage.retry import DatabaseUnavailableError

if TYPE_CHECKING:
    from attention_scoping.adapters.tools import ToolLike

logger = logging.getLogger(__name__)

__all__ = [
    "APPROVAL_KIND",
    "WRITE_TOOLS_PROMPT",
    "Approval",
    "ApprovalGate",
    "ApprovalMiddleware",
    "asks_approval",
    "write_tool_names",
]

APPROVAL_KIND = "appr"
"""Token kind of approvals: tokens read `appr_<claims>.<signature>`."""

WRITE_TOOLS_PROMPT = """\
# Write tools
Tools that change something (create, send, schedule, pay, delete) ask the user for approval \
by themselves when you call them. So call them directly with complete arguments: do not ask the \
user "should I proceed?", do not list their parameters in text, and do not wait for a \
confirmation. Use sensible defaults for details the user did not give. If the user rejects a \
call, do not retry it unless they ask."""
"""System-prompt text for agents with write tools: add it to your own system prompt (e.g.
`create_agent(..., system_prompt=my_prompt + "\\n\\n" + WRITE_TOOLS_PROMPT)`)."""

Validate = Callable[[Mapping[str, Any]], "dict[str, Any] | None"]
"""Edited arguments -> an error payload, or None when they are valid."""


@dataclass(frozen=True)
class Approval:
    """The outcome of asking: the arguments to run and a receipt, or a refusal payload."""

    arguments: dict[str, Any]
    receipt: dict[str, Any] | None = None
    refusal: dict[str, Any] | None = None

    @property
    def approved(self) -> bool:
        """Whether the call may run."""
        return self.refusal is None


class ApprovalGate:
    """Ask a human to approve one exact tool call, with a signed single-use token.

    Example:
        ```python
        from attention_scoping.approval.middleware import ApprovalGate
        from attention_scoping.safety.tokens import TokenIssuer
        from attention_scoping.safety.token_stores import SqliteTokenStore

        gate = ApprovalGate(TokenIssuer(store=SqliteTokenStore("approvals.db")), ttl=600)
        gateway = ToolGateway(tools, approval=gate)
        # the graph pauses; the UI shows interrupt.value and answers:
        agent.invoke(Command(resume={"type": "approve", "token": value["approval_token"]}), cfg)
        ```
    """

    def __init__(
        self,
        issuer: TokenIssuer | None = None,
        *,
        ttl: float = 600.0,
        max_edits: int = 3,
        description_prefix: str = "Approval required",
    ) -> None:
        """Configure the gate.

        Args:
            issuer: Signs and checks tokens; default `TokenIssuer()` (HMAC key from
                `$ATTENTION_SCOPING_SECRET`, in-memory single-use store). Share one store
                (`SqliteTokenStore`) when several processes resume graphs.
            ttl: Seconds an approval token stays valid.
            max_edits: Edits allowed for one call before it is refused.
            description_prefix: First line of the text shown to the reviewer.

        Raises:
            SecretConfigError: no signing key configured, or a weak one.
        """
        if ttl <= 0:
            msg = f"ttl must be positive, not {ttl!r}"
            raise ValueError(msg)
        check_at_least("max_edits", max_edits)
        self.issuer = issuer if issuer is not None else TokenIssuer()
        self.ttl = ttl
        self.max_edits = max_edits
        self.description_prefix = description_prefix

    # -- pure steps -------------------------------------------------------------------------

    @staticmethod
    def intent(tool: str, arguments: Mapping[str, Any]) -> str:
        """The hash an approval is bound to: tool name + canonical JSON of the arguments."""
        return tool_call_hash(tool, arguments)

    def _token_id(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        tool_call_id: str | None,
        thread: str | None,
        round_: int,
    ) -> str | None:
        """The id of the token asking about one call in one round: the same on every re-run of
        the node (so a rejection burns the token the human saw), new for each edit."""
        if tool_call_id is None:
            return None
        intent = self.intent(tool, arguments)
        return self.issuer.derive_id(
            APPROVAL_KIND, thread or "", str(tool_call_id), str(round_), intent
        )

    def request(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        tool_call_id: str | None = None,
        risk: str = "write",
        description: str = "",
        thread_id: str | None = None,
        token_id: str | None = None,
    ) -> dict[str, Any]:
        """The interrupt value for one call: HITL's per-call shape plus a token bound to the
        call and to its thread (`thread_id`)."""
        token = self.issuer.issue(
            self.intent(tool, arguments),
            kind=APPROVAL_KIND,
            ttl=self.ttl,
            subject=tool,
            context=thread_id,
            token_id=token_id,
        )
        shown = json.dumps(dict(arguments), ensure_ascii=False, indent=2, sort_keys=True)
        text = f"{self.description_prefix}: {tool} ({risk})"
        if description:
            text += f"\n{description}"
        text += f"\n\nArguments:\n{shown}\n\nApprove to run it once with exactly these arguments."
        return {
            "type": "tool_approval",
            "tool_call_id": tool_call_id,
            "name": tool,
            "args": dict(arguments),
            "description": text,
            "risk": risk,
            "approval_token": token,
            "expires_at": self.issuer.clock() + self.ttl,
            "allowed_decisions": ["approve", "edit", "reject"],
        }

    def refusal(self, tool: str, reason: str, message: str) -> dict[str, Any]:
        """Error payload for a call that was not approved; the model reads `next_step`."""
        rejected = reason == "rejected"
        return dict(
            refusal(
                ErrorCode.REJECTED_BY_USER if rejected else ErrorCode.APPROVAL_REFUSED,
                f"{message} Nothing was run.",
                tool=tool,
                reason=reason,
                next_step=(
                    f"Tell the user that {tool} was not run"
                    + ("" if rejected else f" because the approval was refused ({reason})")
                    + ". Do not call it again unless the user asks; a new call asks for a new "
                    "approval."
                ),
            )
        )

    def verify(
        self, tool: str, arguments: Mapping[str, Any], token: Any, *, thread_id: str | None = None
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Consume `token` for exactly (`tool`, `arguments`) in thread `thread_id`:
        (receipt, None) or (None, refusal). Never raises for a bad token or a store outage."""
        if not isinstance(token, str) or not token:
            return None, self.refusal(
                tool,
                "missing_token",
                "An approval must carry the approval token from the request.",
            )
        try:
            intent = self.intent(tool, arguments)
        except CanonicalJSONError as exc:
            return None, self.refusal(
                tool, "invalid_decision", f"The arguments are not JSON: {exc}."
            )
        try:
            claims = self.issuer.consume(token, intent, kind=APPROVAL_KIND, context=thread_id)
        except TokenError as exc:
            logger.warning("approval of %s refused: %s (%s)", tool, exc.reason, exc)
            return None, self.refusal(tool, exc.reason, f"The approval was refused: {exc}.")
        except DatabaseUnavailableError as exc:  # fail closed: the human can approve again
            logger.warning("approval of %s refused: token store unavailable (%s)", tool, exc)
            return None, self.refusal(
                tool, "store_unavailable", "The approval could not be checked (store down)."
            )
        receipt = {
            "token_id": claims.token_id,
            "approved_at": self.issuer.clock(),
            "expires_at": claims.expires_at,
        }
        return receipt, None

    def burn(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        token_id: str | None,
        expires_at: float,
        offered: Any = None,
        thread_id: str | None = None,
    ) -> None:
        """Use up the token of a rejected request (and a token sent back with the rejection),
        so it can approve nothing afterwards, in this thread or any other."""
        try:
            if token_id is not None:
                self.issuer.burn(token_id, expires_at)
            if isinstance(offered, str) and offered:
                claims = self.issuer.verify(
                    offered, self.intent(tool, arguments), kind=APPROVAL_KIND, context=thread_id
                )
                self.issuer.burn(claims.token_id, claims.expires_at)
        except TokenError:  # not a live token of this call: nothing to burn
            return
        except DatabaseUnavailableError as exc:  # the rejection stands; the token expires
            logger.warning("could not burn the rejected approval of %s: %s", tool, exc)

    # -- the LangGraph step -----------------------------------------------------------------

    def obtain(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        tool_call_id: str | None = None,
        risk: str = "write",
        description: str = "",
        validate: Validate | None = None,
        thread_id: str | None = None,
    ) -> Approval:
        """Pause the graph until a human decides; must run inside a graph with a checkpointer.

        Tokens are bound to the thread (`thread_id`, by default the LangGraph `thread_id` of
        the run) and burnt on rejection. On resume the node runs again from the start and
        `interrupt` returns the stored decision, so nothing before it may have side effects
        (nothing here does: tokens are verified when they are used, not when they are issued).
        """
        thread = thread_id if thread_id is not None else current_thread_id()
        args = dict(arguments)
        edited = False
        for round_ in range(self.max_edits + 1):
            token_id = self._token_id(tool, args, tool_call_id, thread, round_)
            value = self.request(
                tool,
                args,
                tool_call_id=tool_call_id,
                risk=risk,
                description=description,
                thread_id=thread,
                token_id=token_id,
            )
            decision = interrupt(value)
            kind, payload = _parse_decision(decision)
            if kind == "edit":
                new_args = payload.get("args")
                if not isinstance(new_args, Mapping):
                    return Approval(
                        args,
                        refusal=self.refusal(
                            tool, "invalid_decision", "An edit must carry the new arguments."
                        ),
                    )
                problem = validate(new_args) if validate is not None else None
                if problem is None:
                    problem = self._not_json(tool, new_args)
                if problem is not None:
                    return Approval(dict(new_args), refusal=problem)
                args, edited = dict(new_args), True
                continue  # an edit needs a new token: ask again for the edited call
            if kind == "reject":
                self.burn(
                    tool,
                    args,
                    token_id=token_id,
                    expires_at=value["expires_at"],
                    offered=payload.get("token"),
                    thread_id=thread,
                )
            return self._decided(tool, args, kind, payload, decision, thread, edited)
        return Approval(
            args,
            refusal=self.refusal(tool, "too_many_edits", f"More than {self.max_edits} edits."),
        )

    def _not_json(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """A refusal for edited arguments canonical JSON cannot hold (NaN...), else None."""
        try:
            self.intent(tool, arguments)
        except CanonicalJSONError as exc:
            return self.refusal(
                tool, "invalid_decision", f"The edited arguments are not JSON: {exc}."
            )
        return None

    def _decided(
        self,
        tool: str,
        args: dict[str, Any],
        kind: str,
        payload: dict[str, Any],
        decision: Any,
        thread: str | None,
        edited: bool,
    ) -> Approval:
        """The outcome of an approve, reject or unrecognised decision."""
        if kind == "reject":
            reason = payload.get("message") or "the user rejected the call"
            return Approval(
                args, refusal=self.refusal(tool, "rejected", f"The user rejected it: {reason}.")
            )
        if kind != "approve":
            shown = repr(decision)
            shown = shown if len(shown) <= 200 else shown[:200] + "..."
            return Approval(
                args,
                refusal=self.refusal(
                    tool,
                    "invalid_decision",
                    f"Unrecognised decision {shown}; expected approve, edit or reject.",
                ),
            )
        offered = payload.get("args")
        if offered is not None and not isinstance(offered, Mapping):
            return Approval(
                args,
                refusal=self.refusal(tool, "invalid_decision", "`args` must be an object."),
            )
        if offered is not None and offered != args:
            # The approved token is for `args`; anything else is a change after approval.
            _, refusal = self.verify(tool, offered, payload.get("token"), thread_id=thread)
            if refusal is None:  # cannot happen with a token for `args`; be strict
                refusal = self.refusal(tool, "intent_mismatch", "Arguments changed.")
            return Approval(
                dict(offered) if isinstance(offered, Mapping) else args, refusal=refusal
            )
        receipt, refusal = self.verify(tool, args, payload.get("token"), thread_id=thread)
        if refusal is not None:
            return Approval(args, refusal=refusal)
        assert receipt is not None
        return Approval(args, receipt={**receipt, "edited": edited})


def current_thread_id() -> str | None:
    """The LangGraph `thread_id` of the run this code executes in, or None outside a run."""
    try:
        config = get_config()
    except RuntimeError:  # not inside a runnable context
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _parse_decision(decision: Any) -> tuple[str, dict[str, Any]]:
    """Normalize a resume value to (kind, payload)."""
    if isinstance(decision, str):
        return ("approve", {"token": decision}) if decision.startswith("appr_") else ("?", {})
    if not isinstance(decision, Mapping):
        return "?", {}
    kind = str(decision.get("type", ""))
    payload = dict(decision)
    if kind == "edit" and "args" not in payload:
        action = payload.get("edited_action")
        if isinstance(action, Mapping):
            payload["args"] = action.get("args")
    return kind, payload


class ApprovalMiddleware(AgentMiddleware):
    """Token-backed approval for write tools bound directly to the model.

    For tools behind a `ToolGateway` the gateway asks itself; this middleware covers tools the
    model calls by name (a scope's tools, say). Place it last, after scoping and gating, so a
    refused call never reaches a human. It plays the role of
    `HumanInTheLoopMiddleware(interrupt_mode="per_call")` with the same interrupt shape, plus
    the token. Every result it passes on is bounded by `common.limits.RESULT_MAX_CHARS` (the
    package's one limit, cut marked; `result_max_chars` on the instance, None leaves it whole),
    so a stack with approval alone bounds results as scoping and gating do.

    Example:
        ```python
        approvals = ApprovalMiddleware(ApprovalGate(), tools=[refund, send_invoice])
        hesitation = HesitationMiddleware()  # before the approvals: a write is approved below
        agent = create_agent(model, middleware=[scoping, hesitation, approvals],
                             checkpointer=InMemorySaver())
        ```
    """

    def __init__(
        self,
        gate: ApprovalGate | None = None,
        *,
        tools: Iterable[str | ToolLike] | None = None,
        name: str | None = None,
    ) -> None:
        """Args:
        gate: The approval gate (default `ApprovalGate()`).
        tools: Tools (or names) needing approval; default: every declared write
            (`asks_approval`: `risk="write"` unless `requires_approval=False`,
            `requires_approval=True`, a mutation flag or an MCP write hint).
        name: Middleware name, to add two instances to one agent.
        """
        super().__init__()
        self.gate = gate if gate is not None else ApprovalGate()
        self.write_tools: frozenset[str] | None = (
            None
            if tools is None
            else frozenset(t if isinstance(t, str) else tool_name(t) for t in tools)
        )
        self._name = name

    result_max_chars: int | None = RESULT_MAX_CHARS
    """The bound of every tool result this middleware passes on (`common.limits`)."""

    @property
    def name(self) -> str:
        """Node-name prefix."""
        return self._name or type(self).__name__

    def needs_approval(self, request: ToolCallRequest) -> bool:
        """Whether this call must be approved."""
        call_name = request.tool_call["name"]
        if self.write_tools is not None:
            return call_name in self.write_tools
        return asks_approval(request.tool)

    def _resolve(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        call = request.tool_call
        outcome = self.gate.obtain(
            call["name"],
            call.get("args") or {},
            tool_call_id=call.get("id"),
            description=getattr(request.tool, "description", "") or "",
        )
        if outcome.refusal is not None:
            return refusal_message(call, outcome.refusal)
        return request.override(tool_call={**call, "args": outcome.arguments})

    @override
    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResult:
        """Ask for approval of write tools, then run the approved call (its result bounded)."""
        if not self.needs_approval(request):
            return self._bounded(handler(request))
        resolved = self._resolve(request)
        return resolved if isinstance(resolved, ToolMessage) else self._bounded(handler(resolved))

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResult:
        """Async form of `wrap_tool_call`."""
        if not self.needs_approval(request):
            return self._bounded(await handler(request))
        resolved = self._resolve(request)
        if isinstance(resolved, ToolMessage):
            return resolved
        return self._bounded(await handler(resolved))

    def _bounded(self, result: ToolResult) -> ToolResult:
        return bounded_result(result, self.result_max_chars)


def asks_approval(tool: object) -> bool:
    """Whether a human must approve a call of `tool`: it is a declared write
    (`attention_scoping.risk.declared_write`: `risk="write"`, `requires_approval=True`, a
    mutation flag, MCP `destructiveHint: true` or `readOnlyHint: false`) and its metadata does
    not say `requires_approval=False`.

    A tool nobody classified is not asked for: it may write, so code never opens or names it
    (`attention_scoping.risk.declared_read`), but only a declared write goes to a human.
    """
    return declared_write(tool) and metadata_of(tool).get("requires_approval") is not False


def write_tool_names(tools: Sequence[ToolLike]) -> list[str]:
    """Names of the tools approval asks for (`asks_approval`); for HITL `interrupt_on` too."""
    return [tool_name(tool) for tool in tools if asks_approval(tool)]
