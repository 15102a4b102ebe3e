"""Shared by the hesitation tests: a scoped agent (the core `AttentionScopingMiddleware`, default
options) with the hesitation middleware of either form."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from attention_scoping.hesitation.middleware import HesitationMiddleware
from attention_scoping.hesitation.node import HesitationNodeMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

Form = Literal["in_call", "node"]
BOTH = pytest.mark.parametrize("form", ["in_call", "node"])
MATH = "multiply 47 and 83 (integer arithmetic)"


def reading(scopes: list[Scope]) -> list[Scope]:
    """`scopes` with every tool declared a read (`Scope(..., reads=...)`): the arithmetic and
    text tools change nothing, and code names or opens only declared reads."""
    return [
        Scope(s.name, s.description, s.tool_objects, s.prompt, reads=s.tool_objects) for s in scopes
    ]


def scoped_agent(
    scopes: list[Scope],
    script: list[AIMessage],
    form: Form = "in_call",
    *,
    declare_reads: bool = True,
    **hesitation: Any,
) -> tuple[Any, ScriptedChatModel]:
    """Scoping (the default lexical selector) then the hesitation middleware of `form`, told
    the scopes' declared reads (`reads=scoping.catalog`). `declare_reads=False` keeps the
    scopes as given (a tool nobody classified may write)."""
    model = ScriptedChatModel(script=script)
    kind = HesitationMiddleware if form == "in_call" else HesitationNodeMiddleware
    scoping = AttentionScopingMiddleware(reading(scopes) if declare_reads else scopes)
    hesitation.setdefault("reads", scoping.catalog)
    tools = [t for s in scopes for t in s.tool_objects]
    middleware: list[Any] = [scoping, kind(**hesitation)]
    agent = create_agent(model, tools=tools, middleware=middleware, checkpointer=InMemorySaver())
    return agent, model


def sent(model: ScriptedChatModel, call: int) -> list[BaseMessage]:
    """The messages the model was sent on its `call`-th call."""
    messages: list[BaseMessage] = model.recorded[call]["messages"]
    return messages


def draft_then_tool(scopes: list[Scope], form: Form, draft: str) -> tuple[Any, ScriptedChatModel]:
    """A scoped agent whose model first answers `MATH` without a tool (`draft`), then calls
    multiply(47, 83) and answers 3901: the case the nudges exist for."""
    script = [say(draft), calls(tool_call("multiply", {"a": 47, "b": 83})), say("3901")]
    return scoped_agent(scopes, script, form)
