"""Provider-native disclosure: the one interface every `disclosure=` mode implements.

A middleware (scoping or gating) decides, per model call, which tools the model may call now
(the *visible* set). A disclosure mode decides how that decision reaches the provider:

- `"rewrite"` (any chat model): the tools array is narrowed to the visible set (today's
  behaviour; the prompt prefix changes whenever the set does).
- the native modes keep the tools array and the system prompt byte-identical for the whole
  session, so a provider's prompt cache keeps its prefix, and disclose newly visible tools at the
  tail of the conversation instead:
  - `"anthropic"`: every tool sent, `defer_loading: true` except the loaded ones; a tool becomes
    callable once a `tool_result` carries a `{"type": "tool_reference", "tool_name": ...}` block
    for it (`load_context` results, the client-side search tool's results);
  - `"openai"` (Responses API): namespaces of deferred functions, disclosed by
    `tool_search_output` items (module `disclosure.openai`);
  - `"allowed_tools"` (Chat Completions): every tool sent, the visible set in
    `tool_choice={"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [...]}}`.
- `"auto"` (the default) resolves from the chat model class (`auto_mode`).

The contract a mode implements (`Disclosure`):

1. `shape(tools, visible=, loaded=, tool_choice=, groups=) -> Shaped`: the tools array and
   `tool_choice` to send, from the full registered list (`tools`: `BaseTool`s and provider
   dicts, as the request holds them), the names the middleware decided are visible, and the
   names that are always loaded (`load_context`, the search tool, pinned / always-on tools).
   Native modes return every tool in `stable_order` whatever `visible` is; `groups` (scope ->
   tool names, or None) lets a mode group tools (OpenAI namespaces). A mode implements it as
   `arrange(ShapeRequest)`, the same arguments in one value.
2. `content(names, text) -> str | list[str | dict]`: the `ToolMessage` content that discloses
   `names` (with `text`, e.g. a scope's prompt module, in the same result). The `load_context`
   result and the search tool's result use it.
3. `disclosed(messages) -> frozenset[str] | None`: the names the history has disclosed so far
   (None: the mode does not disclose through the history, as `rewrite` and `allowed_tools`; the
   middleware's own visible set governs). The enforced gate refuses a call to a name neither
   disclosed nor loaded, and the tool never runs.
4. `announce(names, tool=, args=, text=, call_id=) -> list[messages]`: the message pair a
   middleware adds at the tail when code (pre-selection, an application-set scope, a gate
   decision at a new turn) made tools visible that the history has not disclosed: an
   `AIMessage` calling `tool` (`load_context` or the search tool) and the `ToolMessage` answering
   it with `content(names, text)`. The pair is returned in the model response's messages, in
   front of the model's reply, so it is persisted and every later request keeps the same prefix.
   Empty for modes that carry visibility per request. The blast-radius rule holds because the
   names come from the middleware's decision, which already keeps writes code opened out of it.
5. `check(tools, loaded)`: raise `ValueError` where the provider would refuse the array (e.g.
   more than `max_deferred` deferred tools, nothing loaded).
6. `carries(model) -> str | None` (classmethod): why a chat model cannot carry the mode, or None;
   `create(model)` (classmethod): the instance for that model (default `cls()`).

`resolve_disclosure(mode, model)` returns the mode's `Disclosure` for a chat model
(`"auto"` resolved; `ValueError` naming the value and the valid ones), and `DisclosureSetting`
is what a middleware holds: the validated option, resolved per model and logged once (INFO).
Modes live one per module (`disclosure.rewrite`, `.anthropic`, `.allowed_tools`, `.openai`),
loaded lazily through `MODE_CLASSES`.
"""

from __future__ import annotations

import importlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.options import check_choice, choices_text

logger = logging.getLogger(__name__)

DisclosureMode = Literal["auto", "rewrite", "anthropic", "openai", "allowed_tools"]
"""The values of the `disclosure=` option."""
ResolvedMode = Literal["rewrite", "anthropic", "openai", "allowed_tools"]
"""A mode after `"auto"` is resolved."""
DISCLOSURE_MODES: tuple[str, ...] = get_args(DisclosureMode)
DEFAULT_DISCLOSURE: DisclosureMode = "auto"

SEARCH_TOOL = "search_tools"
"""Name of the client-side search tool the gate registers in the native modes that disclose
through the history; its result discloses what our ranker found (preconditions applied)."""

VISIBLE_KEY = "disclosure_visible"
"""Key of the state *view* a scoping middleware in a native mode passes to the middleware
after it (never written to the checkpoint): `{"mode", "visible", "loaded"}`, the names it
shows. A gate after it takes `visible` as its candidates, since the tools array is full."""

MODE_CLASSES: Mapping[str, str] = {
    "rewrite": "attention_scoping.disclosure.rewrite:RewriteDisclosure",
    "anthropic": "attention_scoping.disclosure.anthropic:AnthropicDisclosure",
    "openai": "attention_scoping.disclosure.openai:OpenAIDisclosure",
    "allowed_tools": "attention_scoping.disclosure.allowed_tools:AllowedToolsDisclosure",
}
"""Mode -> `module:Class` of its `Disclosure` (imported on first use)."""

ToolEntry = BaseTool | dict[str, Any]
"""A tool as a `ModelRequest` holds it."""


@dataclass(frozen=True)
class Shaped:
    """What one model call sends: the tools array and `tool_choice`."""

    tools: list[ToolEntry]
    tool_choice: Any = None


@dataclass(frozen=True)
class ShapeRequest:
    """What `Disclosure.shape` was given: the registered tools, the visible and loaded names,
    the requested `tool_choice` and the scope groups (see the module docstring, point 1)."""

    tools: Sequence[ToolEntry]
    visible: Collection[str]
    loaded: Collection[str]
    tool_choice: Any = None
    groups: Mapping[str, Sequence[str]] | None = None

    def shown(self, tools: Iterable[ToolEntry]) -> list[ToolEntry]:
        """The entries of `tools` whose name is visible or loaded, in order."""
        return [t for t in tools if tool_name(t) in self.visible or tool_name(t) in self.loaded]


class Disclosure(ABC):
    """How a middleware's visible set reaches the provider (see the module docstring)."""

    mode: ClassVar[ResolvedMode]
    native: ClassVar[bool] = True
    """False only for `rewrite`: the tools array follows the visible set."""
    in_history: ClassVar[bool] = True
    """Whether visibility travels in the message history (tool references); False: per request."""
    max_deferred: ClassVar[int | None] = None
    """Most tools the provider accepts deferred (None: no limit)."""

    @classmethod
    def carries(cls, model: Any) -> str | None:
        """Why `model` cannot carry this mode (None: it can)."""
        return None

    @staticmethod
    def class_names(model: Any) -> set[str]:
        """The class names in `model`'s MRO (how a mode recognises a provider's chat model
        without importing its package)."""
        return {klass.__name__ for klass in type(model).__mro__}

    @classmethod
    def create(cls, model: Any) -> Disclosure:
        """The mode's instance for `model` (once `carries(model)` said it can)."""
        return cls()

    def shape(
        self,
        tools: Sequence[ToolEntry],
        *,
        visible: Collection[str],
        loaded: Collection[str],
        tool_choice: Any = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> Shaped:
        """The tools array and `tool_choice` to send for this call (the mode's `arrange`)."""
        return self.arrange(ShapeRequest(tools, visible, loaded, tool_choice, groups))

    @abstractmethod
    def arrange(self, request: ShapeRequest) -> Shaped:
        """The mode's own `shape`: the tools array and `tool_choice` for `request`."""

    def content(
        self, names: Sequence[str], text: str | None = None
    ) -> str | list[str | dict[Any, Any]]:
        """`ToolMessage` content disclosing `names` (and carrying `text`); plain text here."""
        return text or ""

    def disclosed(self, messages: Sequence[Any]) -> frozenset[str] | None:
        """Names the history has disclosed (None: not tracked in the history)."""
        return None

    def announce(
        self,
        names: Sequence[str],
        *,
        tool: str,
        args: Mapping[str, Any],
        text: str | None = None,
        call_id: str,
    ) -> list[BaseMessage]:
        """The call-and-result pair disclosing `names` at the tail ([] when not in history)."""
        if not self.in_history or not names:
            return []
        call = AIMessage(content="", tool_calls=[{"name": tool, "args": dict(args), "id": call_id}])
        result = ToolMessage(self.content(names, text), tool_call_id=call_id, name=tool)
        return [call, result]

    @staticmethod
    def tool_objects(tools: Sequence[ToolEntry]) -> list[BaseTool]:
        """The tool objects in a (possibly already shaped) tools array."""
        return [t for t in tools if isinstance(t, BaseTool)]

    def outgoing(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The messages as the provider's request carries them (default: unchanged)."""
        return list(messages)

    def incoming(self, message: Any) -> Any:
        """The model's reply as the agent loop sees it (default: unchanged)."""
        return message

    def check(self, tools: Sequence[ToolEntry], loaded: Collection[str]) -> None:
        """Raise `ValueError` where the provider would refuse this tools array."""
        if self.max_deferred is None:
            return
        deferred = [t for t in tools if isinstance(t, BaseTool) and t.name not in loaded]
        if len(deferred) > self.max_deferred:
            msg = (
                f"disclosure={self.mode!r} defers {len(deferred)} tools; the provider accepts "
                f"at most {self.max_deferred}: pin fewer tools out, or use disclosure='rewrite'"
            )
            raise ValueError(msg)


def check_mode(mode: object) -> None:
    """Raise `ValueError` unless `mode` is a `disclosure=` value."""
    check_choice("disclosure", mode, DISCLOSURE_MODES)


def deferred_limit(mode: str) -> int | None:
    """Most tools `mode` sends deferred (None: no limit, or a mode whose module is not
    installed, which resolving it reports)."""
    try:
        return mode_class(mode).max_deferred
    except ImportError:
        return None


def check_deferred(mode: str, count: int) -> None:
    """Raise `ValueError` when the explicit `mode` accepts fewer deferred tools than `count`
    (`"auto"` is checked at the first call, when the chat model picks the mode)."""
    limit = None if mode == "auto" else deferred_limit(mode)
    if limit is None or count <= limit:
        return
    fits = [m for m in MODE_CLASSES if (most := deferred_limit(m)) is None or count <= most]
    msg = (
        f"disclosure={mode!r} would defer {count} tools; the provider accepts at most "
        f"{limit}: use {choices_text(fits)}, or pin fewer tools out"
    )
    raise ValueError(msg)


def auto_mode(model: Any) -> ResolvedMode:
    """The mode `"auto"` picks for `model`: `ChatAnthropic` -> anthropic,
    `ChatOpenAI(use_responses_api=True)` -> openai, any other model -> rewrite."""
    names = Disclosure.class_names(model)
    if "ChatAnthropic" in names:
        return "anthropic"
    if "ChatOpenAI" in names and getattr(model, "use_responses_api", None) is True:
        return "openai"
    return "rewrite"


def mode_class(mode: str) -> type[Disclosure]:
    """The `Disclosure` class of a resolved mode (its module imported now)."""
    module, _, name = MODE_CLASSES[mode].partition(":")
    found: type[Disclosure] = getattr(importlib.import_module(module), name)
    return found


def _reason(mode: str, model: Any) -> str | None:
    """Why `model` cannot carry `mode` (a mode whose module is not installed cannot)."""
    try:
        return mode_class(mode).carries(model)
    except ImportError:
        return f"the {mode!r} mode is not installed"


def resolve_disclosure(mode: str, model: Any) -> Disclosure:
    """The `Disclosure` of `mode` for chat model `model` (`"auto"` resolved by its class).

    Raises:
        ValueError: an unknown mode, or one `model` cannot carry (the message names the modes
            it can).
    """
    check_mode(mode)
    resolved = auto_mode(model) if mode == "auto" else mode
    reason = _reason(resolved, model)
    if reason is not None:
        fits = ["auto", *(m for m in MODE_CLASSES if _reason(m, model) is None)]
        msg = (
            f"disclosure={mode!r} cannot be used with {type(model).__name__}: {reason}; "
            f"use {choices_text(fits)}"
        )
        raise ValueError(msg)
    return mode_class(resolved).create(model)


class DisclosureSetting:
    """A middleware's `disclosure=` option: validated at construction, resolved per chat model
    at its first request, and the mode in use logged once (INFO)."""

    def __init__(self, mode: str, owner: str, *, deferred: int = 0) -> None:
        """Validate `mode` (`ValueError` naming the valid ones); `owner` names the middleware
        in the log line; `deferred`: how many tools the middleware already knows it would send
        deferred (a mode that cannot take that many fails now, not at the first call)."""
        check_mode(mode)
        check_deferred(mode, deferred)
        self.requested: str = mode
        self.owner = owner
        self._resolved: dict[int, tuple[Any, Disclosure]] = {}
        self.last: Disclosure | None = None
        """The mode of the latest model call (what the tool hooks, which see no model, use)."""

    def for_model(self, model: Any) -> Disclosure:
        """The `Disclosure` for `model` (resolved once per model object)."""
        key = id(model)
        hit = self._resolved.get(key)
        if hit is not None and hit[0] is model:
            self.last = hit[1]
            return hit[1]
        disclosure = resolve_disclosure(self.requested, model)
        if not self._resolved:
            logger.info(
                "%s: disclosure=%r -> %r for %s",
                self.owner,
                self.requested,
                disclosure.mode,
                type(model).__name__,
            )
        self._resolved[key] = (model, disclosure)
        self.last = disclosure
        return disclosure
