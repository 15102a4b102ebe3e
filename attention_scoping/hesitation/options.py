"""`HesitationMiddleware`'s grouped options: what counts as a stall (`Radar`), how the model is
nudged (`Nudging`), and when an answer without a tool call is nudged or hinted (`Grounding`).

Every default lives here. A bad value, or a hint with nothing to hint at, raises
`KitConfigError` (an `AttentionScopingError` and a `ValueError`) when the group is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from langchain_core.messages import BaseMessage

from attention_scoping.hesitation.errors import KitConfigError, KitTypeError
from attention_scoping.hesitation.markers import ASKS_ABOUT_TOOLS, HesitationMarkers
from attention_scoping.hesitation.pending import NAVIGATION_TOOLS, GatewayTools, Pending
from attention_scoping.hesitation.radar import DEFAULT_MARKERS, DEFAULT_THRESHOLD, Hesitation
from attention_scoping.messages import current_turn
from attention_scoping.select import SELECTION_KEY

NudgeRole = Literal["user", "system"]
"""How the nudge is sent: a user message (every provider accepts it) or a system message."""
ExpectToolCall = Callable[[Mapping[str, Any], Sequence[BaseMessage]], Sequence[str]]
"""`(state, messages) -> tool names`: the tools the user's current message needs, best first
(empty: no expectation). A reply that calls none of them before any tool ran is nudged once."""
NudgeText = Callable[[Sequence[Pending], Hesitation], str]
"""`(pending, verdict) -> text` of the nudge."""
GiveUp = Callable[[Sequence[str], str], str]
"""`(tool names, stalled text) -> final answer` when the model still announces an action it
did not take after the last nudge."""

DEFAULT_MAX_NUDGES = 2
"""Nudges per user turn before the model's answer stands."""

MATCHED = frozenset({"confident", "close_call"})
"""Selection reasons whose record names the declared reads the message matched."""


def preselected_tools(state: Mapping[str, Any], messages: Sequence[BaseMessage]) -> list[str]:
    """The declared reads the core selector matched to the user's current message, best first
    (`attention_scoping.select.SELECTION_KEY`'s record, its `reads`). Empty when nothing
    matched (`no_match`, `no_intent`) or the record is of an earlier turn.

    `AttentionScopingMiddleware` writes the record at the first model call of each turn; place
    the hesitation middleware after it."""
    record = state.get(SELECTION_KEY)
    if not isinstance(record, Mapping) or record.get("reason") not in MATCHED:
        return []
    if record.get("turn") != current_turn(messages)[1]:
        return []
    reads = record.get("reads")
    if not isinstance(reads, list | tuple):
        return []
    return [name for name in reads if isinstance(name, str)]


GroundingPreset = Literal["hint", "check", "off"]
"""`hint`: name the expected tools before the first reply and nudge an answer that skips them;
`check`: only the nudge; `off`: neither."""


@dataclass(frozen=True)
class Radar:
    """What counts as a stall: the radar's markers and threshold, and whose schemas count.

    Example:
        ```python
        Radar(threshold=3.0, skip_when_user_asks=None)
        Radar(gateway=GatewayTools(schema_tool="get_tool_schema", execute_tool="execute_tool"))
        ```
    """

    threshold: float = DEFAULT_THRESHOLD
    """Radar score at or above which a message is a stall."""
    markers: HesitationMarkers = DEFAULT_MARKERS
    """Phrase markers of the radar (`radar.DEFAULT_MARKERS`: English)."""
    watch_bound_tools: bool = True
    """Also treat the schemas bound to the call (promoted or visible tools) as disclosed, while
    no action tool has run in the turn."""
    ignore_tools: Sequence[str] = tuple(sorted(NAVIGATION_TOOLS))
    """Tools whose schemas never count (default: the core's `load_context`; a gateway's own
    tools are added from `gateway`)."""
    gateway: GatewayTools | None = None
    """A tool gateway's tool names, when the agent discloses schemas through one: its schema
    results count as disclosures and its executor is the call a nudge asks for. None (default):
    no gateway; the kit knows no gateway's names by itself."""
    skip_when_user_asks: re.Pattern[str] | None = ASKS_ABOUT_TOOLS
    """A user message matching it asks about tools (or forbids running them): its answers are
    not judged. None judges everything. Other user messages go to the radar as `request=`, so
    it can tell a requested text, explanation or draft from a stall."""

    def __post_init__(self) -> None:
        """Keep `ignore_tools` as a tuple (the group stays hashable); refuse a bad threshold."""
        if isinstance(self.ignore_tools, str):
            msg = f"ignore_tools must be a sequence of tool names, not {self.ignore_tools!r}"
            raise KitTypeError(msg)
        object.__setattr__(self, "ignore_tools", tuple(self.ignore_tools))
        if not isinstance(self.threshold, int | float) or self.threshold <= 0:
            msg = f"threshold must be a number above 0, not {self.threshold!r}"
            raise KitConfigError(msg)
        if self.gateway is not None and not isinstance(self.gateway, GatewayTools):
            msg = f"gateway must be a GatewayTools or None, not {self.gateway!r}"
            raise KitTypeError(msg)

    @property
    def ignored(self) -> frozenset[str]:
        """Tools whose schemas never count: `ignore_tools` and the gateway's own tools."""
        own = self.gateway.names if self.gateway is not None else frozenset()
        return frozenset(self.ignore_tools) | own


@dataclass(frozen=True)
class Nudging:
    """How a stall is nudged: the message's role and text, whether a nudge may push toward a
    tool that writes, and the answer when the model still only announces the action.

    Example:
        ```python
        Nudging(role="system", writes=False)
        ```
    """

    role: NudgeRole = "user"
    """Send the nudge as a `"user"` message (its text says it is a runtime note) or a
    `"system"` message (for providers that accept system messages mid-conversation)."""
    writes: bool = False
    """The application opts in to stall nudges toward tools in view that are not declared
    reads (by default such a stall is left as the model's answer). Never the hint or the
    ungrounded nudge: those name declared reads only."""
    text: NudgeText | None = None
    """`(pending, verdict) -> text` of the nudge (None: `middleware.default_nudge`, a runtime
    note that is never the user's consent)."""
    give_up: GiveUp | None = None
    """`(tool names, stalled text) -> final answer` when, after the bound, the model still
    announces an action it did not take (None: `middleware.honest_answer`). Any other answer
    stands."""

    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {"role": get_args(NudgeRole)}

    def __post_init__(self) -> None:
        """Refuse an unknown role."""
        if self.role not in self.CHOICES["role"]:
            valid = " or ".join(map(repr, self.CHOICES["role"]))
            msg = f"role must be {valid}, not {self.role!r}"
            raise KitConfigError(msg)


@dataclass(frozen=True)
class Grounding:
    """An answer given without the tool the user's message needs: which tools it needs
    (`expect_tool_call`), and whether they are named to the model before its first reply.

    Example:
        ```python
        Grounding(hint=False)  # nudge an ungrounded answer, but no hint before it
        ```
    """

    expect_tool_call: ExpectToolCall | None = preselected_tools
    """`(state, messages) -> tool names` the current user message needs. When it names bound
    tools and the turn's first reply answers in text with no tool call, that answer is hidden
    and nudged once toward them. The default, `preselected_tools`, reads the declared reads the
    core selector of `AttentionScopingMiddleware` matched to this turn's message (place this
    middleware after it). Only declared reads are ever named or nudged toward, whatever this
    returns. None turns the check (and the hint) off."""
    hint: bool | None = None
    """Before the turn's first reply, add a runtime note that names the expected tools and asks
    for a call to the one that answers the request (part of that model request only, never of
    the state). None: on whenever `expect_tool_call` is set."""

    def __post_init__(self) -> None:
        """Refuse a hint with no expectation to name."""
        if self.hint and self.expect_tool_call is None:
            msg = (
                "hint=True needs expect_tool_call (the hint names the tools it expects), but "
                "expect_tool_call=None; valid: hint with an expect_tool_call, or hint=False"
            )
            raise KitConfigError(msg)

    @property
    def hints(self) -> bool:
        """Whether the hint is on, resolved."""
        return self.expect_tool_call is not None if self.hint is None else self.hint


HINT_GROUNDING = Grounding()
"""Name the matched tools before the first reply; nudge a first reply that skips them."""
CHECK_GROUNDING = Grounding(hint=False)
"""Only nudge a first reply that skips the matched tools."""
NO_GROUNDING = Grounding(expect_tool_call=None)
"""No expectation: neither the hint nor the ungrounded-answer nudge."""
GROUNDING_PRESETS: Mapping[str, Grounding] = {
    "hint": HINT_GROUNDING,
    "check": CHECK_GROUNDING,
    "off": NO_GROUNDING,
}

DEFAULT_RADAR = Radar()
"""The radar when `radar=` is not given."""
DEFAULT_NUDGING = Nudging()
"""The nudging when `nudging=` is not given."""
DEFAULT_GROUNDING: GroundingPreset = "hint"
"""The grounding when `grounding=` is not given."""
