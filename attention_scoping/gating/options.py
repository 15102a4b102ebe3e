"""`ToolAttentionMiddleware`'s grouped options: what is promoted and when (`Promotion`) and the
summary pool of the tools held back (`SummaryPool`), with named presets.

Every default lives here. A bad value, or an option that another makes unused (a pool budget
without the `auto` pool), raises `GateConfigError` (a `ValueError`) when the group is built,
naming the valid range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

from attention_scoping.common.options import check_choice
from attention_scoping.disclosure.base import DEFAULT_DISCLOSURE, DISCLOSURE_MODES, DisclosureMode
from attention_scoping.gating.disclosure import PoolMode
from attention_scoping.gating.errors import GateConfigError, check_count, check_finite

DecidePer = Literal["call", "turn"]
"""How often the gate decides: before every model call, or once per user turn (cache-stable:
every call of a turn gets the same tools array, grown only by tools the model was refused)."""

DEFAULT_K = 5
"""Tools promoted by similarity per call (measured: recall@5 0.93 on 1,032 real tools)."""

DEFAULT_THRESHOLD = None
"""Minimum ranker score to be promoted; None: the ranker's `default_threshold` (0.5 over the
default hybrid's calibrated 0-1 scores), else 0."""

DEFAULT_POOL_BUDGET = 2500
"""Tokens the `auto` summary pool may take (about 140 tools of one-line summaries); above it
the pool is left out. Measured with `attention-scoping simulate`: on a 120-tool catalog the pool
(~2,100 tokens) turns every tool the ranking misses into a refused call and a retry instead of
a failure; on 1,032 tools it would cost 21,700 tokens per call, so it stays off."""

PromotionPreset = Literal["per_call", "per_turn"]
"""`per_call`: decide before every model call; `per_turn`: decide once per user turn."""
PoolPreset = PoolMode
"""A pool mode by name: `auto`, `scope`, `catalog` or `off`."""


@dataclass(frozen=True)
class Promotion:
    """Which tools the gate promotes besides the `k` best ranked, and how often it decides.

    Example:
        ```python
        Promotion(threshold=0.4, sticky_turns=1, decide_per="turn")
        ```
    """

    threshold: float | None = DEFAULT_THRESHOLD
    """Minimum ranker score to be promoted by similarity (hybrid scores are 0-1 per call);
    None: the ranker's own (`default_threshold`, 0.5 for the default hybrid)."""
    intent_turns: int = 1
    """How many recent user messages form the intent."""
    sticky_turns: int = 2
    """Tools called during the last this-many user turns stay promoted (2: this turn and the
    previous one, so "now do the same for X" keeps the tool it refers to)."""
    detect_names: bool = True
    """Promote tools the user names (exact or near-exact identifiers)."""
    decide_per: DecidePer = "call"
    """`"call"` decides before every model call; `"turn"` decides at the first call of each
    user turn and keeps that tools array for the turn's later calls, adding only tools the model
    was refused, so a provider's prompt cache keeps the turn's prefix (docs/cost.md)."""

    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {"decide_per": get_args(DecidePer)}

    def __post_init__(self) -> None:
        """Refuse an unknown `decide_per`, a count out of range, or a threshold that is not a
        finite number (NaN would hide every ranked tool without saying so)."""
        check_choice("decide_per", self.decide_per, self.CHOICES["decide_per"], GateConfigError)
        check_count("intent_turns", self.intent_turns, 1)
        check_count("sticky_turns", self.sticky_turns, 0)
        if self.threshold is not None:
            check_finite("threshold", self.threshold)
        if not isinstance(self.detect_names, bool):
            msg = f"detect_names must be True or False, not {self.detect_names!r}"
            raise GateConfigError(msg)


@dataclass(frozen=True)
class SummaryPool:
    """What the model learns of the tools held back: one-line summaries appended to the system
    prompt (`"rewrite"` disclosure), or the provider's own deferral (`disclosure=`).

    Example:
        ```python
        SummaryPool("auto", budget_tokens=1500)
        SummaryPool(disclosure="anthropic")  # every tool sent deferred, no summaries
        ```
    """

    mode: PoolMode = "auto"
    """`"auto"` (this call's candidates, if within `budget_tokens`), `"scope"` (this call's
    candidates), `"catalog"` (every tool the gate knows) or `"off"`."""
    budget_tokens: int | None = None
    """Token budget of the `auto` pool (None: `DEFAULT_POOL_BUDGET`); only with `"auto"`."""
    disclosure: DisclosureMode = DEFAULT_DISCLOSURE
    """How the gate's decision reaches the provider (`attention_scoping.disclosure`): `"auto"`
    (from the chat model class), `"rewrite"` (the tools array narrowed, the pool in the system
    prompt), or `"anthropic"` / `"openai"` / `"allowed_tools"` (every tool sent and the system
    prompt fixed, no pool; what the gate shows is disclosed at the tail or in `tool_choice`)."""

    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {
        "mode": get_args(PoolMode),
        "disclosure": DISCLOSURE_MODES,
    }

    def __post_init__(self) -> None:
        """Refuse an unknown mode or disclosure, a negative budget, or a budget no pool reads."""
        check_choice("mode", self.mode, self.CHOICES["mode"], GateConfigError)
        check_choice("disclosure", self.disclosure, self.CHOICES["disclosure"], GateConfigError)
        if self.budget_tokens is None:
            return
        check_count("budget_tokens", self.budget_tokens, 0)
        if self.mode != "auto":
            msg = (
                f"budget_tokens={self.budget_tokens!r} is read only by mode='auto', not "
                f"mode={self.mode!r}"
            )
            raise GateConfigError(msg)

    @property
    def budget(self) -> int:
        """The `auto` pool's token budget, resolved."""
        return DEFAULT_POOL_BUDGET if self.budget_tokens is None else self.budget_tokens


PROMOTE_PER_CALL = Promotion(decide_per="call")
"""The gate decides before every model call."""
PROMOTE_PER_TURN = Promotion(decide_per="turn")
"""The gate decides once per user turn (a provider's prompt cache keeps the turn's prefix)."""
PROMOTION_PRESETS: Mapping[str, Promotion] = {
    "per_call": PROMOTE_PER_CALL,
    "per_turn": PROMOTE_PER_TURN,
}

AUTO_POOL = SummaryPool("auto")
"""The candidates' summaries when they fit `DEFAULT_POOL_BUDGET`, else none."""
SCOPE_POOL = SummaryPool("scope")
"""The candidates' summaries (after scoping: the scope's tools held back)."""
CATALOG_POOL = SummaryPool("catalog")
"""Every tool the gate knows."""
NO_POOL = SummaryPool("off")
"""No summaries."""
POOL_PRESETS: Mapping[str, SummaryPool] = {
    "auto": AUTO_POOL,
    "scope": SCOPE_POOL,
    "catalog": CATALOG_POOL,
    "off": NO_POOL,
}

DEFAULT_PROMOTION: PromotionPreset = "per_call"
"""The promotion when `promotion=` is not given."""
DEFAULT_SUMMARY_POOL: PoolPreset = "auto"
"""The summary pool when `summary_pool=` is not given."""
