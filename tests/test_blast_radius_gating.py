"""The blast-radius rule in gate promotions and the gateway's prompt pool (issue 24, item 1),
moved out of tests/test_blast_radius_assist.py when the small-model kit moved onto the core
(issue 38): they test `attention_scoping.gating` and `attention_scoping.gateway`, not the kit.
Unchanged but for imports; the gating and gateway ports own them (their unclassified tools,
say `get_weather`, still count as reads here: fail-closed risk will change that)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from attention_scoping.gateway.tools import ToolGateway
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.gating.ranking import BM25Ranker
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

DESTRUCTIVE = {"annotations": {"destructiveHint": True}}
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def make(name: str, description: str, metadata: dict[str, Any] | None = None) -> BaseTool:
    """A tool taking an optional `query` that records its runs in `RAN`."""

    def run(query: str = "") -> str:
        RAN.append(name)
        return f"{name} ok"

    made = StructuredTool.from_function(run, name=name, description=description)
    made.metadata = metadata
    return made


# -- gate promotions -------------------------------------------------------------------------

GATE_CATALOG = [
    make("get_weather", "Current weather and temperature for a city."),
    make("read_inbox", "List the latest emails in the inbox."),
    make("send_email", "Send an email message to a recipient.", DESTRUCTIVE),
    make("translate_text", "Translate text into another language."),
]


def gated(model: ScriptedChatModel, **kwargs: Any) -> Any:
    kwargs.setdefault("ranker", BM25Ranker())
    gate = ToolAttentionMiddleware(**kwargs)
    return create_agent(model, tools=GATE_CATALOG, middleware=[gate])


@pytest.mark.parametrize(
    "text",
    ["send an email message to bob", "use send_email to write to bob"],  # ranked; named
)
def test_the_gate_never_promotes_a_write_on_its_own(text: str) -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=2, summary_pool="scope").invoke({"messages": [HumanMessage(text)]})
    assert "send_email" not in model.recorded[0]["tools"]
    assert "- send_email: Send an email message to a recipient." in model.recorded[0]["system"]


def test_a_write_is_not_promoted_when_all_candidates_fit_and_the_pool_lists_it() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=10).invoke({"messages": [HumanMessage("send an email to bob")]})
    assert model.recorded[0]["tools"] == ["get_weather", "read_inbox", "translate_text"]
    assert "- send_email: " in model.recorded[0]["system"]


def test_the_model_asks_for_a_write_by_calling_it_and_then_it_runs() -> None:
    model = ScriptedChatModel(
        script=[
            calls(tool_call("send_email", {"query": "hi bob"}, "a")),
            calls(tool_call("send_email", {"query": "hi bob"}, "b")),
            say("Sent."),
        ]
    )
    result = gated(model, k=2, summary_pool="scope").invoke(
        {"messages": [HumanMessage("send an email message to bob")]}
    )
    refused = json.loads(result["messages"][2].text)
    assert refused["error"] == "tool_not_available" and RAN == ["send_email"]
    assert "send_email" not in model.recorded[0]["tools"]
    assert "send_email" in model.recorded[1]["tools"]  # the model asked: disclosed


def test_a_write_the_application_pinned_is_shown() -> None:
    model = ScriptedChatModel(script=[say("ok")])
    gated(model, k=1, pinned=["send_email"]).invoke({"messages": [HumanMessage("weather?")]})
    assert "send_email" in model.recorded[0]["tools"]


def test_the_gate_explains_a_withheld_write() -> None:
    gate = ToolAttentionMiddleware(ranker=BM25Ranker(), k=10)
    decision = gate.decide({"messages": [HumanMessage("send an email")]}, GATE_CATALOG)
    assert "send_email" not in decision.shown and decision.withheld_writes == ["send_email"]
    assert "it writes" in decision.explain("send_email")


# -- the gateway's prompt pool ---------------------------------------------------------------


@pytest.mark.parametrize("signatures", [True, False])
def test_the_gateway_prompt_names_only_reading_tools(signatures: bool) -> None:
    post_note = make(
        "post_note", "Post a note to the team board.", {"risk": "write", "requires_approval": False}
    )  # a write nobody approves: still a write
    gateway = ToolGateway([GATE_CATALOG[0], GATE_CATALOG[1], GATE_CATALOG[3], post_note])
    prompt = gateway.prompt(pool=True, signatures=signatures)
    assert "get_weather" in prompt and "read_inbox" in prompt and "post_note" not in prompt
    assert "search_tool_catalog" in prompt
    found = [c["name"] for c in gateway.search("post a note to the board")["candidates"]]
    assert "post_note" in found  # still findable through search
