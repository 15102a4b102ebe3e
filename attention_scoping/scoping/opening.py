"""Who opened the active scope: the record in state, and how to read it back.

The blast-radius rule (`core.blast_radius`) shows a scope's writing tools only when the model
(`load_context`) or the application (`active_context` in the input, `update_state`, the default
scope) opened it; a scope that code opened for the model (pre-selection, a start-set call,
`on_foreign_tool="switch"`) shows its reading tools. Every opening made by this package is
recorded under `OPENED_KEY`; an `active_context` that differs from the record was set by the
application. Framework-free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from attention_scoping.common.blast_radius import OPENERS, Opener
from attention_scoping.scoping.breadcrumbs import STATE_KEY
from attention_scoping.scoping.preselect import SELECTION_KEY

OPENED_KEY = "scope_opened"
"""State key of the record of who opened the active scope (`ScopeOpened`)."""


class ScopeOpened(TypedDict):
    """Who opened `scope` (`"model"`, `"application"` or `"code"`), and in which user turn
    (the turn key of `core.messages.current_turn`, as in `scope_selection`)."""

    scope: str | None
    by: Opener
    turn: str


def opened_record(scope: str | None, by: Opener, turn: str) -> ScopeOpened:
    """The record of one opening, as stored in state."""
    return {"scope": scope, "by": by, "turn": turn}


def read_opener(state: Mapping[str, Any], scope: str | None) -> tuple[Opener, bool]:
    """Who opened `scope` (the scope in force for `state`), and whether the application has
    just named it in `active_context` (so it wins over pre-selection for this turn).

    The record wins when it names `scope`. Without any record, a scope that pre-selection
    chose (`scope_selection` names it) counts as opened by code: a state that dropped the
    record fails closed. Otherwise the application chose it: a value it put in
    `active_context` (input, `update_state`, its own tools), or the default scope.
    """
    record = state.get(OPENED_KEY)
    if isinstance(record, Mapping) and record.get("scope") == scope:
        by = record.get("by")
        if by in OPENERS:
            return by, False
    if scope is not None and not isinstance(record, Mapping) and _selected(state, scope):
        return "code", False
    return "application", scope is not None and state.get(STATE_KEY) == scope


def _selected(state: Mapping[str, Any], scope: str) -> bool:
    """Whether the pre-selection record in `state` chose `scope`."""
    selection = state.get(SELECTION_KEY)
    return isinstance(selection, Mapping) and selection.get("scope") == scope


def same_opening(record: object, scope: str | None, by: Opener) -> bool:
    """Whether `record` already says that `by` opened `scope` (the turn aside)."""
    if not isinstance(record, Mapping):
        return scope is None
    return record.get("scope") == scope and record.get("by") == by
