"""`AttentionScopingMiddleware`'s options in two groups: how the model reaches a scope
(`Navigation`) and how the system prompt is laid out (`Layout`), with named presets.

Every default lives here: a field's default in its dataclass, and the preset the middleware uses
when none is given in `DEFAULT_NAVIGATION` / `DEFAULT_LAYOUT`. Contradicting options (a margin
without pre-selection, `top_k` without the `top` start, a compact layout with a module
delivery it overrides) raise `ScopeConfigError` when the group is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias, get_args

from attention_scoping.common.option_groups import Moved, moved_into
from attention_scoping.common.options import check_choice, choices_text
from attention_scoping.common.tool import ToolSpec
from attention_scoping.scoping.catalog import ScopeConfigError
from attention_scoping.scoping.prompts import DEFAULT_CORE, INDEX_HEADER, PromptLayout
from attention_scoping.scoping.start import PRESELECT_MODES, RANKERS, START_MODES, Preselect, Start

ModuleDelivery = Literal["system_prompt", "load_context"]
"""Where a scope's prompt module reaches the model: swapped into the system prompt, or appended
in the `load_context` result so the system prompt never changes (cache-stable)."""

UnscopedPolicy = Literal["hide", "show"]
"""What to do with registered tools that no scope names: hide them (default) or always show."""
InvalidContextPolicy = Literal["default", "raise"]
"""What to do with a stale or mistyped `active_context`: use the default scope, or raise."""
ForeignToolPolicy = Literal["refuse", "switch"]
"""What to do with a call to another scope's tool: refuse with a breadcrumb, or switch and run."""

RankerName = Literal["auto", "dense", "fused", "lexical"]
"""Rankers by name: `auto` (MiniLM with the `gate` extra, else lexical), `dense`, `fused`
(cosine plus a share of the lexical score), `lexical` (no dependency)."""
RankerOption: TypeAlias = RankerName | Callable[[str, Sequence[ToolSpec]], list[tuple[str, float]]]
"""A ranker name, or `(query, specs) -> [(name, score)]` with absolute scores."""

DEFAULT_TOP_K = 5
"""Tools offered by the `top` start."""

NavigationPreset = Literal["preselect", "model"]
"""`preselect`: code pre-selects the scope from the message, else offers the best tools;
`model`: the model navigates by `load_context` only (no ranking)."""
LayoutPreset = Literal["layered", "compact", "stable"]
"""`layered`: index, core and the scope's module in the system prompt; `compact`: your prompt
alone, modules in `load_context` results; `stable`: layered, but modules in `load_context`
results so the system prompt never changes (a provider's prompt cache keeps it)."""


@dataclass(frozen=True)
class Navigation:
    """How the model reaches a scope: pre-selection from the user's message, what an unscoped
    call shows, how tools are ranked, and what a call to another scope's tool does.

    Example:
        ```python
        Navigation(preselect="unscoped", start="top", top_k=3, ranker="lexical")
        ```
    """

    preselect: Preselect = "every_turn"
    """`"every_turn"` (at the first call of every user turn, so a new request can change
    scope), `"unscoped"` (only while no scope is active) or `"off"`."""
    start: Start = "top"
    """What an unscoped call shows when pre-selection is off or not confident: `"top"` (the
    `top_k` best tools across scopes), `"all"` (every scoped tool) or `"index"` (only
    `load_context` and always-on tools). Calling an offered tool loads its scope."""
    top_k: int | None = None
    """Tools the `top` start offers (None: `DEFAULT_TOP_K`); only with `start="top"`."""
    margin: float | None = None
    """How far the best scope's score must lead the next one's to be pre-selected, in [0, 1)
    (None: the value measured for the ranker, `scoping.start.CALIBRATION`)."""
    min_score: float | None = None
    """Lowest score the best scope (or an offered tool) may have (None: the measured value)."""
    ranker: RankerOption = "auto"
    """How scopes and tools are scored against the message (see `RankerName`); a callable
    needs `min_score` (and `margin` with pre-selection) for its scale."""
    on_foreign_tool: ForeignToolPolicy = "refuse"
    """A call to a tool of another scope: `"refuse"` (a refusal naming the `load_context` call
    to make) or `"switch"` (load that scope and run the call)."""

    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {
        "preselect": PRESELECT_MODES,
        "start": START_MODES,
        "on_foreign_tool": get_args(ForeignToolPolicy),
    }

    def __post_init__(self) -> None:
        """Refuse an unknown value or two fields that contradict each other."""
        for name, choices in self.CHOICES.items():
            check_choice(name, getattr(self, name), choices, ScopeConfigError)
        self._check_ranker()
        self._check_numbers()
        self._check_coupling()

    @property
    def custom_ranker(self) -> bool:
        """Whether `ranker` is a callable of your own."""
        return callable(self.ranker) and not isinstance(self.ranker, str)

    @property
    def ranks(self) -> bool:
        """Whether anything is ranked (pre-selection on, or the `top` start)."""
        return self.preselect != "off" or self.start == "top"

    def _check_ranker(self) -> None:
        if not self.custom_ranker and self.ranker not in RANKERS:
            msg = f"ranker must be {choices_text(RANKERS)} or a callable, not {self.ranker!r}"
            raise ScopeConfigError(msg)
        if self.custom_ranker and (
            self.min_score is None or (self.margin is None and self.preselect != "off")
        ):
            msg = (
                "a custom ranker needs margin and min_score for its scale (min_score alone "
                "with preselect='off'); got "
                f"margin={self.margin!r}, min_score={self.min_score!r}"
            )
            raise ScopeConfigError(msg)

    def _check_numbers(self) -> None:
        if self.top_k is not None and (not isinstance(self.top_k, int) or self.top_k < 1):
            msg = f"top_k must be an integer of at least 1, not {self.top_k!r}"
            raise ScopeConfigError(msg)
        if self.margin is not None and not 0.0 <= self.margin < 1.0:
            msg = f"margin must be in [0, 1), not {self.margin!r}"
            raise ScopeConfigError(msg)

    def _check_coupling(self) -> None:
        unused = None
        if self.top_k is not None and self.start != "top":
            unused = f"top_k={self.top_k!r} is used only by start='top', not start={self.start!r}"
        elif self.margin is not None and self.preselect == "off":
            unused = f"margin={self.margin!r} needs pre-selection, but preselect='off'"
        elif self.min_score is not None and not self.ranks:
            unused = (
                f"min_score={self.min_score!r} is never used: preselect='off' and "
                f"start={self.start!r} rank nothing"
            )
        elif self.ranker != "auto" and not self.ranks:
            unused = (
                f"ranker={self.ranker!r} is never used: preselect='off' and "
                f"start={self.start!r} rank nothing"
            )
        if unused is not None:
            msg = f"{unused}; valid: {_coupling_rules()}"
            raise ScopeConfigError(msg)

    def start_options(self) -> dict[str, Any]:
        """The keyword arguments of `scoping.start.ScopeStart` for this navigation."""
        margin = self.margin
        if margin is None and self.custom_ranker:
            margin = 0.0  # pre-selection is off: a custom ranker's margin is never read
        return {
            "preselect": self.preselect,
            "start": self.start,
            "margin": margin,
            "min_score": self.min_score,
            "top_k": DEFAULT_TOP_K if self.top_k is None else self.top_k,
            "ranker": self.ranker,
        }


def _coupling_rules() -> str:
    return (
        "top_k with start='top'; margin with preselect='unscoped' or 'every_turn'; "
        "min_score and a ranker when something ranks (pre-selection on or start='top')"
    )


@dataclass(frozen=True)
class Layout:
    """How the system prompt is laid out and where a scope's prompt module travels.

    Example:
        ```python
        Layout("compact", core_prompt="Never guess a tool's result.")
        ```
    """

    prompt: PromptLayout = "compact"
    """`"compact"` (default): your prompt alone; `load_context` describes the scopes and
    returns their modules, so the system prompt never changes (the measured default: small
    models call tools under it where the layered one makes them answer from memory,
    docs/scoping.md). `"layered"`: capability index, core (navigation rules, then your
    prompt) and the active scope's module."""
    module_delivery: ModuleDelivery | None = None
    """`"system_prompt"` swaps the active scope's module into the system prompt;
    `"load_context"` returns it in the `load_context` result so the system prompt stays
    byte-identical (docs/cost.md). None: `system_prompt` under the layered layout,
    `load_context` under the compact one (the only delivery it has)."""
    core_prompt: str | None = None
    """Our part of the core layer (None: `DEFAULT_CORE`, the navigation rules, under the
    layered layout; nothing under the compact one). Your `create_agent(system_prompt=...)` is
    appended to it, never dropped."""
    index_header: str | None = None
    """First line(s) of the capability index (None: `INDEX_HEADER`); the compact layout has no
    index."""

    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {
        "prompt": get_args(PromptLayout),
        "module_delivery": get_args(ModuleDelivery),
    }

    def __post_init__(self) -> None:
        """Refuse an unknown value, or an option the compact layout would override."""
        check_choice("prompt", self.prompt, self.CHOICES["prompt"], ScopeConfigError)
        if self.module_delivery is not None:
            check_choice(
                "module_delivery",
                self.module_delivery,
                self.CHOICES["module_delivery"],
                ScopeConfigError,
            )
        if self.prompt != "compact":
            return
        if self.module_delivery == "system_prompt":
            msg = (
                "module_delivery='system_prompt' contradicts prompt='compact', which delivers "
                "modules in the load_context result; valid: module_delivery='load_context' or "
                "unset with prompt='compact', either with prompt='layered'"
            )
            raise ScopeConfigError(msg)
        if self.index_header is not None:
            msg = (
                f"index_header={self.index_header!r} is never shown: prompt='compact' has no "
                "capability index; valid: index_header with prompt='layered'"
            )
            raise ScopeConfigError(msg)

    @property
    def delivery(self) -> ModuleDelivery:
        """Where the module travels, resolved."""
        if self.module_delivery is not None:
            return self.module_delivery
        return "load_context" if self.prompt == "compact" else "system_prompt"

    @property
    def core(self) -> str:
        """Our part of the core layer, resolved."""
        if self.core_prompt is not None:
            return self.core_prompt
        return "" if self.prompt == "compact" else DEFAULT_CORE

    @property
    def header(self) -> str:
        """The capability index's header, resolved."""
        return INDEX_HEADER if self.index_header is None else self.index_header


PRESELECT_NAVIGATION = Navigation(preselect="every_turn", start="top")
"""Code pre-selects the scope from every new user message; unsure, it offers the best tools."""
MODEL_NAVIGATION = Navigation(preselect="off", start="index")
"""The model navigates by `load_context` only: nothing is ranked or offered by code."""
NAVIGATION_PRESETS: Mapping[str, Navigation] = {
    "preselect": PRESELECT_NAVIGATION,
    "model": MODEL_NAVIGATION,
}

LAYERED_LAYOUT = Layout(prompt="layered")
"""Capability index + core + the active scope's module, in the system prompt."""
COMPACT_LAYOUT = Layout(prompt="compact")
"""Your prompt alone; scopes described by `load_context`, modules in its results."""
STABLE_LAYOUT = Layout(prompt="layered", module_delivery="load_context")
"""Layered, with modules in `load_context` results: the system prompt never changes."""
LAYOUT_PRESETS: Mapping[str, Layout] = {
    "layered": LAYERED_LAYOUT,
    "compact": COMPACT_LAYOUT,
    "stable": STABLE_LAYOUT,
}

DEFAULT_NAVIGATION: NavigationPreset = "preselect"
"""The navigation when `navigation=` is not given (a measurement may change it: one line)."""
DEFAULT_LAYOUT: LayoutPreset = "compact"
"""The layout when `layout=` is not given (chosen by measurement, docs/scoping.md)."""
OLD_DEFAULT_LAYOUT: LayoutPreset = "layered"
"""0.1's default layout: the base of its old layout keywords given without `prompt_layout`."""

MOVED: Mapping[str, Moved] = {
    **moved_into(
        "navigation",
        Navigation,
        "preselect start ranker on_foreign_tool",
        start_top_k="top_k",
        preselect_margin="margin",
        preselect_min_score="min_score",
    ),
    **moved_into(
        "layout", Layout, "module_delivery core_prompt index_header", prompt_layout="prompt"
    ),
}
"""The keyword options of 0.1 that moved into a group (accepted with a DeprecationWarning)."""
