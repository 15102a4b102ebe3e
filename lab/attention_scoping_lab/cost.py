"""What a model call is billed under provider prompt caching (pure; no LangChain import).

A request is rendered in the order providers use (tools -> system -> messages) as a list of
blocks: one per tool definition, per system block and per message, each serialised byte-stably
(sorted keys, no whitespace). `PromptCache` replays a session's requests against a simulated
prefix cache and returns per call the input, cache-read and cache-write tokens and the billed
input-token equivalents under a `PriceModel`.

Provider rules (sources in docs/cost.md):

- Anthropic: explicit `cache_control` breakpoints (at most 4). A write at a breakpoint stores
  the prefix at every block boundary up to it; a read looks for the longest stored prefix at
  the breakpoint or up to 19 blocks before it (20 positions). Prefixes shorter than the model's
  minimum (1,024 / 2,048 / 4,096 tokens) are not cached. Reads bill 0.1x, 5-minute writes
  1.25x, 1-hour writes 2x; a hit refreshes the entry's lifetime.
- OpenAI: automatic for prompts of 1,024 tokens or more; the cached part is the longest
  prefix seen before, rounded down to a multiple of 128 tokens (0 below 1,024). Writes cost
  nothing extra; cached tokens are billed at a family-dependent discount (0.1x for GPT-5,
  0.25x for GPT-4.1, 0.5x for GPT-4o).

Matching is at block boundaries: a partial match inside the first block that differs is not
credited (a slight understatement of OpenAI hits, which match in 128-token steps).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from attention_scoping.observe.render import stable_json

Provider = Literal["anthropic", "openai", "none"]
BlockKind = Literal["tool", "system", "message"]
N = TypeVar("N", int, float)
"""A session total's type: a count of tokens or billed input-token equivalents."""

PROVIDER_ORDER: tuple[str, ...] = ("tools", "system", "messages")
"""The order every provider renders a request in; a change early in it re-bills what follows."""

ANTHROPIC_MIN_CACHEABLE: dict[str, int] = {
    "opus-4.1": 1024,
    "opus-4": 1024,
    "sonnet-4.5": 1024,
    "sonnet-4": 1024,
    "sonnet-3.7": 1024,
    "haiku-3.5": 2048,
    "haiku-3": 2048,
    "opus-4.5": 4096,
    "haiku-4.5": 4096,
}
"""Minimum cacheable prompt length by Anthropic model (the prompt-caching docs' table)."""

ANTHROPIC_MAX_BREAKPOINTS = 4
"""At most this many `cache_control` breakpoints per Anthropic request."""

ANTHROPIC_LOOKBACK = 20
"""Block boundaries checked for a hit per breakpoint: the breakpoint and the 19 before it."""

OPENAI_MIN_CACHEABLE = 1024
"""OpenAI caches prompts of at least this many tokens..."""

OPENAI_GRANULARITY = 128
"""...and reports cached tokens in steps of this many (1,024, 1,152, 1,280, ...)."""


class PriceModelError(ValueError):
    """An unknown price model or a bad multiplier; the message names the valid values."""


@dataclass(frozen=True)
class PriceModel:
    """How one provider caches and bills input, as multiples of its input-token price."""

    name: str
    provider: Provider
    cache_read: float = 1.0
    """Price of a cached input token (0.1 = 90 % off)."""
    cache_write: float = 1.0
    """Price of a token written to the cache (Anthropic 1.25 for 5 minutes, 2 for 1 hour)."""
    ttl_s: float = 300.0
    """Seconds a cache entry lives after its last use."""
    min_cacheable: int = 0
    """Shortest prefix (tokens) the provider caches."""
    granularity: int = 1
    """Cached tokens are rounded down to a multiple of this (OpenAI: 128)."""
    max_breakpoints: int = 0
    """Anthropic `cache_control` breakpoints allowed per request (0: automatic caching)."""
    output: float = 1.0
    """Price of an output token (Claude Sonnet 4.5: $15 against $3 in, 5; GPT-5: $10 against
    $1.25, 8). Billed input leaves it out; the session benchmark reports it beside it, so the
    extra calls a strategy makes show with what they generate."""
    description: str = ""

    def __post_init__(self) -> None:
        """Refuse negative or missing prices and impossible cache parameters."""
        for key in ("cache_read", "cache_write", "ttl_s", "output"):
            value = getattr(self, key)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or math.isnan(value) or value < 0:
                msg = f"price model {self.name!r}: {key} must be a number >= 0, got {value!r}"
                raise PriceModelError(msg)
        if self.min_cacheable < 0 or self.granularity < 1 or self.max_breakpoints < 0:
            msg = (
                f"price model {self.name!r}: need min_cacheable >= 0, granularity >= 1 and "
                f"max_breakpoints >= 0, got {self.min_cacheable}, {self.granularity}, "
                f"{self.max_breakpoints}"
            )
            raise PriceModelError(msg)
        if self.provider not in ("anthropic", "openai", "none"):
            msg = f"provider must be 'anthropic', 'openai' or 'none', not {self.provider!r}"
            raise PriceModelError(msg)

    def billed(self, uncached: int, read: int, written: int) -> float:
        """Input-token equivalents of a call: uncached x 1 + read x r + written x w."""
        return uncached + read * self.cache_read + written * self.cache_write

    def billed_output(self, tokens: int | float) -> float:
        """Input-token equivalents of `tokens` generated (output x the output price)."""
        return tokens * self.output


_ANTHROPIC = PriceModel(
    "anthropic",
    "anthropic",
    cache_read=0.1,
    cache_write=1.25,
    ttl_s=300,
    min_cacheable=1024,
    max_breakpoints=ANTHROPIC_MAX_BREAKPOINTS,
    output=5.0,
    description="Anthropic, 5-minute cache: reads 0.1x, writes 1.25x, minimum 1,024 tokens",
)

PRICE_MODELS: dict[str, PriceModel] = {
    "anthropic": _ANTHROPIC,
    "anthropic-1h": replace(  # the same cache rules, but an hour's entry costs 2x to write
        _ANTHROPIC,
        name="anthropic-1h",
        cache_write=2.0,
        ttl_s=3600,
        description="Anthropic, 1-hour cache: reads 0.1x, writes 2x, minimum 1,024 tokens",
    ),
    "openai": PriceModel(
        "openai",
        "openai",
        cache_read=0.1,
        cache_write=1.0,
        ttl_s=300,
        min_cacheable=OPENAI_MIN_CACHEABLE,
        granularity=OPENAI_GRANULARITY,
        output=8.0,
        description=(
            "OpenAI automatic caching (GPT-5 family: cached input 0.1x; GPT-4.1 0.25x, "
            "GPT-4o 0.5x via cache_read), >= 1,024 tokens in 128-token steps"
        ),
    ),
    "none": PriceModel("none", "none", description="no prompt caching: every token at 1x"),
}
"""The named price models; change a multiplier with `price_model(name, cache_read=...)`."""


def price_model(name: str, **overrides: Any) -> PriceModel:
    """The named price model, with `overrides` (cache_read, cache_write, ttl_s, min_cacheable,
    granularity, max_breakpoints, output) applied.

    Raises:
        PriceModelError: an unknown name or override, or a negative or missing price.
    """
    base = PRICE_MODELS.get(name)
    if base is None:
        msg = f"unknown price model {name!r}; valid: {', '.join(PRICE_MODELS)}"
        raise PriceModelError(msg)
    allowed = (
        "cache_read",
        "cache_write",
        "ttl_s",
        "min_cacheable",
        "granularity",
        "max_breakpoints",
        "output",
    )
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        msg = f"unknown price setting {unknown[0]!r}; valid: {', '.join(allowed)}"
        raise PriceModelError(msg)
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(base, **given) if given else base


# -- rendering --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One cacheable unit of a rendered request: a tool, a system block or a message."""

    kind: BlockKind
    text: str
    tokens: int


@dataclass(frozen=True)
class Request:
    """A request rendered in provider order, with its Anthropic breakpoints (block indices)."""

    blocks: tuple[Block, ...]
    breakpoints: tuple[int, ...] = ()
    _hashes: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _cumulative: tuple[int, ...] = field(default=(), repr=False, compare=False)

    @property
    def tokens(self) -> int:
        """All input tokens of the request."""
        return self._cumulative[-1] if self._cumulative else 0

    def prefix_tokens(self, index: int) -> int:
        """Tokens of blocks[0..index] (inclusive); 0 for index -1."""
        return self._cumulative[index] if index >= 0 else 0

    def prefix_hash(self, index: int) -> str:
        """Hash of blocks[0..index]: equal hashes mean byte-identical prefixes."""
        return self._hashes[index]

    def text(self) -> str:
        """The rendered request (blocks joined by newlines), for inspection and tests."""
        return "\n".join(b.text for b in self.blocks)


def _chain(blocks: Sequence[Block]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    hashes: list[str] = []
    cumulative: list[int] = []
    running = hashlib.sha256()
    total = 0
    for block in blocks:
        running.update(block.kind.encode() + b"\x00" + block.text.encode() + b"\x01")
        hashes.append(running.copy().hexdigest())
        total += block.tokens
        cumulative.append(total)
    return tuple(hashes), tuple(cumulative)


def _block_text(item: Mapping[str, Any] | str) -> str:
    """A tool definition's or message's text: `stable_json`, or the text already rendered."""
    return item if isinstance(item, str) else stable_json(item)


Breakpoints = Literal["auto", "none"] | Sequence[int]


def auto_breakpoints(
    blocks: Sequence[Block], limit: int = ANTHROPIC_MAX_BREAKPOINTS
) -> tuple[int, ...]:
    """The stable boundaries: the last tool, the last system block and the last message (the
    conversation's moving end), at most `limit` of them."""
    marks: list[int] = []
    for kind in ("tool", "system", "message"):
        last = max((i for i, b in enumerate(blocks) if b.kind == kind), default=None)
        if last is not None:
            marks.append(last)
    return tuple(sorted(set(marks)))[-limit:] if limit else ()


def render_request(
    tools: Iterable[Mapping[str, Any] | str],
    system: str | Sequence[str],
    messages: Iterable[Mapping[str, Any] | str],
    count: Callable[[str], int],
    *,
    breakpoints: Breakpoints = "auto",
) -> Request:
    """Render a request in provider order (tools -> system -> messages), byte-stably.

    `tools` are provider tool definitions (kept in the given order: reordering is a change),
    `system` one text or several system blocks, `messages` role/content mappings. A tool or
    message given as a string is taken as already rendered (`stable_json` of it), so a caller
    that sends the same definitions and transcript on every call serialises each only once.
    `breakpoints`: "auto" (see `auto_breakpoints`), "none", or block indices.

    Raises:
        ValueError: more than 4 breakpoints, or one outside the request.
    """
    blocks: list[Block] = []
    for tool in tools:
        text = _block_text(tool)
        blocks.append(Block("tool", text, count(text)))
    for text in [system] if isinstance(system, str) else system:
        if text:
            blocks.append(Block("system", text, count(text)))
    for message in messages:
        text = _block_text(message)
        blocks.append(Block("message", text, count(text)))
    return assemble(blocks, breakpoints=breakpoints)


def assemble(blocks: Sequence[Block], *, breakpoints: Breakpoints = "auto") -> Request:
    """A request from blocks already in provider order (projections build blocks directly).

    Raises:
        ValueError: more than 4 breakpoints, or one outside the request.
    """
    if breakpoints == "auto":
        marks = auto_breakpoints(blocks)
    elif breakpoints == "none":
        marks = ()
    else:
        marks = tuple(sorted(set(breakpoints)))
        if len(marks) > ANTHROPIC_MAX_BREAKPOINTS:
            msg = f"at most {ANTHROPIC_MAX_BREAKPOINTS} cache breakpoints, got {len(marks)}"
            raise ValueError(msg)
        if marks and (marks[0] < 0 or marks[-1] >= len(blocks)):
            msg = f"breakpoints {list(marks)} outside the request's {len(blocks)} blocks"
            raise ValueError(msg)
    hashes, cumulative = _chain(blocks)
    return Request(tuple(blocks), marks, hashes, cumulative)


def memo_count(count: Callable[[str], int]) -> Callable[[str], int]:
    """`count` with a memo (sessions re-render the same blocks on every call)."""
    memo: dict[str, int] = {}

    def counted(text: str) -> int:
        found = memo.get(text)
        if found is None:
            found = memo[text] = count(text)
        return found

    return counted


# -- the cache --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallCost:
    """What one call was billed: tokens by kind and input-token equivalents."""

    input_tokens: int
    """All prompt tokens (uncached + cache read + cache write)."""
    cache_read_tokens: int
    cache_write_tokens: int
    billed: float

    @property
    def uncached_tokens(self) -> int:
        """Tokens billed at the full input price."""
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens

    @property
    def hit_ratio(self) -> float:
        """Share of the prompt read from the cache."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0


class PromptCache:
    """A provider's prefix cache for one session (one API key / organisation, one model).

    Example:
        ```python
        cache = PromptCache(price_model("anthropic"))
        first = cache.call(render_request(tools, system, messages, counter.count), at=0.0)
        later = cache.call(render_request(tools, system, [*messages, reply, nxt], ...), at=5.0)
        later.cache_read_tokens  # the tools, system and first messages, read at 0.1x
        ```
    """

    def __init__(self, price: PriceModel) -> None:
        """An empty cache billing with `price`."""
        self.price = price
        self._expiry: dict[str, float] = {}

    def _live(self, key: str, at: float) -> bool:
        expiry = self._expiry.get(key)
        return expiry is not None and expiry >= at

    def _store(self, request: Request, upto: int, at: float, minimum: int = 0) -> None:
        """Store (or refresh) the prefixes of at least `minimum` tokens at every block boundary
        up to `upto`."""
        expiry = at + self.price.ttl_s
        for i in range(upto + 1):
            if request.prefix_tokens(i) >= minimum:
                self._expiry[request.prefix_hash(i)] = expiry

    def call(self, request: Request, at: float = 0.0) -> CallCost:
        """Bill one call made at time `at` (seconds) and update the cache."""
        if self.price.provider == "anthropic":
            read, written = self._anthropic(request, at)
        elif self.price.provider == "openai":
            read, written = self._openai(request, at), 0
        else:
            read, written = 0, 0
        uncached = request.tokens - read - written
        return CallCost(request.tokens, read, written, self.price.billed(uncached, read, written))

    def _openai(self, request: Request, at: float) -> int:
        if request.tokens < self.price.min_cacheable:
            return 0
        matched = next(
            (
                i
                for i in reversed(range(len(request.blocks)))
                if self._live(request.prefix_hash(i), at)
            ),
            -1,
        )  # the hashes chain, so a live boundary means the whole prefix up to it matches
        step = self.price.granularity
        cached = request.prefix_tokens(matched) // step * step
        self._store(request, len(request.blocks) - 1, at)
        return cached if cached >= self.price.min_cacheable else 0

    def _anthropic(self, request: Request, at: float) -> tuple[int, int]:
        if len(request.breakpoints) > self.price.max_breakpoints:
            msg = (
                f"{len(request.breakpoints)} cache breakpoints; {self.price.name} allows "
                f"{self.price.max_breakpoints}"
            )
            raise ValueError(msg)
        hit = -1
        for mark in request.breakpoints:
            for i in range(mark, max(-1, mark - ANTHROPIC_LOOKBACK), -1):
                if i > hit and self._live(request.prefix_hash(i), at):
                    hit = i
                    break
        minimum = self.price.min_cacheable
        if hit >= 0:
            self._store(request, hit, at, minimum)  # a hit refreshes the entry's lifetime
        cacheable = [m for m in request.breakpoints if request.prefix_tokens(m) >= minimum]
        last = cacheable[-1] if cacheable else -1
        written = 0
        if last > hit:
            written = request.prefix_tokens(last) - request.prefix_tokens(hit)
            self._store(request, last, at, minimum)
        return request.prefix_tokens(hit), written


class _SessionTotal(Generic[N]):
    """A read-only attribute of `SessionCost`: the sum of the `CallCost` field of the same name
    over the session's calls."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, session: SessionCost, owner: type | None = None) -> N:
        return sum((getattr(c, self.name) for c in session.calls), start=0)


@dataclass
class SessionCost:
    """The calls of one session and their totals."""

    calls: list[CallCost] = field(default_factory=list)

    billed = _SessionTotal[float]("Billed input-token equivalents of the whole session.")
    input_tokens = _SessionTotal[int]("Raw prompt tokens of the whole session.")
    cache_read_tokens = _SessionTotal[int]("Tokens read from the cache over the session.")
    cache_write_tokens = _SessionTotal[int]("Tokens written to the cache over the session.")

    @property
    def hit_ratio(self) -> float:
        """Share of all prompt tokens read from the cache."""
        total = self.input_tokens
        return self.cache_read_tokens / total if total else 0.0


def session_cost(requests: Iterable[tuple[Request, float]], price: PriceModel) -> SessionCost:
    """Bill a session's `(request, time in seconds)` pairs, in order, on a fresh cache."""
    cache = PromptCache(price)
    out = SessionCost()
    for request, at in requests:
        out.calls.append(cache.call(request, at))
    return out
