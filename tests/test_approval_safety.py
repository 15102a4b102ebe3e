"""Approvals a user (or a UI) cannot break: malformed tokens are refused as `malformed`, tokens
work only in their thread and are burnt on rejection, and an in-memory store that ends up
serving several workers says so."""

from __future__ import annotations

import json
import multiprocessing
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from attention_scoping.approval.middleware import ApprovalGate
from attention_scoping.gateway.tools import CatalogEntry, ToolGateway
from attention_scoping.safety.token_stores import (
    MemoryTokenStore,
    SharedMemoryStoreWarning,
    TokenStore,
)
from attention_scoping.safety.tokens import MalformedTokenError, TokenIssuer, tool_call_hash
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import ARGS, SECRET, FakeClock, make_scheduled_jobs


def execute(call_id: str) -> Any:
    return calls(
        tool_call("execute_tool", {"tool_name": "scheduled_jobs", "arguments": ARGS}, call_id)
    )


class Threads:
    """One agent (one gateway, one checkpointer) serving several conversation threads."""

    def __init__(self, script: list[Any], store: TokenStore | None = None) -> None:
        self.runs: list[dict[str, Any]] = []
        self.clock = FakeClock()
        issuer = TokenIssuer(SECRET, clock=self.clock, store=store)
        entry = CatalogEntry.from_tool(make_scheduled_jobs(self.runs), risk="write")
        self.gate = ApprovalGate(issuer, ttl=600)
        gateway = ToolGateway([entry], approval=self.gate)
        model = ScriptedChatModel(script=script, policy=lambda m, t: say("ok"))
        self.agent = create_agent(model, tools=gateway.tools, checkpointer=InMemorySaver())

    @staticmethod
    def config(thread: str) -> Any:
        return {"configurable": {"thread_id": thread}}

    def start(self, thread: str, text: str = "remind me") -> dict[str, Any]:
        self.agent.invoke({"messages": [HumanMessage(text)]}, self.config(thread))
        return self.pending(thread)

    def pending(self, thread: str) -> dict[str, Any]:
        (interrupt,) = self.agent.get_state(self.config(thread)).interrupts
        return dict(interrupt.value)

    def resume(self, thread: str, decision: Any) -> None:
        self.agent.invoke(Command(resume=decision), self.config(thread))

    def result(self, thread: str, call_id: str) -> dict[str, Any]:
        messages = self.agent.get_state(self.config(thread)).values["messages"]
        found = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        assert len(found) == 1, "every tool call is answered exactly once"
        body: dict[str, Any] = json.loads(found[0].text)
        return body


# -- malformed tokens ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token",
    [
        "appr_é.signature",  # non-ASCII in the claims
        "appr_claims.sïgnature",  # non-ASCII in the signature
        "appr_\ud800.x",  # a lone surrogate (cannot even be encoded)
        "appr_" + "A" * 20_000 + ".x",  # absurdly long
        "appr_a b.c",  # a space
        "appr_a\x00.c",  # a NUL
    ],
)
def test_malformed_tokens_are_refused_as_malformed(token: str) -> None:
    issuer = TokenIssuer(SECRET)
    with pytest.raises(MalformedTokenError):
        issuer.consume(token, tool_call_hash("t", {}))
    _, refusal = ApprovalGate(issuer).verify("t", {}, token, thread_id="a")
    assert refusal is not None and refusal["reason"] == "malformed"


@pytest.mark.parametrize(
    "decision",
    [{"type": "approve", "token": "appr_é.signature"}, "appr_ünï.code"],
    ids=["approve", "bare"],
)
def test_a_non_ascii_token_in_a_run_is_a_refusal(decision: Any) -> None:
    h = Threads([execute("x1")])
    h.start("a")
    h.resume("a", decision)
    body = h.result("a", "x1")
    assert body["error"] == "approval_refused" and body["reason"] == "malformed"
    assert h.runs == []


def test_malformed_decisions_are_refused() -> None:
    h = Threads([execute("x1"), say("fine"), execute("x2")])
    value = h.start("a")
    h.resume("a", {"type": "approve", "token": value["approval_token"], "args": "not an object"})
    assert h.result("a", "x1")["reason"] == "invalid_decision"
    h.start("a", "again")
    h.resume("a", {"type": "edit", "args": {**ARGS, "title": float("nan")}})
    body = h.result("a", "x2")
    assert body["error"] in {"approval_refused", "invalid_arguments"}
    assert h.runs == []


# -- tokens bound to their thread, burnt on rejection -----------------------------------------


def test_a_token_approves_only_in_its_own_thread() -> None:
    h = Threads([execute("x1"), execute("x2")])
    in_a = h.start("a")
    in_b = h.start("b")  # the identical call in another thread
    assert in_a["args"] == in_b["args"]
    h.resume("b", {"type": "approve", "token": in_a["approval_token"]})
    body = h.result("b", "x2")
    assert body["reason"] == "context_mismatch" and "another context" in body["message"]
    assert h.runs == []
    h.resume("a", {"type": "approve", "token": in_a["approval_token"]})  # still good at home
    assert h.result("a", "x1")["status"] == "ok" and len(h.runs) == 1


def test_a_rejected_token_is_burnt() -> None:
    h = Threads([execute("x1"), say("not run"), execute("x2")])
    rejected = h.start("a")
    h.resume("a", {"type": "reject", "message": "no"})
    assert h.result("a", "x1")["error"] == "rejected_by_user"
    h.start("a", "do it after all")  # the identical call again, in the same thread
    h.resume("a", {"type": "approve", "token": rejected["approval_token"]})
    body = h.result("a", "x2")
    assert body["reason"] == "replayed" and h.runs == []


def test_a_token_sent_back_with_a_rejection_is_burnt_too() -> None:
    clock = FakeClock()
    gate = ApprovalGate(TokenIssuer(SECRET, clock=clock), ttl=600)
    value = gate.request("t", {"a": 1}, thread_id="a")  # no call id: a random token id
    token = value["approval_token"]
    gate.burn("t", {"a": 1}, token_id=None, expires_at=0, offered=token, thread_id="a")
    _, refusal = gate.verify("t", {"a": 1}, value["approval_token"], thread_id="a")
    assert refusal is not None and refusal["reason"] == "replayed"
    other = gate.request("t", {"a": 1}, thread_id="a")["approval_token"]
    gate.burn("t", {"a": 1}, token_id=None, expires_at=0, offered="appr_é.x", thread_id="a")
    receipt, refusal = gate.verify("t", {"a": 1}, other, thread_id="a")  # untouched by junk
    assert refusal is None and receipt is not None


def test_re_running_the_node_reissues_the_same_token_id() -> None:
    gate = ApprovalGate(TokenIssuer(SECRET), ttl=600)
    ids = {
        gate.issuer.verify(
            gate.request(
                "t",
                {"a": 1},
                tool_call_id="c1",
                thread_id="a",
                token_id=gate._token_id("t", {"a": 1}, "c1", "a", 0),
            )["approval_token"],
            gate.intent("t", {"a": 1}),
            context="a",
        ).token_id
        for _ in range(3)
    }
    assert len(ids) == 1  # what the human saw and what a re-run issues are burnt together
    assert gate._token_id("t", {"a": 1}, "c1", "b", 0) not in ids  # another thread
    assert gate._token_id("t", {"a": 1}, "c1", "a", 1) not in ids  # after an edit


# -- the in-memory store warns when it serves several workers ----------------------------------


def test_memory_store_warns_when_a_token_comes_from_another_worker() -> None:
    worker_1 = Threads([execute("x1")])
    worker_2 = Threads([execute("x1")])  # another process's view: its own memory store
    value = worker_1.start("a")
    worker_2.start("a")
    with pytest.warns(SharedMemoryStoreWarning, match="another worker"):
        worker_2.resume("a", {"type": "approve", "token": value["approval_token"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", SharedMemoryStoreWarning)
        worker_1.resume("a", {"type": "approve", "token": value["approval_token"]})
    assert len(worker_1.runs) == 1 and len(worker_2.runs) == 1  # the replay it warns about


def _use_after_fork(store: MemoryTokenStore, out: Any) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        store.claim_token("t1", 1e12, 0.0)
    out.put([type(w.message).__name__ for w in seen])


def test_memory_store_warns_when_used_in_a_forked_process() -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    ctx = multiprocessing.get_context("fork")
    store = MemoryTokenStore()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SharedMemoryStoreWarning)
        assert store.claim_token("t0", 1e12, 0.0)  # its own process: silent
    out = ctx.Queue()
    child = ctx.Process(target=_use_after_fork, args=(store, out))
    child.start()
    assert out.get(timeout=60) == ["SharedMemoryStoreWarning"]
    child.join(timeout=60)
