"""The disclosure modes on their own: the `Disclosure` protocol, what `Auto` picks per model,
the Anthropic tools array and its references, the `tool_choice` each mode sends, and the
errors. End to end: tests/test_disclosure_anthropic.py, test_disclosure_allowed_tools.py,
test_disclosure_two_threads.py, test_disclosure_hand_built.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

import pytest
from langchain.agents.middleware.types import ModelRequest
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from attention_scoping.disclosure import (
    Anthropic,
    Auto,
    DisclosureError,
    OpenAI,
    allowed_names,
    deferred,
    references,
    with_references,
)
from attention_scoping.disclosure.native import PAIR_PREFIX
from attention_scoping.errors import AttentionScopingError
from attention_scoping.gate import Record, stamp
from attention_scoping.middleware import AttentionScopingMiddleware, Disclosure, Rewrite
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel
from tests.disclosure_support import anthropic_chat


def make_tools() -> list[BaseTool]:
    @tool
    def beta(x: int) -> int:
        """Beta."""
        return x

    @tool
    def alpha(x: int) -> int:
        """Alpha."""
        return x

    @tool
    def load_context(name: str) -> str:
        """Load a context."""
        return name

    return [beta, alpha, load_context]


def request(
    model: BaseChatModel | None = None,
    *,
    messages: Sequence[AnyMessage] = (HumanMessage("hi"),),
    tools: Sequence[Any] | None = None,
    tool_choice: Any = None,
) -> ModelRequest[Any]:
    return ModelRequest(
        model=model or ScriptedChatModel(script=[]),
        messages=list(messages),
        tools=list(make_tools() if tools is None else tools),
        tool_choice=tool_choice,
        state=cast(Any, {"messages": list(messages)}),
    )


def names(tools: Sequence[Any]) -> list[str]:
    return [t.name for t in tools if isinstance(t, BaseTool)]


def anthropic_model() -> ChatAnthropic:
    return anthropic_chat("http://127.0.0.1:9")


def replied(names: list[str], call_id: str) -> AIMessage:
    """A reply calling `names[0]`, stamped as shown `names`."""
    record: Record = {"tools": names, "scope": "s", "opened_by": "model", "disclosure": "anthropic"}
    reply = AIMessage("", tool_calls=[{"name": names[0], "args": {}, "id": call_id}])
    return stamp(reply, "AttentionScopingMiddleware", record)


def test_every_mode_is_a_disclosure_the_middleware_takes_and_holds_no_request() -> None:
    scopes = [Scope("s", "a scope", make_tools()[:2])]
    modes: list[Any] = [Anthropic(), OpenAI(), Auto()]
    for mode in modes:
        assert isinstance(mode, Disclosure)
        assert AttentionScopingMiddleware(scopes, disclosure=mode).disclosure is mode
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(mode, "last", None)  # noqa: B010 - the attribute a mode must not take


def test_auto_picks_the_mode_from_each_requests_model() -> None:
    auto = Auto()
    local = ChatOpenAI(model="m", api_key=SecretStr("k"), base_url="http://127.0.0.1:8080/v1")
    hosted = ChatOpenAI(model="m", api_key=SecretStr("k"))
    assert isinstance(auto.mode_for(anthropic_model()), Anthropic)
    assert isinstance(auto.mode_for(hosted), OpenAI)
    assert isinstance(auto.mode_for(local), Rewrite)  # OpenAI-compatible servers: rewrite
    assert isinstance(auto.mode_for(ScriptedChatModel(script=[])), Rewrite)
    modes = [auto.disclose(request(m), ["alpha"]).mode for m in (anthropic_model(), hosted, local)]
    assert modes == ["anthropic", "openai", "rewrite"]


def test_anthropic_sends_every_tool_in_one_order_deferred_but_load_context() -> None:
    sent = Anthropic().disclose(request(anthropic_model()), ["alpha", "load_context"]).request
    assert names(sent.tools) == ["alpha", "beta", "load_context"]
    assert [deferred(t) for t in sent.tools] == [True, True, False]
    shuffled = request(anthropic_model(), tools=list(reversed(make_tools())))
    again = Anthropic().disclose(shuffled, ["beta"]).request
    assert names(again.tools) == ["alpha", "beta", "load_context"]
    assert [deferred(t) for t in again.tools] == [True, True, False]


def test_a_cache_breakpoint_never_stays_on_a_deferred_tool() -> None:
    tools = make_tools()
    tools[1] = tools[1].model_copy(update={"extras": {"cache_control": {"type": "ephemeral"}}})
    sent = Anthropic().disclose(request(anthropic_model(), tools=tools), []).request
    extras = {t.name: t.extras or {} for t in sent.tools if isinstance(t, BaseTool)}
    assert "cache_control" not in extras["alpha"] and extras["alpha"]["defer_loading"] is True
    assert extras["load_context"] == {"cache_control": {"type": "ephemeral"}}


def test_references_go_before_each_recorded_reply_and_at_the_tail_once_each() -> None:
    history: list[AnyMessage] = [
        HumanMessage("hi"),
        replied(["alpha", "load_context"], "c1"),
        ToolMessage("1", tool_call_id="c1", name="alpha"),
    ]
    out = with_references(history, ["alpha", "beta"], {"alpha", "beta"})
    # a pair after the user message for the recorded reply, beta in the last tool result
    assert isinstance(out[1], AIMessage)
    assert str(out[1].tool_calls[0]["id"]).startswith(PAIR_PREFIX)
    assert out[1].tool_calls[0]["args"] == {}
    assert list(references(out[2].content)) == ["alpha"]
    assert out[3] is history[1]
    assert list(references(out[-1].content)) == ["beta"]
    assert len(out) == len(history) + 2
    assert with_references(history, ["alpha", "beta"], {"alpha", "beta"}) == out
    # nothing new to disclose: the history as it is
    assert with_references(out, ["alpha"], {"alpha", "beta"}) == out
    # the caller's messages are never changed
    assert history[2].content == "1"


def test_the_tool_choice_never_forces_a_tool_that_is_not_shown() -> None:
    model = anthropic_model()
    hidden = Anthropic().disclose(request(model, tool_choice="beta"), ["alpha"]).request
    assert hidden.tool_choice == "auto"
    required = Anthropic().disclose(request(model, tool_choice="required"), ["alpha"]).request
    assert required.tool_choice == "any"
    hosted = ChatOpenAI(model="m", api_key=SecretStr("k"))
    kept = OpenAI().disclose(request(hosted, tool_choice="alpha"), ["alpha"]).request
    assert kept.tool_choice == "alpha"
    narrowed = OpenAI().disclose(request(hosted, tool_choice="required"), ["beta"]).request
    assert isinstance(narrowed.tool_choice, dict)
    assert narrowed.tool_choice["allowed_tools"]["mode"] == "required"
    assert allowed_names(narrowed.tool_choice) == ["beta"]
    assert OpenAI().disclose(request(hosted), []).request.tool_choice == "none"


def test_nothing_left_loaded_is_an_error_the_package_root_catches() -> None:
    with pytest.raises(DisclosureError, match="every tool would be deferred") as caught:
        Anthropic().disclose(request(anthropic_model(), tools=make_tools()[:2]), ["alpha"])
    assert isinstance(caught.value, AttentionScopingError)
    assert isinstance(caught.value, ValueError)


def test_an_error_result_carries_no_references() -> None:
    """`load_context` and a call it refused in one step: the references go into the
    `load_context` result, not the refusal after it; with only a refusal, into a pair."""
    call = AIMessage(
        "",
        tool_calls=[
            {"name": "load_context", "args": {"name": "s"}, "id": "l"},
            {"name": "alpha", "args": {}, "id": "a"},
        ],
    )
    loaded = ToolMessage("ok", tool_call_id="l", name="load_context")
    refused = ToolMessage("no", tool_call_id="a", name="alpha", status="error")
    steps: list[AnyMessage] = [HumanMessage("hi"), call, loaded, refused]
    out = with_references(steps, ["alpha"], {"alpha"})
    assert list(references(out[2].content)) == ["alpha"] and out[3] is refused
    alone = with_references([steps[0], call, refused], ["alpha"], {"alpha"})
    assert alone[2] is refused and len(alone) == 5
    assert list(references(alone[-1].content)) == ["alpha"]
