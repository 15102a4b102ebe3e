"""The gate decision: which candidate tools get their full schema on this model call, and why.

Pure functions of (intent, candidates, history, state, config). Order of precedence:
preconditions (an unmet one hides any tool) > pinned > tools the user named (they take ranked
slots first) > similarity ranking above the threshold for the remaining of the k slots; on top
of those, tools the model was refused this turn (it retries with their schema) and tools used in
the current task (sticky), at most k of each.

Fail closed (`attention_scoping.risk`): the gate is code deciding for the model, so every way it
puts a tool in view on its own (ranking, a name in the user's message, every candidate fitting
within k, a refused call retried, a tool used earlier in the task) takes declared reads only. A
tool that is not a declared read (a declared write, or one nobody classified) is shown only when
the application pins it.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from attention_scoping.common.messages import (
    MessageLike,
    tool_calls_of,
    tool_error_code,
    user_turn_starts,
)
from attention_scoping.common.text import identifier_tokens, split_identifier
from attention_scoping.errors import ErrorCode
from attention_scoping.gating.order import Ranking
from attention_scoping.gating.preconditions import Precondition, unmet

NOT_AVAILABLE = ErrorCode.TOOL_NOT_AVAILABLE
"""Error code of a call to a known tool whose schema was not sent; it is promoted next call."""

Reason = Literal[
    "pinned",
    "named_by_user",
    "requested",
    "sticky",
    "ranked",
    "all_fit",
    "below_threshold",
    "beyond_k",
    "precondition",
    "writes",
]


@dataclass(frozen=True)
class Verdict:
    """Why one tool was shown or hidden on one call."""

    name: str
    shown: bool
    reason: Reason
    score: float | None = None
    rank: int | None = None
    detail: str = ""

    def explain(self, k: int, threshold: float) -> str:
        """One sentence a developer can read: 'X was hidden: rank 7 > k=5 (score 0.41).'"""
        score = f"score {self.score:.3f}" if self.score is not None else "no score"
        rank = f"rank {self.rank}" if self.rank is not None else "unranked"
        text = {
            "pinned": "pinned (always shown)",
            "named_by_user": "the user named it",
            "requested": "the model called it this turn and was told to retry with its schema",
            "sticky": "used earlier in this task (sticky)",
            "ranked": f"{rank} within k={k}, {score} >= threshold {threshold:g}",
            "all_fit": f"all candidates fit within k={k}",
            "below_threshold": f"{score} < threshold {threshold:g} ({rank})",
            "beyond_k": f"{rank} > k={k} ({score})",
            "precondition": self.detail,
            "writes": (
                "it is not a declared read, and the gate shows only declared reads on its own; "
                "it is shown when the application pins it"
            ),
        }[self.reason]
        return f"{self.name!r} was {'shown' if self.shown else 'hidden'}: {text}."


class Decision:
    """The outcome of one gate call: the tools shown, and a verdict for every candidate.

    Verdicts of the ranked tail are built on demand, so a decision over a thousand tools costs
    little more than the ranking itself.
    """

    def __init__(
        self,
        intent: str,
        candidates: Sequence[str],
        fixed: dict[str, Verdict],
        ranked: Sequence[tuple[str, float]] = (),
        *,
        k: int = 5,
        threshold: float = 0.0,
        slots: int = 5,
    ) -> None:
        """`fixed`: verdicts decided without ranking; `ranked`: (name, score) best first."""
        self.intent = intent
        self.k = k
        self.threshold = threshold
        self._candidates = list(candidates)
        self._fixed = fixed
        self._ranked = ranked if isinstance(ranked, Ranking) else list(ranked)
        self._slots = max(slots, 0)
        taken = [name for name, value in self._ranked[: self._slots] if value >= threshold]
        picked = {n for n, verdict in fixed.items() if verdict.shown}.union(taken)
        where = positions(candidates)
        order = where.__getitem__ if picked <= where.keys() else self._candidates.index
        self.shown: tuple[str, ...] = tuple(sorted(picked, key=order))
        self._verdicts: dict[str, Verdict] | None = None

    @property
    def candidate_names(self) -> list[str]:
        """The names this decision chose among, in request order."""
        return list(self._candidates)

    @property
    def withheld_writes(self) -> list[str]:
        """Candidates hidden because they are not declared reads (reason `writes`); the gate
        never names them (not in the summary pool, not loaded by a search)."""
        return [n for n, v in self._fixed.items() if v.reason == "writes"]

    def _ranked_verdicts(self, limit: int | None = None) -> list[Verdict]:
        """Verdicts of the ranked tools, best first (the first `limit` when given)."""
        out = []
        kept = 0
        for rank, (name, value) in enumerate(self._ranked[:limit], start=1):
            if value < self.threshold:
                out.append(Verdict(name, False, "below_threshold", value, rank))
            elif kept < self._slots:
                out.append(Verdict(name, True, "ranked", value, rank))
                kept += 1
            else:
                out.append(Verdict(name, False, "beyond_k", value, rank))
        return out

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """One verdict per candidate, in candidate order."""
        if self._verdicts is None:
            ranked = {v.name: v for v in self._ranked_verdicts()}
            self._verdicts = {
                n: self._fixed.get(n) or ranked[n]
                for n in self._candidates
                if n in self._fixed or n in ranked
            }
        return self._verdicts

    def explain(self, name: str) -> str:
        """Why `name` was shown or hidden (or that the gate never saw it)."""
        verdict = self.verdicts.get(name)
        if verdict is None:
            return f"{name!r} was not a candidate of this call (not registered, or out of scope)."
        return verdict.explain(self.k, self.threshold)

    def as_trace(self, max_rank: int | None = None) -> dict[str, Any]:
        """A JSON-able trace: intent, shown tools, and the verdicts (ranked ones down to
        `max_rank` when given; `hidden_below` counts the rest)."""
        rows: list[dict[str, Any]] = []
        cut = 0
        rows.extend(_row(verdict) for verdict in self._fixed.values())
        rows.extend(_row(verdict) for verdict in self._ranked_verdicts(max_rank))
        if max_rank is not None and len(self._ranked) > max_rank:
            cut = len(self._ranked) - max_rank
        return {
            "intent": self.intent,
            "k": self.k,
            "threshold": self.threshold,
            "shown": list(self.shown),
            "verdicts": rows,
            "hidden_below": cut,
        }


def _row(v: Verdict) -> dict[str, Any]:
    return {
        "name": v.name,
        "shown": v.shown,
        "reason": v.reason,
        "score": None if v.score is None else round(v.score, 4),
        "rank": v.rank,
        **({"detail": v.detail} if v.detail else {}),
    }


# -- what the history says ---------------------------------------------------------------------


def turn_key(messages: Sequence[MessageLike]) -> list[Any]:
    """Identifies the current user turn: the position and id of its user message (JSON-able,
    so it can live in checkpointed state)."""
    starts = user_turn_starts(messages)
    if not starts:
        return [-1, None]
    return [starts[-1], getattr(messages[starts[-1]], "id", None)]


def used_tools(messages: Sequence[MessageLike], turns: int) -> list[str]:
    """Tools the model called during the last `turns` user turns (the current task)."""
    if turns <= 0:
        return []
    starts = user_turn_starts(messages)
    begin = starts[-turns] if len(starts) >= turns else 0
    out: list[str] = []
    for message in messages[begin:]:
        for call in tool_calls_of(message):
            if call["name"] not in out:
                out.append(call["name"])
    return out


def requested_tools(messages: Sequence[MessageLike]) -> list[str]:
    """Tools refused as `tool_not_available` since the last user message (promoted now)."""
    starts = user_turn_starts(messages)
    begin = starts[-1] if starts else 0
    out: list[str] = []
    for message in messages[begin:]:
        name = getattr(message, "name", None)
        if name and tool_error_code(message) == NOT_AVAILABLE and name not in out:
            out.append(name)
    return out


MAX_FUZZY_TOKENS = 256
"""Most identifier-like tokens of a message checked for near-exact names (exact ones are all
looked up): a 100 KB message stays a few milliseconds over thousands of tools."""


def _deletions(word: str) -> set[str]:
    """`word` and every string one character shorter (a symmetric-deletion neighbourhood)."""
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


class NameMatcher:
    """Finds tools a user names explicitly in a message, over a fixed list of tool names.

    A mention is the exact identifier (`refund_payment`, `sendMail`) or a near-exact one
    (`refund_paymnt`, only for tokens written like identifiers, with `_`, `.` or `-`). Plain
    words are left to the ranking: "refund the payment" describes a tool, it does not name it.
    Only distinctive names count (at least two words once split), so a tool called `search` is
    not promoted by every message containing "search".

    Near-exact matching uses a deletion index (one edit, found in time linear in the token), and
    results are memoised per message, since every model call of a turn asks again.
    """

    def __init__(self, names: Sequence[str]) -> None:
        """Precompute lookups for `names`."""
        self.by_key: dict[str, str] = {}
        for name in names:
            if len(split_identifier(name).split()) >= 2:
                self.by_key.setdefault(name.lower(), name)
        self._near: dict[str, set[str]] = {}
        for key in self.by_key:
            for variant in _deletions(key):
                self._near.setdefault(variant, set()).add(key)
        self._memo: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        """Names mentioned in `text` (exact identifiers first, then near-exact ones)."""
        cached = self._memo.get(text)
        if cached is not None:
            return list(cached)
        found = self._find(text)
        if len(self._memo) >= 32:
            self._memo.clear()
        self._memo[text] = found
        return list(found)

    def _find(self, text: str) -> list[str]:
        tokens = identifier_tokens(text)
        found = [self.by_key[key] for key in sorted(tokens & self.by_key.keys())]
        written = [t for t in tokens if t not in self.by_key and ("_" in t or "." in t or "-" in t)]
        for token in heapq.nsmallest(MAX_FUZZY_TOKENS, written):
            close = self._closest(token)
            if close is not None and self.by_key[close] not in found:
                found.append(self.by_key[close])
        return found

    def _closest(self, token: str) -> str | None:
        """The name key one edit away from `token` (a typo, a missing or doubled character, two
        swapped ones) and long enough for that edit to leave it 90 % similar, if any."""
        best: tuple[int, str] | None = None
        for variant in _deletions(token):
            for key in self._near.get(variant, ()):
                longest = max(len(key), len(token))
                if key == token or 1 - 1 / longest < 0.9:
                    continue
                rank = (abs(len(key) - len(token)), key)
                if best is None or rank < best:
                    best = rank
        return best[1] if best is not None else None


# -- the decision ----------------------------------------------------------------------------

_POSITIONS: dict[tuple[str, ...], dict[str, int]] = {}
_POSITIONS_LOCK = threading.Lock()
_LAST_POSITIONS: list[tuple[tuple[str, ...], dict[str, int]] | None] = [None]
POSITION_MEMO = 8
"""Candidate lists whose positions are remembered (the calls of a turn share one list)."""


def positions(names: Sequence[str]) -> dict[str, int]:
    """The first position of each name in `names`, remembered for the last few lists: every
    decision asks which candidates a promotion names, and in what order, without walking the
    whole list again."""
    if isinstance(names, tuple):  # immutable: the last one is recognised by identity
        last = _LAST_POSITIONS[0]
        if last is not None and last[0] is names:
            return last[1]
    key = tuple(names)
    with _POSITIONS_LOCK:
        found = _POSITIONS.get(key)
    if found is None:
        found = dict(zip(reversed(key), range(len(key) - 1, -1, -1), strict=True))
        with _POSITIONS_LOCK:
            if len(_POSITIONS) >= POSITION_MEMO:
                _POSITIONS.pop(next(iter(_POSITIONS)))
            _POSITIONS[key] = found
    if isinstance(names, tuple):
        _LAST_POSITIONS[0] = (names, found)
    return found


def _without(names: Sequence[str], where: Mapping[str, int], drop: Iterable[str]) -> list[str]:
    """`names` without the names in `drop`, in order; by slices when names are unique."""
    if len(where) != len(names):  # repeated names: every occurrence goes
        dropped = set(drop)
        return [n for n in names if n not in dropped]
    out: list[str] = []
    start = 0
    for row in sorted(where[n] for n in drop if n in where):
        out.extend(names[start:row])
        start = row + 1
    out.extend(names[start:])
    return out


_LAST_WRITES: list[tuple[frozenset[str], Mapping[str, int], dict[str, Verdict]] | None] = [None]


def withheld_writes(writes: frozenset[str], where: Mapping[str, int]) -> dict[str, Verdict]:
    """A `writes` verdict per write among the candidates (`where`: their positions), in
    candidate order; the last result is kept, since the calls of a turn ask with the same
    writes and candidates (thousands of tools would otherwise sort and build them each call)."""
    last = _LAST_WRITES[0]
    if last is not None and last[1] is where and last[0] == writes:
        return last[2]
    ordered = sorted((n for n in writes if n in where), key=where.__getitem__)
    found = {name: Verdict(name, False, "writes") for name in ordered}
    _LAST_WRITES[0] = (writes, where, found)
    return found


@dataclass(frozen=True)
class GateInputs:
    """Everything a decision depends on besides the scores."""

    intent: str
    candidates: Sequence[str]
    pinned: frozenset[str] = frozenset()
    named: Sequence[str] = ()
    requested: Sequence[str] = ()
    sticky: Sequence[str] = ()
    preconditions: Mapping[str, Precondition] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)
    writes: frozenset[str] = frozenset()
    """Candidates that are not declared reads (`attention_scoping.risk.declared_read`): shown
    only when pinned, never by ranking, a name in the user's message, all fitting within k, a
    retry or stickiness."""


def _asked(
    inputs: GateInputs, fixed: dict[str, Verdict], k: int, candidates: Mapping[str, int]
) -> None:
    """Promote the declared reads the model asked for: refused this turn (requested) or used in
    the task (sticky). They come on top of the ranked ones (at most k of each), so a retry or a
    follow-up does not push the best match for the intent out. Not a way in for a tool that is
    not a declared read: the gate would be putting it in view for the model."""
    for source, reason in ((inputs.requested, "requested"), (inputs.sticky, "sticky")):
        budget = k
        for name in source:
            if (
                name in candidates
                and name not in fixed
                and name not in inputs.writes
                and budget > 0
            ):
                fixed[name] = Verdict(name, True, reason)  # type: ignore[arg-type]
                budget -= 1


def decide(
    inputs: GateInputs,
    score: Callable[[str, Sequence[str]], Iterable[float]],
    *,
    k: int,
    threshold: float,
) -> Decision:
    """Choose the tools to show.

    Args:
        inputs: Intent, candidates in request order, and the history-derived promotions.
        score: `score(intent, names) -> scores` for the names that need ranking; only called
            when more candidates compete than `k` leaves room for.
        k: Ranked slots (pinned tools do not use them; named and requested tools do).
        threshold: Minimum score for a ranked tool.
    """
    fixed: dict[str, Verdict] = {}
    for name, check in inputs.preconditions.items():
        problem = unmet(check, inputs.state)
        if problem is not None:
            fixed[name] = Verdict(name, False, "precondition", detail=problem)
    for name in inputs.pinned:
        if name not in fixed:
            fixed[name] = Verdict(name, True, "pinned")
    candidates = positions(inputs.candidates)
    slots = k
    named = [
        n for n in inputs.named if n in candidates and n not in fixed and n not in inputs.writes
    ]
    for name in named[:k]:  # surplus named tools stay in the summary pool: k schemas at most
        fixed[name] = Verdict(name, True, "named_by_user")
        slots -= 1
    _asked(inputs, fixed, k, candidates)
    # writes the model did not ask for, in candidate order: not promoted by code
    for name, verdict in withheld_writes(inputs.writes, candidates).items():
        if name not in fixed:
            fixed[name] = verdict
    fixed = {n: v for n, v in fixed.items() if n in candidates}

    rest = _without(inputs.candidates, candidates, fixed) if fixed else inputs.candidates
    ranked: Sequence[tuple[str, float]] = ()
    if len(rest) <= max(slots, 0):
        for name in rest:
            fixed[name] = Verdict(name, True, "all_fit")
    elif rest:
        # best first, ties in candidate order; pairs are built only for the ranks read
        ranked = Ranking(rest, np.asarray(score(inputs.intent, rest), dtype=np.float64))
    return Decision(
        inputs.intent, inputs.candidates, fixed, ranked, k=k, threshold=threshold, slots=slots
    )
