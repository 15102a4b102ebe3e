"""Safe mutation end to end: a coordinator delegates, a manifest-bound worker writes in two phases.

The coordinator agent posts tasks to a task ledger and reads back receipts only (status,
SHA-256 of the worker's output, affected resource ids): never a worker's transcript. Each task
is claimed by a worker sub-agent bound to the `repo` capability manifest; its writes go through
the two-phase path (preview + confirmation code, then one execution). The run shows three
cases: a plain write, a write whose reply is lost (a transport timeout, settled by
reconciliation, not retried), and a duplicate of a change already made (refused).

Run it offline (scripted models stand in for the LLMs, and say so):

    python examples/safe_mutation.py                 # temp files, removed afterwards
    python examples/safe_mutation.py --data-dir out  # keep the SQLite ledger and safety store

To use real models, call `build_system(workdir, coordinator_model=..., worker_model=...)` with
any LangChain chat models; the scripted ones are only the default.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping.ledger import Coordinator, Lease, SqliteLedger, Worker, WorkResult
from attention_scoping.safety import (
    Capability,
    CapabilityManifest,
    IntentGuard,
    IntentRecord,
    PreflightError,
    Reconciliation,
    SqliteIntentJournal,
    SqliteTokenStore,
    TokenIssuer,
    create_manifest_agent,
)
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

ACCOUNT = "acme"
DEMO_SECRET = "demo-only-key: never use in production 7Hq2xZ9kP4mW"
"""The example's signing key when $ATTENTION_SCOPING_SECRET is unset (demo only)."""

TASKS = (
    "Add the label 'bug' to issue 1.",
    "Comment on issue 2: 'Reproduced on staging; fix in progress.'",
    "Comment on issue 2: 'Reproduced on staging; fix in progress.'",
)
"""What the coordinator delegates; the third repeats the second (a duplicate to refuse)."""


# -- the service the worker acts on ---------------------------------------------------------


class IssueTracker:
    """An in-memory issue tracker standing in for a remote API (with a lossy network)."""

    def __init__(self) -> None:
        self.issues: dict[int, dict[str, Any]] = {
            1: {"title": "Login button does nothing", "labels": [], "comments": []},
            2: {"title": "Search is slow on staging", "labels": ["perf"], "comments": []},
        }
        self.writes: list[str] = []
        self.lose_reply_on_comment = True
        """The first comment is applied but its reply is lost: the client sees a timeout."""

    def get_issue(self, issue: int) -> dict[str, Any]:
        if issue not in self.issues:
            msg = f"issue {issue} does not exist"
            raise LookupError(msg)
        return {"issue": issue, **self.issues[issue]}

    def add_label(self, issue: int, label: str) -> dict[str, Any]:
        self.issues[issue]["labels"].append(label)
        self.writes.append(f"label issue {issue} {label!r}")
        return {"issue": issue, "labels": list(self.issues[issue]["labels"])}

    def comment(self, issue: int, body: str) -> dict[str, Any]:
        self.issues[issue]["comments"].append(body)
        self.writes.append(f"comment on issue {issue}")
        if self.lose_reply_on_comment:
            self.lose_reply_on_comment = False
            msg = "tracker API did not answer within 10 s"
            raise TimeoutError(msg)
        return {"issue": issue, "comment": len(self.issues[issue]["comments"])}

    # dry runs and reconciliation

    def preview_label(self, issue: int, label: str) -> dict[str, Any]:
        if issue not in self.issues:
            msg = f"issue {issue} does not exist"
            raise PreflightError(msg, field="issue")
        labels = self.issues[issue]["labels"]
        if label in labels:
            msg = f"issue {issue} already has the label {label!r}"
            raise PreflightError(msg, field="label")
        return {"issue": issue, "labels_before": list(labels), "labels_after": [*labels, label]}

    def preview_comment(self, issue: int, body: str) -> dict[str, Any]:
        if issue not in self.issues:
            msg = f"issue {issue} does not exist"
            raise PreflightError(msg, field="issue")
        return {
            "issue": issue,
            "posts": body,
            "comments_before": len(self.issues[issue]["comments"]),
        }

    def find_comment(self, record: IntentRecord) -> Reconciliation:
        """After a timeout: look for the comment instead of posting it again."""
        payload = record.intent.payload
        comments = self.issues[payload["issue"]]["comments"]
        found = payload["body"] in comments
        return Reconciliation(
            applied=found,
            result={"issue": payload["issue"], "comment": comments.index(payload["body"]) + 1}
            if found
            else None,
            affected_ids=(f"issue/{payload['issue']}",) if found else (),
            note="found the comment on the tracker" if found else "comment not found",
        )


ISSUE = {"type": "integer", "minimum": 1, "description": "Issue number."}


def _issue_write(
    name: str, description: str, field: str, schema: dict[str, Any], run: Any, **options: Any
) -> Capability:
    """A capability that writes to one issue: its arguments are the issue and one `field`, and
    the issue is what it affects (`options`: its preflight and reconcile steps)."""
    arguments = {
        "type": "object",
        "properties": {"issue": ISSUE, field: schema},
        "required": ["issue", field],
        "additionalProperties": False,
    }
    return Capability(
        name,
        description,
        arguments,
        run,
        write=True,
        target="issue",
        affected=lambda args, result: [f"issue/{args['issue']}"],
        **options,
    )


def repo_manifest(tracker: IssueTracker) -> CapabilityManifest:
    """The worker's whole world: read an issue, label it, comment on it."""
    return CapabilityManifest(
        "repo",
        [
            Capability(
                "get_issue",
                "Read one issue: title, labels, comments.",
                {"type": "object", "properties": {"issue": ISSUE}, "required": ["issue"]},
                tracker.get_issue,
            ),
            _issue_write(
                "add_label",
                "Add a label to an issue.",
                "label",
                {"type": "string", "enum": ["bug", "perf", "docs", "triaged"]},
                tracker.add_label,
                preflight=tracker.preview_label,
            ),
            _issue_write(
                "comment",
                "Post a comment on an issue.",
                "body",
                {"type": "string", "minLength": 1, "maxLength": 5000},
                tracker.comment,
                preflight=tracker.preview_comment,
                reconcile=tracker.find_comment,
            ),
        ],
        description="issues of the acme/web repository",
    )


# -- scripted stand-ins for the two LLMs ----------------------------------------------------


def _last_tool_body(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            try:
                body = json.loads(str(message.content))
            except json.JSONDecodeError:
                return {"text": message.content}
            return body if isinstance(body, dict) else {"result": body}
    return {}


def _plan(instruction: str) -> tuple[str, dict[str, Any]]:
    """The write a task asks for (what a real model would read from the instruction)."""
    if m := re.search(r"label '(\w+)' to issue (\d+)", instruction):
        return "repo__add_label", {"issue": int(m[2]), "label": m[1]}
    if m := re.search(r"Comment on issue (\d+): '(.+)'", instruction):
        return "repo__comment", {"issue": int(m[1]), "body": m[2]}
    msg = f"the scripted worker cannot plan {instruction!r}"
    raise ValueError(msg)


def worker_policy(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """The scripted worker: read the issue, preview the write, confirm it, report."""
    instruction = next(m.text for m in messages if isinstance(m, HumanMessage))
    name, args = _plan(instruction)
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    if not tool_messages:
        return calls(tool_call("repo__get_issue", {"issue": args["issue"]}))
    body = _last_tool_body(messages)
    if tool_messages[-1].name == "repo__get_issue":
        return calls(tool_call(name, args))
    if body.get("status") == "confirmation_required":
        return calls(tool_call(name, {**args, "confirmation_code": body["confirmation_code"]}))
    if body.get("status") == "executed":
        return say(f"Done: {name} on issue {args['issue']} ({body['intent_sha256'][:12]}).")
    return say(f"Not done: {body.get('error')}: {body.get('message')}")


def coordinator_policy(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """The scripted coordinator: post the tasks, wait for receipts, summarize them."""
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    if not tool_messages:
        return calls(tool_call("post_tasks", {"instructions": list(TASKS)}))
    if tool_messages[-1].name == "post_tasks":
        ids = json.loads(str(tool_messages[-1].content))["task_ids"]
        return calls(tool_call("await_receipts", {"task_ids": ids}))
    receipts = json.loads(str(tool_messages[-1].content))["receipts"]
    lines = [
        f"- task {r['task_id'][:8]}: {r['status']}"
        + (f", changed {', '.join(r['affected_ids'])}" if r["affected_ids"] else "")
        + (f" ({r['error']})" if r["error"] else "")
        for r in receipts
    ]
    return say("All three tasks are settled:\n" + "\n".join(lines))


# -- the system -----------------------------------------------------------------------------


@dataclass
class SafeMutationSystem:
    """Everything the example wires together, kept for inspection (and the tests)."""

    tracker: IssueTracker
    ledger: SqliteLedger
    guard: IntentGuard
    manifest: CapabilityManifest
    coordinator_agent: Any
    worker_agent: Any
    worker: Worker
    transcripts: dict[str, list[BaseMessage]] = field(default_factory=dict)
    """Worker transcripts by task id: kept by the worker side, never sent to the coordinator."""
    log: Callable[[str], None] = print


class WorkNotDone(RuntimeError):
    """The worker ended without executing its write; the reason goes into the receipt."""


def _executed_intents(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        artifact = getattr(m, "artifact", None)
        intent = artifact.get("intent") if isinstance(artifact, dict) else None
        if isinstance(m, ToolMessage) and intent and intent["status"] == "succeeded":
            out.append(intent)
    return out


def _handle(system: SafeMutationSystem) -> Callable[[Lease], WorkResult]:
    """Run the worker sub-agent on one leased task; its receipt data, or WorkNotDone."""

    def handle(lease: Lease) -> WorkResult:
        instruction = str(lease.payload["instruction"])
        system.log(f"  worker {lease.worker} ▸ task {lease.task_id[:8]} (attempt {lease.attempt})")
        result = system.worker_agent.invoke(
            {"messages": [HumanMessage(instruction)]},
            context={"account": ACCOUNT},
            config={"configurable": {"thread_id": f"{lease.task_id}/{lease.attempt}"}},
        )
        messages: list[BaseMessage] = result["messages"]
        system.transcripts[lease.task_id] = messages
        for m in messages:
            if isinstance(m, AIMessage):
                for c in m.tool_calls:
                    shown = ", ".join(f"{k}={v!r}" for k, v in c["args"].items())
                    system.log(f"      → {c['name']}({shown})")
            elif isinstance(m, ToolMessage):
                body = _last_tool_body([m])
                status = body.get("status") or body.get("error") or "ok"
                if body.get("reconciled"):
                    status += " (the reply timed out; reconciliation found it applied)"
                if "confirmation_code" in body:
                    status += f", code {body['confirmation_code']}"
                system.log(f"      ← {status}")
        executed = _executed_intents(messages)
        final = messages[-1].text
        if not executed:
            raise WorkNotDone(_last_tool_body(messages).get("error") or final)
        affected = [i for intent in executed for i in intent["affected_ids"]]
        return WorkResult(final, affected_ids=affected)

    return handle


def coordinator_tools(system: SafeMutationSystem) -> list[BaseTool]:
    """The coordinator's two tools: post tasks, and wait for receipts (nothing else)."""
    desk = Coordinator(system.ledger)

    @tool
    def post_tasks(instructions: list[str]) -> str:
        """Post one task per instruction for the workers; returns the task ids in order."""
        task_ids = []
        for instruction in instructions:
            task_ids.append(desk.post({"instruction": instruction}))
            system.log(f"  coordinator ▸ posted task {task_ids[-1][:8]}: {instruction}")
        return json.dumps({"task_ids": task_ids})

    @tool
    def await_receipts(task_ids: list[str]) -> str:
        """Wait until the tasks are finished; returns their receipts."""
        # Single-process demo: the worker runs here until the tasks are done. In production
        # workers are separate processes polling the same ledger, and this only waits.
        handle = _handle(system)
        while not all(desk.receipt(t) for t in task_ids):
            if system.worker.run_one(handle) is None:
                break
        receipts = desk.wait(task_ids, timeout=0)
        return json.dumps({"receipts": [r.as_dict() for r in receipts]})

    return [post_tasks, await_receipts]


def build_system(
    workdir: Path,
    *,
    coordinator_model: BaseChatModel | None = None,
    worker_model: BaseChatModel | None = None,
    secret: str | None = None,
    log: Callable[[str], None] = print,
) -> SafeMutationSystem:
    """Wire the ledger, the safety store, the worker sub-agent and the coordinator agent.

    Both SQLite files live in `workdir`; any process opening them shares the same ledger,
    the same single-use codes and the same intent journal.
    """
    tracker = IssueTracker()
    manifest = repo_manifest(tracker)
    safety_db = workdir / "safety.db"
    issuer = TokenIssuer(
        secret or _env_secret() or DEMO_SECRET, store=SqliteTokenStore(safety_db), ttl=300
    )
    guard = IntentGuard(issuer, SqliteIntentJournal(safety_db))
    ledger = SqliteLedger(workdir / "ledger.db")
    worker_agent = create_manifest_agent(
        worker_model or ScriptedChatModel(policy=worker_policy, label="scripted worker"),
        [manifest],
        guard=guard,
        system_prompt="You are a repository worker. Do exactly the task, then report briefly.",
    )
    system = SafeMutationSystem(
        tracker=tracker,
        ledger=ledger,
        guard=guard,
        manifest=manifest,
        coordinator_agent=None,
        worker_agent=worker_agent,
        worker=Worker(ledger, "worker-1", lease_seconds=60, retry_errors=False),
        log=log,
    )
    system.coordinator_agent = create_agent(
        coordinator_model
        or ScriptedChatModel(policy=coordinator_policy, label="scripted coordinator"),
        tools=coordinator_tools(system),
        system_prompt=(
            "You coordinate repository work. Post one task per change with post_tasks, then "
            "call await_receipts and report the receipts. You never do the work yourself."
        ),
    )
    return system


def _env_secret() -> str | None:
    return os.environ.get("ATTENTION_SCOPING_SECRET") or None


def run(system: SafeMutationSystem, request: str) -> dict[str, Any]:
    """One coordinator turn; returns the coordinator's final state."""
    system.log(f"user: {request}")
    result: dict[str, Any] = system.coordinator_agent.invoke({"messages": [HumanMessage(request)]})
    system.log(f"coordinator: {result['messages'][-1].text}")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the offline demo; exit code 0 when every expected outcome happened."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="keep the SQLite files here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the transcript below already shows each step
    print("(offline: scripted models stand in for the coordinator and the worker)")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.data_dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        system = build_system(workdir)
        run(system, "Triage issues 1 and 2: label 1 as a bug, tell 2's reporter we reproduced it.")
        print("tracker writes:", system.tracker.writes)
        receipts = system.ledger.receipts()
        system.ledger.close()
    ok = sorted(r.status.value for r in receipts) == ["completed", "completed", "failed"]
    return 0 if ok and len(system.tracker.writes) == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
