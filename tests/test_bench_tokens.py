"""Token counts of what a model call carries, against known values of the tokenizers."""

from __future__ import annotations

import json
from pathlib import Path

from attention_scoping.common.tokens import get_counter
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.observe.tax import (
    layer_tokens,
    shared_prefix_tokens,
    summary_pool_tokens,
    tool_tokens,
    tools_json,
)
from attention_scoping.prompt import build_layers
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping_lab.catalog import load_catalog

DATA = Path(__file__).resolve().parent / "data"


def test_known_counts_of_short_texts() -> None:
    o200k, cl100k = get_counter("o200k_base"), get_counter("cl100k_base")
    assert o200k.count("hello world") == 2
    assert cl100k.count("hello world") == 2
    assert o200k.count('[{"type": "function"}]') == len(o200k._encode('[{"type": "function"}]'))  # type: ignore[misc]


def test_the_tools_array_is_counted_exactly_as_sent() -> None:
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    counter = get_counter()
    schemas = [s.provider_schema() for s in specs]
    text = json.dumps(schemas, ensure_ascii=False)
    assert tools_json(schemas) == text
    assert tool_tokens(schemas, counter) == len(counter._encode(text))  # type: ignore[misc]


def test_chunked_count_of_a_huge_array_equals_the_whole_count() -> None:
    counter = get_counter()
    schemas = [
        {"type": "function", "function": {"name": f"tool_{i}", "description": "word " * 30}}
        for i in range(2500)
    ]
    text = tools_json(schemas)
    assert len(text) > 400_000  # several chunks
    assert counter.count(text) == len(counter._encode(text))  # type: ignore[misc]


def test_prompt_layers_and_summary_pool() -> None:
    counter = get_counter()
    catalog = ScopeCatalog([Scope("a", "first scope"), Scope("b", "second scope")])
    layers = build_layers(catalog, "a", "layered", "Be brief.")
    counts = layer_tokens(layers, counter)
    assert counts["total"] == counter.count(layers.render())
    assert counts["index"] + counts["core"] + counts["module"] >= counts["total"] - 4
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    gate = ToolAttentionMiddleware(ranker="bm25", summary_pool="scope", k=1, emit_events=False)
    gate.index.fit_catalog(specs)
    text, tokens = gate.pool([s.name for s in specs], not_reads=())
    assert summary_pool_tokens([(s.name, s.summary) for s in specs], counter) == tokens
    assert counter.count(text) == tokens


def test_shared_prefix() -> None:
    counter = get_counter()
    assert shared_prefix_tokens("hello world", "hello world", counter) == 2
    assert shared_prefix_tokens("abc", "xyz", counter) == 0
    assert shared_prefix_tokens("hello world, again", "hello world! new", counter) == 2
