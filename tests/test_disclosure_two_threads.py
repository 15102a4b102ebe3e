"""Issue 38, case 4: one `AttentionScopingMiddleware(..., disclosure=Auto())` shared by two agents
in two threads at once, one on `ChatAnthropic` (the native mode, its exact request recorded by
the scripted Messages server, `tests/anthropic_stub.py`), one on a scripted chat model (rewrite).

Both replies are in flight together; each call is decided by its own reply's record, never by
the other thread's mode: the Anthropic thread's call of `wipe_disk`, which it was never shown
(sent deferred, never referenced), is refused and does not run; the other thread's `read_file`
runs. Six runs.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import SecretStr

from attention_scoping.disclosure import Auto
from attention_scoping.errors import ErrorCode
from attention_scoping.gate import record_of
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.anthropic_stub import AnthropicStub
from tests.disclosure_support import anthropic_chat

OWNER = "AttentionScopingMiddleware"


def disk_tools(ran: list[str]) -> list[BaseTool]:
    """`read_file` (declared a read) and `wipe_disk` (unclassified: may write)."""

    @tool
    def read_file(path: str) -> str:
        """Read a text file."""
        ran.append("read_file")
        return f"contents of {path}"

    @tool
    def wipe_disk(device: str) -> str:
        """Erase a whole disk."""
        ran.append("wipe_disk")
        return "wiped"

    read_file.metadata = {"risk": "read"}
    return [read_file, wipe_disk]


def refusals(messages: list[BaseMessage]) -> dict[str, str]:
    """Tool name -> error code of each refused call."""
    return {
        str(m.name): json.loads(str(m.content))["error"]
        for m in messages
        if isinstance(m, ToolMessage) and m.status == "error"
    }


def first_reply(messages: list[BaseMessage]) -> AIMessage:
    """The first model reply of a thread."""
    return next(m for m in messages if isinstance(m, AIMessage))


def run_once() -> tuple[dict[str, Any], list[str], AnthropicStub, ScriptedChatModel]:
    """Both agents on one middleware instance, their first replies in flight together."""
    ran: list[str] = []
    tools = disk_tools(ran)
    scoping = AttentionScopingMiddleware(
        [
            Scope("files", "reading files", [tools[0]]),
            Scope("disk", "disk maintenance", [tools[1]]),
        ],
        selector=None,
        disclosure=Auto(),
    )
    together = threading.Barrier(2, timeout=10)

    def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
        together.wait()
        return {"tool_calls": [{"name": "wipe_disk", "id": "a1", "arguments": {"device": "sda"}}]}

    def scripted_reply(messages: list[BaseMessage], names: list[str]) -> AIMessage:
        together.wait()
        return calls(tool_call("read_file", {"path": "notes.txt"}, id="b1"))

    scripted = ScriptedChatModel(script=[scripted_reply, say("b done")])
    results: dict[str, Any] = {}
    with AnthropicStub([anthropic_reply, {"content": "a done"}]) as stub:
        models = {
            "anthropic": anthropic_chat(stub.base_url, api_key=SecretStr("test-key")),
            "scripted": scripted,
        }

        def run(key: str) -> None:
            agent: Any = create_agent(models[key], tools=tools, middleware=[scoping])
            start = {"messages": [("user", "go")], "active_context": "files"}
            results[key] = agent.invoke(start)

        threads = [threading.Thread(target=run, args=(key,)) for key in models]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    return results, ran, stub, scripted


def test_one_auto_instance_serves_anthropic_and_rewrite_threads_at_once() -> None:
    for _ in range(6):
        results, ran, stub, scripted = run_once()
        assert ran == ["read_file"]
        a, b = results["anthropic"]["messages"], results["scripted"]["messages"]
        assert refusals(a) == {"wipe_disk": ErrorCode.TOOL_NOT_IN_CONTEXT}
        assert refusals(b) == {}
        assert [m.content for m in b if isinstance(m, ToolMessage)] == ["contents of notes.txt"]
        record_a, record_b = record_of(first_reply(a), OWNER), record_of(first_reply(b), OWNER)
        assert record_a is not None and record_b is not None
        assert (record_a["disclosure"], record_a["tools"]) == (
            "anthropic",
            ["load_context", "read_file"],
        )
        assert (record_b["disclosure"], record_b["tools"]) == (
            "rewrite",
            ["load_context", "read_file"],
        )
        # The Anthropic request: every tool, fixed order, all deferred but load_context; what
        # the reply may call referenced at the tail; wipe_disk sent, never callable.
        assert stub.tool_names(0) == ["read_file", "wipe_disk", "load_context"]
        assert stub.deferred(0) == ["read_file", "wipe_disk"]
        assert stub.callable(0) == {"load_context", "read_file"}
        assert stub.rejections == []
        # What the real API could not produce: the scripted call of wipe_disk, then that call
        # in the next request's history.
        assert [v["problem"] for v in stub.violations] == [
            "reply calls 'wipe_disk', which is not callable",
            "messages.3: tool_use of 'wipe_disk' before it loaded",
        ]
        # The rewrite request: only what the reply may call.
        assert sorted(scripted.recorded[0]["tools"]) == ["load_context", "read_file"]
