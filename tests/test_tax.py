"""Token counts against known values of the tokenizers, and of the tools array as sent."""

from __future__ import annotations

import json

import pytest
from langchain_core.tools import BaseTool

from attention_scoping.common.tokens import get_counter
from attention_scoping.observe.tax import per_tool_tokens, tool_tokens, tools_json


def test_known_token_values() -> None:
    o200k = get_counter("o200k_base", allow_estimate=False)
    cl100k = get_counter("cl100k_base", allow_estimate=False)
    assert o200k.exact and o200k.label == "o200k_base (bpe-openai)"
    assert list(o200k._encode("hello world")) == [24912, 2375]  # type: ignore[misc]
    assert list(cl100k._encode("hello world")) == [15339, 1917]  # type: ignore[misc]
    assert o200k.count("") == 0


def test_unknown_encoding() -> None:
    with pytest.raises(ValueError, match="unknown encoding 'p9k'"):
        get_counter("p9k")


def test_tools_array_is_counted_as_sent(toolbox: dict[str, BaseTool]) -> None:
    tools = [toolbox["add"], toolbox["shout"]]
    text = tools_json(tools)
    sent = json.loads(text)
    assert [t["function"]["name"] for t in sent] == ["add", "shout"]
    counter = get_counter()
    assert tool_tokens(tools) == counter.count(text)
    each = per_tool_tokens(tools)
    assert set(each) == {"add", "shout"}
    # The array costs about the sum of its parts (brackets and separators aside).
    assert abs(tool_tokens(tools) - sum(each.values())) <= 3
    assert tool_tokens([]) == 0


def test_long_text_is_chunked_without_losing_tokens() -> None:
    counter = get_counter()
    unit = json.dumps({"type": "function", "function": {"name": "x", "description": "y " * 40}})
    text = ", ".join([unit] * 3000)  # ~400k characters: above one encoder call's limit
    assert counter.count(text) == pytest.approx(3000 * counter.count(unit), rel=0.01)
