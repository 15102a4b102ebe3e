"""`EncoderSelector.warm_up`: the encoder is loaded and the catalog's documents embedded before
the first message, which then reuses them (with thousands of tools that first pass takes
seconds)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import HashingEncoder
from attention_scoping.gating.selectors import EncoderSelector
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.testing import ScriptedChatModel, say


class CountingEncoder(HashingEncoder):
    """A hashing encoder that records how many texts each call embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        return super().encode(texts)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


@pytest.mark.parametrize("warm", [True, False])
def test_the_first_selection_reuses_what_warm_up_embedded(warm: bool) -> None:
    encoder = CountingEncoder()
    selector = EncoderSelector(encoder=encoder, cache=VectorCache(persist=False))
    catalog = ScopeCatalog(
        [Scope("math", "integer arithmetic", [add]), Scope("text", "strings", [shout])]
    )
    if warm:
        selector.warm_up(catalog)
        assert encoder.batches[0] == 4  # two scope documents and two tools, in one batch
        encoder.batches.clear()
    model = ScriptedChatModel(script=[say("5")])
    mw = AttentionScopingMiddleware(catalog, selector=selector)
    create_agent(model, tools=[add, shout], middleware=[mw]).invoke(
        {"messages": [HumanMessage("Please add 2 and 3 (integer arithmetic).")]}
    )
    assert len(model.recorded) == 1
    documents = sum(n for n in encoder.batches if n > 1)
    assert documents == (0 if warm else 4)  # only the message is embedded after a warm-up
