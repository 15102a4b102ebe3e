"""`disclosure="openai"` through the real scoping and gating middlewares: `create_agent` with
`ChatOpenAI(use_responses_api=True)` against the scripted Responses endpoint.

Needs the `disclosure` branch (the middlewares' `disclosure=` option, `tests/disclosure_support`)
and the wiring of the Responses hooks (`Disclosure.outgoing` / `incoming` / `tool_objects`,
called by both middlewares around their model handler; docs/disclosure-openai.md); skipped
until both are in.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from attention_scoping.disclosure.base import SEARCH_TOOL, Disclosure
from attention_scoping.scoping.ranked import ScopeDisclosureOptions
from tests.openai_stub import OpenAIStub

support = pytest.importorskip("tests.disclosure_support")
if not all(hasattr(Disclosure, hook) for hook in ("outgoing", "incoming", "tool_objects")):
    pytest.skip("the Responses hooks are not wired yet", allow_module_level=True)

call = support.call
replies = support.replies

SESSION: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    *support.OPENING,
    ("Convert 5 km to miles.", {"active_context": "units"}, replies(
        call("convert_km", "t4a", km=5), answer="3.1 miles"
    )),
    (
        "Which tool converts kilometres?",
        {},
        [
            {"tool_search": {"query": "convert kilometres to miles"}},
            {"tool_calls": [call("convert_km", "t5a", km=2)]},
            {"content": "1.24 miles"},
        ],
    ),
    (
        "List my notes.",
        {},
        [
            {"tool_calls": [call("list_notes", "t6a")], "allow_unloaded": True},
            {"tool_calls": [call("load_context", "t6b", name="notes")]},
            {"tool_calls": [call("list_notes", "t6c")]},
            {"content": "groceries"},
        ],
    ),
    ("Add 1 and 1 again.", {}, replies(
        call("load_context", "t7a", name="math"), call("add", "t7b", a=1, b=1), answer="2"
    )),
    support.THANKS,
]  # fmt: skip
"""Eight turns: the model loads math, text, notes and math again, the application opens units,
the model searches once (answered by the gate's ranker; what it finds is already loaded, so
nothing is loaded again), and one call to a tool the
conversation never loaded is refused."""


def test_openai_session_through_the_middlewares() -> None:
    import attention_scoping

    names: Any = attention_scoping  # the disclosure= options are on the disclosure branch
    ran: list[str] = []
    script = support.script_of(SESSION)
    with OpenAIStub(script, prompt_cache=True) as stub:
        tools = support.make_tools(ran)
        model = ChatOpenAI(
            model="stub-model",
            base_url=stub.base_url,
            api_key=SecretStr("test-key"),
            use_responses_api=True,
        )
        middleware = [
            names.AttentionScopingMiddleware(
                support.make_scopes(tools),
                navigation="model",
                disclosure=ScopeDisclosureOptions(scope_tools="whole"),
            ),
            names.ToolAttentionMiddleware(
                ranker="bm25", k=1, summary_pool=names.SummaryPool(disclosure="auto")
            ),
        ]
        agent: Any = create_agent(
            model, system_prompt="Be terse.", middleware=middleware, checkpointer=InMemorySaver()
        )
        contexts = [
            support.turn(agent, text, **state).get("active_context") for text, state, _ in SESSION
        ]
        messages = agent.get_state(support.THREAD).values["messages"]
    assert stub.rejections == [] and stub.errors == [] and not stub.script
    view = stub.responses
    n = len(stub.requests)
    assert len({view.tools_json(i) for i in range(n)}) == 1
    assert len({view.system_json(i) for i in range(n)}) == 1
    assert view.names(0) == ["load_context", "math", "text", "notes", "units", "tool_search"]
    assert contexts == ["math", "math", "text", "units", "units", "notes", "math", "math"]
    assert ran == ["add", "multiply", "shout", "convert_km", "convert_km", "list_notes", "add"]
    refused = [m for m in messages if isinstance(m, ToolMessage) and m.status == "error"]
    assert [json.loads(str(m.content))["tool"] for m in refused] == ["list_notes"]
    after = 3 + 2 + 3 + 2 + 1  # the request after the model's search
    output = view.items(after, "tool_search_output")[-1]
    assert output["call_id"] == view.items(after, "tool_search_call")[-1]["call_id"]
    # the application's pair already loaded convert_km: the search does not load it again (a
    # second copy of its definition would be billed on every later request); it stays callable
    assert [f["name"] for t in output["tools"] for f in t["tools"]] == []
    note = json.dumps(view.items(after, "message")[-1])
    assert SEARCH_TOOL in note and "convert kilometres to miles" in note  # its text, as a note
