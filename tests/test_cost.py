"""The provider-faithful cost model: the providers' documented examples, reproduced.

Token counts use `len` (one token per character) so every figure is exact.
"""

from __future__ import annotations

from typing import Any

import pytest

from attention_scoping_lab.cost import (
    ANTHROPIC_MIN_CACHEABLE,
    PRICE_MODELS,
    PriceModelError,
    PromptCache,
    Request,
    price_model,
    render_request,
    session_cost,
    stable_json,
)


def _tool(name: str, size: int = 100) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "d" * size}}


def _msgs(n: int, size: int = 100, changed: int | None = None) -> list[str]:
    """`n` message blocks of `size` tokens; block number `changed` (1-based) edited."""
    out = []
    for i in range(1, n + 1):
        text = f"{i:03d}" + ("x" if i == changed else "m") * (size - 3)
        out.append(text)
    return out


def test_openai_documented_usage_2006_prompt_1920_cached() -> None:
    """OpenAI prompt-caching guide, usage example: a repeated 2,006-token prompt reports
    `cached_tokens: 1920` (15 x 128: hits come in 128-token steps from 1,024)."""
    cache = PromptCache(price_model("openai"))
    request = render_request([], "s" * 2006, [], len)
    first = cache.call(request, at=0)
    second = cache.call(request, at=10)
    assert (first.input_tokens, first.cache_read_tokens) == (2006, 0)
    assert (second.input_tokens, second.cache_read_tokens) == (2006, 1920)
    assert second.cache_write_tokens == 0  # OpenAI bills no cache writes


def test_openai_minimum_and_128_token_steps() -> None:
    """OpenAI guide: caching starts at 1,024 tokens; hits are 1,024, 1,152, 1,280, ..."""
    cache = PromptCache(price_model("openai"))
    short = render_request([], "a" * 1023, [], len)
    cache.call(short, at=0)
    assert cache.call(short, at=1).cache_read_tokens == 0
    base = ["b" * 1100]
    cache.call(render_request([], base, [], len), at=2)
    longer = render_request([], [*base, "c" * 500], [], len)
    assert cache.call(longer, at=3).cache_read_tokens == 1024  # 1,100 shared -> 1,024


def test_a_changed_tool_invalidates_system_and_messages() -> None:
    """Provider order tools -> system -> messages: a change in the tools array re-bills the
    system prompt and the whole conversation after it."""
    system, messages = "S" * 2000, _msgs(10)
    tools = [_tool("a"), _tool("b"), _tool("c")]
    for name in ("openai", "anthropic"):
        cache = PromptCache(price_model(name))
        cache.call(render_request(tools, system, messages, len), at=0)
        same = cache.call(render_request(tools, system, messages, len), at=1)
        assert same.cache_read_tokens >= same.input_tokens - 128
        changed = [tools[0], _tool("z"), tools[2]]
        after = cache.call(render_request(changed, system, messages, len), at=2)
        assert after.cache_read_tokens < 200, name  # at most the first tool survives


def _lookback_case(changed: int | None) -> tuple[int, int, int]:
    """Anthropic docs, "Understanding the lookback window": 30 blocks, cache_control only on
    block 30; then block 31 is sent, with block `changed` edited (or none)."""
    cache = PromptCache(price_model("anthropic"))
    cache.call(render_request([], [], _msgs(30), len, breakpoints=[29]), at=0)
    cost = cache.call(render_request([], [], _msgs(31, changed=changed), len, breakpoints=[29]), 5)
    return cost.cache_read_tokens, cost.cache_write_tokens, cost.uncached_tokens


def test_anthropic_lookback_window_documented_example() -> None:
    """No change: hit at block 30, only block 31 processed. Block 25 changed: hit at block 24,
    blocks 25-30 written again. Block 5 changed: the 20 checks (30 back to 11) find nothing."""
    assert _lookback_case(None) == (3000, 0, 100)
    assert _lookback_case(25) == (2400, 600, 100)
    assert _lookback_case(5) == (0, 3000, 100)


def test_anthropic_lookback_is_exactly_20_block_boundaries() -> None:
    """The breakpoint and the 19 boundaries before it: with block 12 of 31 edited, the
    boundary after block 11 (the 20th checked) is found; with block 11 edited, the boundary
    after block 10 (the 21st) is not. No minimum, so only the window decides."""
    price = price_model("anthropic", min_cacheable=0)
    for changed, expected in ((12, (1100, 1900, 100)), (11, (0, 3000, 100))):
        cache = PromptCache(price)
        cache.call(render_request([], [], _msgs(30), len, breakpoints=[29]), at=0)
        edited = render_request([], [], _msgs(31, changed=changed), len, breakpoints=[29])
        cost = cache.call(edited, at=5)
        assert (cost.cache_read_tokens, cost.cache_write_tokens, cost.uncached_tokens) == expected


def test_every_breakpoint_has_its_own_lookback_window() -> None:
    """25 messages added since the last call: the last message's window (its 20 boundaries)
    holds nothing stored, but the system prompt's breakpoint still reads tools and system."""
    cache = PromptCache(price_model("anthropic"))
    tools, system = [_tool("a"), _tool("b")], "S" * 2000
    first = render_request(tools, system, _msgs(2), len)
    cache.call(first, at=0)
    later = render_request(tools, system, _msgs(27), len)
    assert later.breakpoints == (1, 2, 29)
    cost = cache.call(later, at=5)
    assert cost.cache_read_tokens == later.prefix_tokens(2)
    assert cost.cache_write_tokens == later.tokens - later.prefix_tokens(2)
    assert cost.billed == pytest.approx(
        cost.cache_read_tokens * 0.1 + cost.cache_write_tokens * 1.25
    )


def test_anthropic_pricing_multipliers_match_the_price_table() -> None:
    """Anthropic pricing table, Claude Sonnet 4.5: base input $3/MTok, 5m cache writes $3.75,
    1h cache writes $6, cache hits and refreshes $0.30."""
    five, hour = PRICE_MODELS["anthropic"], PRICE_MODELS["anthropic-1h"]
    assert 3 * five.cache_write == pytest.approx(3.75)
    assert 3 * hour.cache_write == pytest.approx(6.0)
    assert 3 * five.cache_read == pytest.approx(0.30)
    assert 3 * hour.cache_read == pytest.approx(0.30)


def test_openai_pricing_discounts_by_family() -> None:
    """OpenAI pricing page: GPT-5 $1.25 -> cached $0.125; GPT-4.1 $2.00 -> $0.50; GPT-4o
    $2.50 -> $1.25 per MTok. The default is the GPT-5 family; the others via cache_read."""
    assert 1.25 * price_model("openai").cache_read == pytest.approx(0.125)
    assert 2.0 * price_model("openai", cache_read=0.25).cache_read == pytest.approx(0.5)
    gpt4o = price_model("openai", cache_read=0.5)
    cache = PromptCache(gpt4o)
    request = render_request([], "s" * 2006, [], len)
    cache.call(request, 0)
    assert cache.call(request, 1).billed == pytest.approx(86 + 1920 * 0.5)


def test_anthropic_write_then_read_billing() -> None:
    """A 2,000-token prefix: the first call writes it (1.25x), the next reads it (0.1x);
    tokens after the last breakpoint are billed at 1x."""
    cache = PromptCache(price_model("anthropic"))
    first = cache.call(render_request([_tool("t", 1000)], "S" * 1000, ["u" * 50], len), 0)
    assert (first.cache_read_tokens, first.cache_write_tokens) == (0, first.input_tokens)
    assert first.billed == pytest.approx(first.input_tokens * 1.25)
    second = cache.call(
        render_request([_tool("t", 1000)], "S" * 1000, ["u" * 50, "v" * 30], len), 2
    )
    assert second.cache_read_tokens == first.input_tokens
    assert second.cache_write_tokens == 30
    assert second.billed == pytest.approx(first.input_tokens * 0.1 + 30 * 1.25)


def test_anthropic_minimum_cacheable_prefix_is_a_model_parameter() -> None:
    """Anthropic prompt-caching docs: prompts shorter than the model's minimum (1,024 for
    Sonnet 4.5, 2,048 for Haiku 3.5, 4,096 for Haiku 4.5) are processed without caching."""
    assert ANTHROPIC_MIN_CACHEABLE["sonnet-4.5"] == 1024
    assert ANTHROPIC_MIN_CACHEABLE["haiku-3.5"] == 2048
    assert ANTHROPIC_MIN_CACHEABLE["haiku-4.5"] == 4096
    request = render_request([], "S" * 3000, [], len)
    for model, expected in (("sonnet-4.5", 3000), ("haiku-4.5", 0)):
        price = price_model("anthropic", min_cacheable=ANTHROPIC_MIN_CACHEABLE[model])
        cache = PromptCache(price)
        assert cache.call(request, 0).cache_write_tokens == expected
        assert cache.call(request, 1).cache_read_tokens == expected


def test_ttl_expires_and_hits_refresh() -> None:
    """5-minute entries expire after 300 s unused; each hit refreshes them; 1-hour ones last."""
    request = render_request([], "S" * 2000, [], len)
    stale = PromptCache(price_model("anthropic"))
    stale.call(request, 0)
    assert stale.call(request, 301).cache_read_tokens == 0
    refreshed = PromptCache(price_model("anthropic"))
    refreshed.call(request, 0)
    refreshed.call(request, 200)
    assert refreshed.call(request, 450).cache_read_tokens == 2000
    hour = PromptCache(price_model("anthropic-1h"))
    hour.call(request, 0)
    assert hour.call(request, 3000).cache_read_tokens == 2000


def test_no_caching_bills_everything() -> None:
    request = render_request([_tool("a")], "S" * 2000, _msgs(3), len)
    session = session_cost([(request, 0), (request, 1)], price_model("none"))
    assert session.billed == 2 * request.tokens
    assert session.hit_ratio == 0


def test_at_most_four_breakpoints() -> None:
    """Anthropic allows up to 4 cache_control breakpoints per request."""
    with pytest.raises(ValueError, match="at most 4"):
        render_request([], [], _msgs(6), len, breakpoints=[0, 1, 2, 3, 4])
    auto = render_request([_tool("a"), _tool("b")], "S", _msgs(3), len)
    assert auto.breakpoints == (1, 2, 5)  # last tool, system, last message


def test_stable_serialisation_ignores_key_order() -> None:
    one = {"type": "function", "function": {"name": "a", "parameters": {"x": 1, "y": 2}}}
    two = {"function": {"parameters": {"y": 2, "x": 1}, "name": "a"}, "type": "function"}
    assert stable_json(one) == stable_json(two)
    first: Request = render_request([one], "S", [], len)
    second: Request = render_request([two], "S", [], len)
    assert first.prefix_hash(1) == second.prefix_hash(1)
    assert first.text() == second.text()
    message = {"role": "user", "content": "hi"}
    rendered = render_request([stable_json(one)], "S", [stable_json(message)], len)
    assert rendered == render_request([two], "S", [message], len)  # pre-rendered texts
    assert rendered.prefix_hash(2) == render_request([one], "S", [message], len).prefix_hash(2)


def test_bad_price_models_name_the_valid_values() -> None:
    with pytest.raises(PriceModelError, match="valid: anthropic, anthropic-1h, openai, none"):
        price_model("antropic")
    with pytest.raises(PriceModelError, match="cache_read must be a number >= 0"):
        price_model("anthropic", cache_read=-0.1)
    with pytest.raises(PriceModelError, match="cache_write must be a number >= 0, got nan"):
        price_model("anthropic", cache_write=float("nan"))
    with pytest.raises(PriceModelError, match="ttl_s must be a number >= 0, got True"):
        price_model("anthropic", ttl_s=True)
    with pytest.raises(PriceModelError, match="valid: cache_read"):
        price_model("openai", discount=0.5)
