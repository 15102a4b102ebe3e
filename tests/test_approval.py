"""Approval of write tools: signed single-use tokens bound to the exact call, via interrupt."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from attention_scoping.approval.middleware import (
    ApprovalGate,
    ApprovalMiddleware,
    asks_approval,
    write_tool_names,
)
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import ARGS, SECRET, FakeClock, make_gateway


def execute(args: dict[str, Any], call_id: str) -> Any:
    return calls(
        tool_call("execute_tool", {"tool_name": "scheduled_jobs", "arguments": args}, call_id)
    )


class Harness:
    """An agent over the scheduled_jobs gateway, a fake clock and a record of real runs."""

    def __init__(self, script: list[Any], ttl: float = 600) -> None:
        self.runs: list[dict[str, Any]] = []
        self.clock = FakeClock()
        self.gateway = make_gateway(self.runs, self.clock, ttl=ttl)
        self.model = ScriptedChatModel(script=script, policy=lambda m, t: say("ok"))
        self.agent = create_agent(
            self.model, tools=self.gateway.tools, checkpointer=InMemorySaver()
        )
        self.config: RunnableConfig = {"configurable": {"thread_id": "t"}}

    def start(self, text: str = "remind me") -> dict[str, Any]:
        self.agent.invoke({"messages": [HumanMessage(text)]}, self.config)
        return self.pending()

    def pending(self) -> dict[str, Any]:
        (interrupt,) = self.agent.get_state(self.config).interrupts
        return interrupt.value

    def resume(self, decision: Any) -> dict[str, Any]:
        return self.agent.invoke(Command(resume=decision), self.config)

    def result(self, call_id: str) -> dict[str, Any]:
        messages = self.agent.get_state(self.config).values["messages"]
        found = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        return json.loads(found[-1].text)


def tamper(token: str) -> str:
    body, signature = token.split(".")
    flipped = "A" if signature[5] != "A" else "B"
    return f"{body}.{signature[:5]}{flipped}{signature[6:]}"


def test_approve_with_token_runs_once() -> None:
    h = Harness([execute(ARGS, "x1")])
    value = h.start()
    assert h.runs == []
    assert "scheduled_jobs (write)" in value["description"]
    assert json.loads(value["description"].split("Arguments:\n")[1].split("\n\nApprove")[0]) == ARGS
    h.resume({"type": "approve", "token": value["approval_token"]})
    assert len(h.runs) == 1
    assert h.result("x1")["status"] == "ok"


def test_bare_token_string_is_an_approval() -> None:
    h = Harness([execute(ARGS, "x1")])
    value = h.start()
    h.resume(value["approval_token"])
    assert len(h.runs) == 1


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        (lambda v: {"type": "approve", "token": tamper(v["approval_token"])}, "tampered"),
        (lambda v: {"type": "approve"}, "missing_token"),
        (lambda v: True, "invalid_decision"),
        (lambda v: {"type": "approve", "token": "appr_forged.sig"}, "tampered"),
        (lambda v: {"type": "approve", "token": "hello"}, "malformed"),
    ],
)
def test_bad_approvals_are_refused_and_nothing_runs(decision: Any, reason: str) -> None:
    h = Harness([execute(ARGS, "x1")])
    value = h.start()
    h.resume(decision(value))
    body = h.result("x1")
    assert body["error"] == "approval_refused" and body["reason"] == reason
    assert body["message"].endswith("Nothing was run.")
    assert "was not run" in body["next_step"]
    assert h.runs == []


def test_expired_token_is_refused() -> None:
    h = Harness([execute(ARGS, "x1")], ttl=60)
    value = h.start()
    h.clock.now += 61
    h.resume({"type": "approve", "token": value["approval_token"]})
    body = h.result("x1")
    assert body["reason"] == "expired" and "expired" in body["message"]
    assert h.runs == []


def test_replayed_token_is_refused_on_a_second_call() -> None:
    h = Harness([execute(ARGS, "x1"), say("done"), execute(ARGS, "x2")])
    first = h.start()
    h.resume({"type": "approve", "token": first["approval_token"]})
    assert len(h.runs) == 1
    second = h.start("once more")
    assert second["approval_token"] != first["approval_token"]
    h.resume({"type": "approve", "token": first["approval_token"]})
    body = h.result("x2")
    assert body["reason"] == "replayed" and "already used" in body["message"]
    assert len(h.runs) == 1


def test_arguments_changed_after_approval_are_refused() -> None:
    h = Harness([execute(ARGS, "x1")])
    value = h.start()
    changed = {**ARGS, "schedule_time": "+1m"}
    h.resume({"type": "approve", "token": value["approval_token"], "args": changed})
    body = h.result("x1")
    assert body["reason"] == "intent_mismatch"
    assert "an edited call needs a new token" in body["message"]
    assert h.runs == []


def test_edit_needs_a_new_token() -> None:
    h = Harness([execute(ARGS, "x1")])
    first = h.start()
    edited = {**ARGS, "schedule_time": "+2h", "priority": "high"}
    h.resume({"type": "edit", "edited_action": {"name": "scheduled_jobs", "args": edited}})
    second = h.pending()  # asked again, for the edited call, with a new token
    assert second["args"] == edited
    assert second["approval_token"] != first["approval_token"]
    assert h.runs == []
    # The old token was for the old arguments: refused.
    h.resume({"type": "approve", "token": first["approval_token"]})
    assert h.result("x1")["reason"] == "intent_mismatch"
    assert h.runs == []


def test_edit_then_approve_with_new_token_runs_the_edit() -> None:
    h = Harness([execute(ARGS, "x1")])
    h.start()
    edited = {**ARGS, "schedule_time": "+2h"}
    h.resume({"type": "edit", "args": edited})
    h.resume({"type": "approve", "token": h.pending()["approval_token"]})
    assert h.runs == [{"title": ARGS["title"], "message": ARGS["message"], "schedule_time": "+2h"}]
    assert h.result("x1")["approval"]["edited"] is True


def test_invalid_edit_is_refused_with_the_field() -> None:
    h = Harness([execute(ARGS, "x1")])
    h.start()
    h.resume({"type": "edit", "args": {**ARGS, "priority": "urgent"}})
    body = h.result("x1")
    assert body["error"] == "invalid_arguments" and body["problems"][0]["field"] == "priority"
    assert h.runs == []


def test_reject_is_reported_and_nothing_runs() -> None:
    h = Harness([execute(ARGS, "x1")])
    h.start()
    h.resume({"type": "reject", "message": "not today"})
    body = h.result("x1")
    assert body["error"] == "rejected_by_user" and "not today" in body["message"]
    assert "Do not call it again unless the user asks" in body["next_step"]
    assert h.runs == []


def test_invalid_arguments_never_reach_a_human() -> None:
    h = Harness([execute({"message": "no title"}, "x1"), say("fixing")])
    h.agent.invoke({"messages": [HumanMessage("remind me")]}, h.config)
    assert h.agent.get_state(h.config).interrupts == ()
    assert h.result("x1")["error"] == "invalid_arguments"


async def test_async_approval_flow() -> None:
    h = Harness([execute(ARGS, "x1")])
    await h.agent.ainvoke({"messages": [HumanMessage("remind me")]}, h.config)
    value = h.pending()
    await h.agent.ainvoke(
        Command(resume={"type": "approve", "token": value["approval_token"]}), h.config
    )
    assert len(h.runs) == 1


def test_gate_pure_steps() -> None:
    clock = FakeClock()
    gate = ApprovalGate(TokenIssuer(SECRET, clock=clock), ttl=10)
    value = gate.request("t", {"a": 1, "b": [1, 2]}, tool_call_id="c")
    token = value["approval_token"]
    assert token.startswith("appr_")
    # Canonical JSON: key order and 1.0 vs 1 do not change the intent.
    receipt, refusal = gate.verify("t", {"b": [1, 2], "a": 1.0}, token)
    assert refusal is None and receipt is not None
    _, refusal = gate.verify("t", {"a": 1, "b": [1, 2]}, token)
    assert refusal is not None and refusal["reason"] == "replayed"
    other = gate.request("t", {"a": 1}, tool_call_id="c")["approval_token"]
    _, refusal = gate.verify("u", {"a": 1}, other)  # another tool, same arguments
    assert refusal is not None and refusal["reason"] == "intent_mismatch"
    with pytest.raises(ValueError, match="ttl must be positive"):
        ApprovalGate(TokenIssuer(SECRET), ttl=0)


def test_approval_middleware_for_bound_write_tools() -> None:
    sent: list[str] = []

    @tool
    def send_invoice(customer: str) -> str:
        """Send an invoice."""
        sent.append(customer)
        return "sent"

    @tool
    def lookup(customer: str) -> str:
        """Look a customer up."""
        return "found"

    send_invoice.metadata = {"risk": "write"}
    assert write_tool_names([send_invoice, lookup]) == ["send_invoice"]
    gate = ApprovalGate(TokenIssuer(SECRET, clock=FakeClock()))
    model = ScriptedChatModel(
        script=[
            calls(
                tool_call("lookup", {"customer": "acme"}, "l1"),
                tool_call("send_invoice", {"customer": "acme"}, "s1"),
            ),
            say("sent"),
        ]
    )
    agent = create_agent(
        model,
        tools=[send_invoice, lookup],
        middleware=[ApprovalMiddleware(gate)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "b"}}
    agent.invoke({"messages": [HumanMessage("bill acme")]}, config)
    (interrupt,) = agent.get_state(config).interrupts
    assert interrupt.value["name"] == "send_invoice" and sent == []
    agent.invoke(Command(resume={"type": "approve", "token": "appr_x.y"}), config)
    assert sent == []  # forged: refused
    messages = agent.get_state(config).values["messages"]
    refusal = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "s1")
    assert refusal.status == "error" and json.loads(refusal.text)["reason"] == "tampered"


@pytest.mark.parametrize(
    ("metadata", "asked"),
    [
        (None, False),  # nobody classified it: code never opens it, a human is not asked
        ({"risk": "read"}, False),
        ({"risk": "write"}, True),
        ({"risk": "write", "requires_approval": False}, False),  # declared write, not asked
        ({"requires_approval": True}, True),
        ({"mutation": True}, True),
        ({"annotations": {"destructiveHint": True}}, True),
        ({"annotations": {"readOnlyHint": False}}, True),
        ({"annotations": {"readOnlyHint": True}}, False),
    ],
)
def test_approval_asks_for_declared_writes_only(
    metadata: dict[str, Any] | None, asked: bool
) -> None:
    @tool
    def act(target: str) -> str:
        """Do something to a target."""
        return "done"

    act.metadata = metadata
    assert asks_approval(act) is asked
    assert write_tool_names([act]) == (["act"] if asked else [])
