"""Every tool result is bounded on every path, by the one limit of `common.limits` (issue 25):
stacks with neither scoping nor gating (approval alone, gateway routing, text calls, the repeat
guard, capability manifests) cut a plain tool's result too, and a stack of several cuts it once."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from attention_scoping.approval.middleware import ApprovalGate, ApprovalMiddleware
from attention_scoping.common.limits import RESULT_MAX_CHARS
from attention_scoping.gateway import GatewayRoutingMiddleware, ToolGateway
from attention_scoping.hesitation.repeats import RepeatedCallMiddleware
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.safety import Capability, CapabilityManifest, ManifestMiddleware
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from attention_scoping.textcalls import TextToolCallMiddleware
from tests.safety_support import SECRET, FakeClock, make_guard

HUGE = 300_000
MARK = re.compile(r"\n\[\.\.\. cut: ([\d,]+) characters, showing the first ([\d,]+)\]")


def assert_cut_once(text: str, limit: int = RESULT_MAX_CHARS, total: int = HUGE) -> None:
    """`text` is `limit` long and ends with one cut mark that reports `total`."""
    marks = MARK.findall(text)
    assert len(marks) == 1, text[-200:]
    assert int(marks[0][0].replace(",", "")) == total
    assert len(text) == limit and text.endswith("]")


@tool
def dump_text(n: int) -> str:
    """Return n characters of text."""
    return "q" * n


@tool
def archive_text(n: int) -> str:
    """Archive n characters of text and return what was archived."""
    return "a" * n


archive_text.metadata = {"risk": "write"}

DUMP = tool_call("dump_text", {"n": HUGE}, "c1")


def tool_texts(
    middleware: list[AgentMiddleware[Any, Any, Any]], tools: list[BaseTool], first: AIMessage
) -> list[str]:
    model = ScriptedChatModel(script=[first, say("done")])
    agent = create_agent(model, tools=tools, middleware=middleware)
    result = agent.invoke({"messages": [HumanMessage("dump the text")]})
    return [m.text for m in result["messages"] if isinstance(m, ToolMessage)]


def approvals() -> ApprovalMiddleware:
    return ApprovalMiddleware(ApprovalGate(TokenIssuer(SECRET)))


def routing() -> GatewayRoutingMiddleware[Any, Any]:
    return GatewayRoutingMiddleware(
        ToolGateway([archive_text], approval=ApprovalGate(TokenIssuer(SECRET)))
    )


STACKS: dict[str, Any] = {
    "approval alone": lambda: [approvals()],
    "gateway routing": lambda: [routing()],
    "text calls": lambda: [TextToolCallMiddleware()],
    "repeat guard alone": lambda: [RepeatedCallMiddleware()],
}


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_a_plain_tool_result_is_cut_in_every_stack(stack: str) -> None:
    [text] = tool_texts(STACKS[stack](), [dump_text], calls(DUMP))
    assert_cut_once(text)


def test_a_text_call_result_is_cut() -> None:
    reply = say('```json\n{"name": "dump_text", "arguments": {"n": 300000}}\n```')
    [text] = tool_texts([TextToolCallMiddleware()], [dump_text], reply)
    assert_cut_once(text)


def test_several_bounding_middleware_cut_once() -> None:
    scoping = AttentionScopingMiddleware(
        [Scope("io", "text dumps", tools=[dump_text])], default_scope="io"
    )
    stack: list[AgentMiddleware[Any, Any, Any]] = [
        scoping,
        RepeatedCallMiddleware(),
        approvals(),
        TextToolCallMiddleware(),
    ]
    [text] = tool_texts(stack, [dump_text], calls(DUMP))
    assert_cut_once(text)


def test_the_limit_is_settable_per_instance_and_none_leaves_results_whole() -> None:
    middleware = approvals()
    middleware.result_max_chars = 1_000
    [text] = tool_texts([middleware], [dump_text], calls(DUMP))
    assert_cut_once(text, 1_000)
    middleware.result_max_chars = None
    [text] = tool_texts([middleware], [dump_text], calls(DUMP))
    assert text == "q" * HUGE


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_an_approved_write_result_is_cut(run: str) -> None:
    model = ScriptedChatModel(
        script=[calls(tool_call("archive_text", {"n": HUGE}, "w1")), say("archived")]
    )
    agent = create_agent(
        model, tools=[archive_text], middleware=[approvals()], checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": run}}
    start: Any = {"messages": [HumanMessage("archive it")]}
    if run == "sync":
        agent.invoke(start, config)
    else:
        await agent.ainvoke(start, config)
    (pending,) = agent.get_state(config).interrupts
    decision: Command[Any] = Command(
        resume={"type": "approve", "token": pending.value["approval_token"]}
    )
    result = (
        agent.invoke(decision, config) if run == "sync" else await agent.ainvoke(decision, config)
    )
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "success"
    assert_cut_once(answer.text)


def manifest() -> CapabilityManifest:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return CapabilityManifest(
        "text",
        [
            Capability("dump", "Return n characters.", schema, lambda n: "d" * n),
            Capability(
                "store", "Store n characters.", schema, lambda n: {"stored": "s" * n}, write=True
            ),
        ],
    )


@pytest.mark.parametrize("run", ["sync", "async"])
async def test_a_manifest_read_result_is_cut(run: str) -> None:
    model = ScriptedChatModel(
        script=[calls(tool_call("text__dump", {"n": HUGE}, "r1")), say("done")]
    )
    middleware = ManifestMiddleware([manifest()], guard=make_guard(FakeClock()))
    agent = create_agent(model, middleware=[middleware])
    start: Any = {"messages": [HumanMessage("dump")]}
    result = agent.invoke(start) if run == "sync" else await agent.ainvoke(start)
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert_cut_once(answer.text)


def test_a_manifest_write_outcome_is_cut() -> None:
    guard = make_guard(FakeClock())
    middleware = ManifestMiddleware([manifest()], guard=guard)

    def policy(messages: list[Any], tools: list[str]) -> AIMessage:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            return calls(tool_call("text__store", {"n": HUGE}, "w1"))
        if '"confirmation_code"' in last.text:
            code = re.search(r'"confirmation_code": "([^"]+)"', last.text)
            assert code is not None
            return calls(
                tool_call("text__store", {"n": HUGE, "confirmation_code": code.group(1)}, "w2")
            )
        return say("stored")

    agent = create_agent(ScriptedChatModel(policy=policy), middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage("store it")]})
    preview, outcome = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(preview.text) < RESULT_MAX_CHARS
    assert outcome.text.startswith('{"status": "executed"')
    assert len(outcome.text) <= RESULT_MAX_CHARS
    body = json.loads(outcome.text)  # only the result field is cut: the payload stays JSON
    assert body["next_step"].startswith("The change is applied.")
    whole = json.dumps({"stored": "s" * HUGE}, separators=(", ", ": "))
    [(total, shown)] = MARK.findall(body["result"])
    assert int(total.replace(",", "")) == len(whole)
    assert body["result"].startswith(whole[: int(shown.replace(",", ""))])
    assert body["result"].endswith(f"showing the first {shown}]")
