"""`AttentionScopingMiddleware.warm_up`: the tools' schemas are read and ranked before the first
model call, which then reuses them (with thousands of tools that first read takes seconds)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

import attention_scoping.scoping.start as start
from attention_scoping import AttentionScopingMiddleware, Navigation
from attention_scoping.testing import ScriptedChatModel, say
from tests.disclosure_support import make_scopes, make_tools, turn


@pytest.mark.parametrize("warm", [True, False])
def test_the_first_call_reuses_what_warm_up_read(
    monkeypatch: pytest.MonkeyPatch, warm: bool
) -> None:
    scoping = AttentionScopingMiddleware(
        make_scopes(make_tools([])), navigation=Navigation(ranker="lexical")
    )
    if warm:
        scoping.warm_up()
    read: list[int] = []
    original = start.specs_from_tools

    def counted(tools: Any) -> Any:
        objects = list(tools)
        read.append(len(objects))
        return original(objects)

    monkeypatch.setattr(start, "specs_from_tools", counted)
    model = ScriptedChatModel(script=[say("5")])
    agent = create_agent(model, middleware=[scoping], checkpointer=InMemorySaver())
    turn(agent, "Please add 2 and 3 (integer arithmetic).")
    assert len(model.recorded) == 1
    assert read == ([] if warm else [8])  # load_context and the seven scoped tools
