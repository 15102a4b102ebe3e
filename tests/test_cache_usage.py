"""Cached tokens end to end: the scripted OpenAI-compatible server reports
`prompt_tokens_details.cached_tokens` by OpenAI's prefix rule, ChatOpenAI carries them in
`usage_metadata`, and the example agent shows them per call."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tests.openai_stub import OpenAIStub

LONG_SYSTEM = "You are a careful assistant. " + " ".join(
    f"Rule {i}: answer with the fewest words that are still correct." for i in range(150)
)


def _cache_read(message: Any) -> int:
    details = (message.usage_metadata or {}).get("input_token_details") or {}
    return int(details.get("cache_read", 0))


def test_repeated_prefix_is_reported_cached() -> None:
    with OpenAIStub(script=[{"content": "a"}, {"content": "b"}], prompt_cache=True) as stub:
        model = ChatOpenAI(
            model="stub-model", base_url=stub.base_url, api_key=SecretStr("test-key")
        )
        first = model.invoke([SystemMessage(LONG_SYSTEM), HumanMessage("hi")])
        second = model.invoke(
            [SystemMessage(LONG_SYSTEM), HumanMessage("hi"), AIMessage("a"), HumanMessage("more")]
        )
    assert first.usage_metadata and first.usage_metadata["input_tokens"] > 1024
    assert _cache_read(first) == 0
    cached = _cache_read(second)
    assert cached >= 1024 and cached % 128 == 0
    assert cached <= first.usage_metadata["input_tokens"]


def test_a_changed_system_prompt_is_not_cached() -> None:
    with OpenAIStub(script=[{"content": "a"}, {"content": "b"}], prompt_cache=True) as stub:
        model = ChatOpenAI(
            model="stub-model", base_url=stub.base_url, api_key=SecretStr("test-key")
        )
        model.invoke([SystemMessage(LONG_SYSTEM), HumanMessage("hi")])
        second = model.invoke([SystemMessage("Changed. " + LONG_SYSTEM), HumanMessage("hi")])
    assert _cache_read(second) == 0


def test_scripted_usage_wins() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 1}
    with OpenAIStub(script=[{"content": "a", "usage": usage}], prompt_cache=True) as stub:
        model = ChatOpenAI(
            model="stub-model", base_url=stub.base_url, api_key=SecretStr("test-key")
        )
        reply = model.invoke([HumanMessage("hi")])
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] == 7
