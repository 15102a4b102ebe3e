"""Which of a scope's tools a native disclosure mode discloses
(`disclosure=ScopeDisclosureOptions(scope_tools=...)`), and the scope's search tool.

In the native modes a disclosed definition stays in the conversation for the rest of the
session (written once, read on every later call), so disclosing a whole scope (13,000 tokens on
a 30-tool server) at each load is what the bill is made of. With `scope_tools="ranked"`
(the default) a scope discloses the tools the request names exactly and the ranker's `k` best
for it; the rest of the scope stays deferred and is reached with the search tool, restricted to
the active scope (the always-on tools are loaded anyway). Until disclosed, a call to one of them
is refused and never runs. `"whole"` discloses every tool of the scope (the first build).

Blast radius (`core.blast_radius`): a scope code opened discloses only its tools that read, by
ranking and by search alike (the model loads the scope itself to reach its writes, as under
the rewrite mode).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from attention_scoping.common.errors import render_payload
from attention_scoping.common.options import check_choice
from attention_scoping.disclosure.base import DEFAULT_DISCLOSURE, SEARCH_TOOL, DisclosureMode
from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog
from attention_scoping.scoping.start import ScopeStart

ScopeDisclosure = Literal["ranked", "whole"]
"""What a scope discloses in a native mode: the request's exact names and `k` best, or all."""
SCOPE_DISCLOSURES: tuple[str, ...] = ("ranked", "whole")
DEFAULT_SCOPE_DISCLOSURE: ScopeDisclosure = "ranked"
SCOPE_DISCLOSE_K = 5
"""Ranked tools a scope discloses per request (the gate's default `k`)."""


@dataclass(frozen=True)
class ScopeDisclosureOptions:
    """How scoping reaches the provider: the `mode` (`"auto"`, `"rewrite"`, `"anthropic"`,
    `"openai"`, `"allowed_tools"`; see `attention_scoping.disclosure`) and, in the native modes
    that disclose in the history, what a loaded scope discloses (`scope_tools`: `"ranked"`, the
    request's exact names and `SCOPE_DISCLOSE_K` best, or `"whole"`, every tool of the scope).
    `AttentionScopingMiddleware(disclosure="anthropic")` is `ScopeDisclosureOptions("anthropic")`.

    Example:
        ```python
        AttentionScopingMiddleware(scopes, disclosure=ScopeDisclosureOptions("anthropic", "whole"))
        ```
    """

    mode: DisclosureMode = DEFAULT_DISCLOSURE
    scope_tools: ScopeDisclosure = DEFAULT_SCOPE_DISCLOSURE

    def __post_init__(self) -> None:
        """A `scope_tools` value that does not exist fails here (the mode is checked where it
        is resolved)."""
        check_choice("scope_tools", self.scope_tools, SCOPE_DISCLOSURES)


def scope_disclosure_options(
    value: DisclosureMode | ScopeDisclosureOptions,
) -> ScopeDisclosureOptions:
    """The `disclosure=` option as its typed value (a mode string is the mode alone)."""
    return value if isinstance(value, ScopeDisclosureOptions) else ScopeDisclosureOptions(value)

OTHERS_STEP = (
    f"The other tools of this context are not loaded: call {SEARCH_TOOL} with a tool's name or "
    "what you need done to load it, then call it."
)

NO_SCOPE_STEP = f"No context is active: call {LOAD_CONTEXT} first, then search within it."


def exact_names(text: str, names: Sequence[str]) -> list[str]:
    """The names of `names` that `text` writes out, in `names` order."""
    from attention_scoping.gating.exact import ExactNames  # numpy: only when a scope is ranked

    return [names[i] for i in ExactNames(list(names)).rows(text)]


def ranked_names(
    start: ScopeStart,
    intent: str,
    scope_tools: Sequence[str],
    registered: Sequence[object],
    *,
    k: int,
    allowed: Collection[str] | None = None,
    exact_allowed: Collection[str] | None = None,
) -> list[str]:
    """Tools of `scope_tools` to disclose for `intent`: those it names exactly (among
    `exact_allowed`, default `allowed`), then the ranker's `k` best among `allowed` (default:
    all of `scope_tools`; scored at least the ranker's minimum), each once, in that order."""
    if not intent.strip():
        return []
    allowed = scope_tools if allowed is None else allowed
    can_name = set(allowed if exact_allowed is None else exact_allowed)
    exact = [n for n in exact_names(intent, scope_tools) if n in can_name]
    best = start.best_tools(intent, registered, k, [n for n in scope_tools if n in set(allowed)])
    return [*exact, *(n for n in best if n not in exact)]


def searched_names(
    start: ScopeStart,
    query: str,
    scope_tools: Sequence[str],
    registered: Sequence[object],
    *,
    k: int,
    allowed: Collection[str] | None = None,
) -> list[str]:
    """What the scope search loads for `query` among `allowed` (default: all of `scope_tools`):
    the tools it names exactly, when it names any (the model asked for those: every other
    definition would stay in the conversation for nothing); else the ranker's `k` best."""
    can = set(scope_tools if allowed is None else allowed)
    exact = [n for n in exact_names(query, scope_tools) if n in can]
    if exact:
        return exact
    return ranked_names(start, query, scope_tools, registered, k=k, allowed=allowed)


def with_ranked_text(text: str, catalog: ScopeCatalog, scope: str, shown: Sequence[str]) -> str:
    """A `load_context` result's JSON text saying which of the scope's tools are loaded
    (`shown`, and the always-on ones) and which load with the search tool."""
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    if not isinstance(payload, dict):
        return text
    own = catalog.scopes[scope].tools
    payload["tools_now_available"] = [*shown, *(t for t in catalog.always_on if t not in shown)]
    payload["other_tools"] = [t for t in own if t not in set(shown)]
    payload["other_tools_step"] = OTHERS_STEP
    return render_payload(payload)


def scope_search_payload(
    query: str, scope: str | None, loaded: Sequence[str], *, writes_held: bool = False
) -> str:
    """The text of the scope search's result (and of the pair a new turn adds)."""
    if scope is None:
        empty = {"status": "ok", "query": query, "loaded": [], "message": NO_SCOPE_STEP}
        return render_payload(empty)
    payload: dict[str, object] = {
        "status": "ok",
        "query": query,
        "context": scope,
        "loaded": list(loaded),
    }
    if loaded:
        payload["next_step"] = "Call the loaded tools directly now."
    else:
        payload["message"] = (
            f"No tool of {scope!r} matches; describe the capability differently, or call "
            f"{LOAD_CONTEXT} if the request needs another context."
        )
    if writes_held:
        payload["writes_step"] = (
            f"This context was opened for you: its tools that change something do not load. "
            f"Call {LOAD_CONTEXT} with it yourself if the request needs one of them."
        )
    return render_payload(payload)
