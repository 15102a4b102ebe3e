"""The enforced scope gate: decide whether a tool call may run in the current scope.

Hiding a tool from the model does not stop it from running if the model calls it anyway, so
every call is reviewed here before execution. A refusal is a structured payload the model can
act on (what was wrong, which tools exist now, the exact next call).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attention_scoping.common.blast_radius import Opener, may_open
from attention_scoping.common.errors import ErrorCode, ErrorPayload, refusal, unknown_tool
from attention_scoping.common.messages import MessageLike, tool_calls_of
from attention_scoping.common.text import did_you_mean_hint
from attention_scoping.scoping.breadcrumbs import scope_tools, unknown_context_payload
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog

UNKNOWN_TOOL_STEP = (
    f"Call one of the available tools, or call {LOAD_CONTEXT} to switch to the context that "
    "has what you need."
)
"""`unknown_tool`: what the model does next (the scope gate's refusal)."""


def sibling_calls(messages: Sequence[MessageLike], call_id: str | None) -> list[dict[str, Any]]:
    """The tool calls of the model message that issued `call_id` (parallel calls of one step)."""
    if call_id is None:
        return []
    for message in reversed(messages):
        calls = tool_calls_of(message)
        if any(c.get("id") == call_id for c in calls):
            return calls
    return []


def accepted_switch(
    catalog: ScopeCatalog, calls: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The `load_context` call of a step that takes effect: the first one naming a real scope."""
    for call in calls:
        if call.get("name") == LOAD_CONTEXT and _is_scope(catalog, _target(call)):
            return call
    return None


def _where(scope: str | None) -> str:
    return f"in the active context {scope!r}" if scope is not None else "while no context is active"


def _target(call: Mapping[str, Any]) -> Any:
    """The scope a `load_context` call names (any JSON value a model may have written)."""
    args = call.get("args")
    return args.get("name") if isinstance(args, Mapping) else None


def _is_scope(catalog: ScopeCatalog, target: Any) -> bool:
    return isinstance(target, str) and target in catalog.scopes


def review_load_context(
    catalog: ScopeCatalog, call: Mapping[str, Any], siblings: Sequence[Mapping[str, Any]]
) -> ErrorPayload | None:
    """Refusal payload for a bad `load_context` call, or None to let it run.

    Refuses an unknown name, and every `load_context` of a step but the first valid one (two
    switches in one step would race on `active_context`).
    """
    target = _target(call)
    if not _is_scope(catalog, target):
        return unknown_context_payload(catalog, target)
    winner = accepted_switch(catalog, siblings)
    if winner is not None and winner.get("id") != call.get("id"):
        return refusal(
            ErrorCode.ONE_CONTEXT_PER_STEP,
            (
                f"{LOAD_CONTEXT}({_target(winner)!r}) is already switching context in this step; "
                "only one context can be active."
            ),
            requested=target,
            next_step=(
                f"Use the tools of {_target(winner)!r} now; call {LOAD_CONTEXT}({target!r}) "
                "later if the request still needs it."
            ),
        )
    return None


def closed_writes(
    catalog: ScopeCatalog, scope: str | None, opener: Opener, tools: Mapping[str, object]
) -> frozenset[str]:
    """The tools of `scope` kept out of view because `opener` may not open them
    (`core.blast_radius.may_open`): when code opened the scope, its tools that write.
    Always-on tools stay (the application chose them); `tools` maps names to tool objects."""
    if scope is None or opener != "code":
        return frozenset()
    always_on = frozenset(catalog.always_on)
    return frozenset(
        name
        for name in catalog.scopes[scope].tools
        if name not in always_on and name in tools and not may_open(tools[name], opener)
    )


def closed_write_payload(
    catalog: ScopeCatalog, scope: str, name: str, hidden: frozenset[str]
) -> ErrorPayload:
    """Refusal of a call to a writing tool of a scope that code opened for the model: the
    model opens writes itself, by loading the scope with `load_context`."""
    return refusal(
        ErrorCode.TOOL_NOT_IN_CONTEXT,
        (
            f"{name!r} changes something and is not in view: context {scope!r} was opened for "
            "you, so only its tools that read are shown. It was not run."
        ),
        tool=name,
        active_context=scope,
        available=[t for t in scope_tools(catalog, scope) if t not in hidden],
        contexts_with_tool=list(catalog.scopes_offering(name)),
        next_step=(
            f"If the user asked for this change, call {LOAD_CONTEXT}({scope!r}) yourself, "
            f"then call {name} again."
        ),
    )


def review_call(
    catalog: ScopeCatalog,
    scope: str | None,
    call: Mapping[str, Any],
    siblings: Sequence[Mapping[str, Any]],
    *,
    extra_visible: frozenset[str] = frozenset(),
    hidden: frozenset[str] = frozenset(),
) -> Mapping[str, Any] | None:
    """Refusal payload for a tool call outside what the model was shown, or None when it may
    run.

    Args:
        catalog: The validated scopes.
        scope: The resolved active scope (None: unscoped).
        call: The tool call (`name`, `args`, `id`).
        siblings: All calls of the same model message, `call` included.
        extra_visible: Tools outside `scope` that are shown anyway (the start set, unscoped
            tools shown by policy).
        hidden: Tools of `scope` kept out of view (`closed_writes`).
    """
    name = call.get("name", "")
    if name == LOAD_CONTEXT:
        return review_load_context(catalog, call, siblings)
    visible = catalog.visible(scope) - hidden
    if name in visible or name in extra_visible:
        return None

    switch = accepted_switch(catalog, siblings)
    if switch is not None:
        new_scope = _target(switch)
        if name in catalog.visible(new_scope):
            return refusal(
                ErrorCode.CONTEXT_SWITCHED_IN_SAME_STEP,
                (
                    f"{name!r} was not run: it was called in the same step as "
                    f"{LOAD_CONTEXT}({new_scope!r}), before that context was loaded. "
                    f"Context {new_scope!r} is now loaded."
                ),
                tool=name,
                active_context=new_scope,
                available=scope_tools(catalog, new_scope),
                next_step=f"Call {name} again now, with the same arguments.",
            )

    if scope is not None and name in hidden:
        return closed_write_payload(catalog, scope, name, hidden)
    next_scope = _target(switch) if switch is not None else scope
    shown = [t for t in scope_tools(catalog, next_scope) if next_scope != scope or t not in hidden]
    available = shown + sorted(extra_visible - set(shown))
    offering = catalog.scopes_offering(name)
    if offering:
        if len(offering) == 1:
            step = f"Call {LOAD_CONTEXT}({offering[0]!r}) first, then call {name} again."
        else:
            choices = ", ".join(repr(s) for s in offering)
            step = f"Call {LOAD_CONTEXT} with one of {choices} first, then call {name} again."
        return refusal(
            ErrorCode.TOOL_NOT_IN_CONTEXT,
            f"{name!r} is not available {_where(scope)}; it was not run.",
            tool=name,
            active_context=scope,
            available=available,
            contexts_with_tool=list(offering),
            next_step=step,
        )
    return unknown_tool(
        name,
        UNKNOWN_TOOL_STEP,
        available=available,
        where=f" {_where(scope)}",
        hint=did_you_mean_hint(name, available),
        active_context=scope,
    )


@dataclass(frozen=True)
class Adoption:
    """A call that loads a scope by being made (code opens it for the model); `records` marks
    the one call of the step that records the switch in state (two updates of one key in one
    step would conflict)."""

    scope: str
    records: bool


def _adoptable(
    catalog: ScopeCatalog,
    name: Any,
    offered: frozenset[str],
    switch: bool,
    writers: frozenset[str],
) -> str | None:
    """The scope a call to `name` would load (its first scope), if such calls may load one:
    code opens scopes only through tools that read."""
    if not isinstance(name, str) or name in writers or not (name in offered or switch):
        return None
    offering = catalog.scopes_offering(name)
    return offering[0] if offering else None


def adopted_scope(
    catalog: ScopeCatalog,
    scope: str | None,
    call: Mapping[str, Any],
    siblings: Sequence[Mapping[str, Any]],
    *,
    offered: frozenset[str] = frozenset(),
    switch: bool = False,
    writers: frozenset[str] = frozenset(),
) -> Adoption | None:
    """Whether `call` runs by loading its tool's scope: a tool of the start set `offered` this
    turn (outside the active scope), or any scoped tool when `switch` is on, provided it reads
    (`writers` never adopt: a write is opened by the model's own `load_context`). An explicit
    `load_context` in the same step takes precedence; otherwise the step's first such call
    decides the scope, and calls to tools outside it are left to the scope gate (which lets
    the start set's tools run and refuses the rest)."""
    name = call.get("name")
    if name == LOAD_CONTEXT or name in catalog.visible(scope):
        return None
    if accepted_switch(catalog, siblings) is not None:
        return None
    first = next(
        (
            (sib, target)
            for sib in siblings
            if sib.get("name") not in catalog.visible(scope)
            and (target := _adoptable(catalog, sib.get("name"), offered, switch, writers))
            is not None
        ),
        None,
    )
    if first is None or _adoptable(catalog, name, offered, switch, writers) is None:
        return None
    leader, chosen = first
    if name not in catalog.visible(chosen):
        return None
    records = leader.get("id") == call.get("id") and leader.get("name") == name
    return Adoption(chosen, records)
