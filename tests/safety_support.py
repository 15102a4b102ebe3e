"""Shared pieces of the safety tests: a fake clock, a test key, and a small issue tracker
with observable side effects exposed through a `repo` manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attention_scoping.safety import (
    Capability,
    CapabilityManifest,
    IntentGuard,
    IntentJournal,
    IntentRecord,
    MemoryIntentJournal,
    MemoryTokenStore,
    PreflightError,
    Reconciliation,
    SqliteIntentJournal,
    SqliteTokenStore,
    TokenIssuer,
)

SECRET = "test-only-key:9f3Kq2LmX7vR4tWz8YbN1cJ6hPdG0sAe"
"""A key that passes the strength checks (tests only)."""


class FakeClock:
    """A clock the test moves by hand: no sleeping, no flakiness."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def backend_guard(kind: str, tmp_path: Path, clock: FakeClock, **options: Any) -> IntentGuard:
    """An `IntentGuard` whose token store and journal live in memory (`kind="memory"`) or in
    one SQLite file under `tmp_path` (`"sqlite"`), on `clock`."""
    if kind == "memory":
        issuer = TokenIssuer(SECRET, store=MemoryTokenStore(), clock=clock)
        journal: IntentJournal = MemoryIntentJournal()
    else:
        issuer = TokenIssuer(SECRET, store=SqliteTokenStore(tmp_path / "s.db"), clock=clock)
        journal = SqliteIntentJournal(tmp_path / "s.db")
    return IntentGuard(issuer, journal, **options)


class Tracker:
    """An issue tracker whose every change is recorded, so tests can count real mutations."""

    def __init__(self) -> None:
        self.issues: dict[int, dict[str, Any]] = {
            1: {"title": "Login fails", "labels": [], "comments": []},
            2: {"title": "Slow search", "labels": ["perf"], "comments": []},
        }
        self.mutations: list[tuple[str, dict[str, Any]]] = []
        self.reads: list[int] = []
        self.timeout_next = False
        """When set, the next mutation is applied and then raises TimeoutError (lost reply)."""

    def get_issue(self, issue: int) -> dict[str, Any]:
        self.reads.append(issue)
        return {"issue": issue, **self.issues[issue]}

    def _apply(self, kind: str, args: dict[str, Any]) -> None:
        self.mutations.append((kind, args))
        if self.timeout_next:
            self.timeout_next = False
            raise TimeoutError("tracker did not answer within 10 s")

    def add_label(self, issue: int, label: str) -> dict[str, Any]:
        self.issues[issue]["labels"].append(label)
        self._apply("add_label", {"issue": issue, "label": label})
        return {"issue": issue, "labels": list(self.issues[issue]["labels"])}

    def comment(self, issue: int, body: str) -> dict[str, Any]:
        self.issues[issue]["comments"].append(body)
        self._apply("comment", {"issue": issue, "body": body})
        return {"issue": issue, "comment_index": len(self.issues[issue]["comments"]) - 1}

    def preview_label(self, issue: int, label: str) -> dict[str, Any]:
        if issue not in self.issues:
            raise PreflightError(f"issue {issue} does not exist", field="issue")
        before = self.issues[issue]["labels"]
        if label in before:
            raise PreflightError(f"issue {issue} already has label {label!r}", field="label")
        return {"issue": issue, "labels_before": list(before), "labels_after": [*before, label]}

    def preview_comment(self, issue: int, body: str) -> dict[str, Any]:
        if issue not in self.issues:
            raise PreflightError(f"issue {issue} does not exist", field="issue")
        return {
            "issue": issue,
            "will_post": body,
            "existing_comments": len(self.issues[issue]["comments"]),
        }

    def find_comment(self, record: IntentRecord) -> Reconciliation:
        payload = record.intent.payload
        found = payload["body"] in self.issues[payload["issue"]]["comments"]
        return Reconciliation(applied=found, result={"found": found}, note="looked for the comment")


ISSUE_SCHEMA = {
    "type": "object",
    "properties": {"issue": {"type": "integer", "minimum": 1}},
    "required": ["issue"],
    "additionalProperties": False,
}
LABEL_SCHEMA = {
    "type": "object",
    "properties": {
        "issue": {"type": "integer", "minimum": 1},
        "label": {"type": "string", "enum": ["bug", "perf", "docs"]},
    },
    "required": ["issue", "label"],
    "additionalProperties": False,
}
COMMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "issue": {"type": "integer", "minimum": 1},
        "body": {"type": "string", "minLength": 1, "maxLength": 2000},
    },
    "required": ["issue", "body"],
    "additionalProperties": False,
}


def repo_manifest(tracker: Tracker, *, reconcile: bool = True) -> CapabilityManifest:
    """The `repo` namespace: one read tool, two write tools."""
    return CapabilityManifest(
        "repo",
        [
            Capability("get_issue", "Read one issue.", ISSUE_SCHEMA, tracker.get_issue),
            Capability(
                "add_label",
                "Add a label to an issue.",
                LABEL_SCHEMA,
                tracker.add_label,
                write=True,
                target="issue",
                preflight=tracker.preview_label,
                affected=lambda args, result: [f"issue/{args['issue']}"],
            ),
            Capability(
                "comment",
                "Post a comment on an issue.",
                COMMENT_SCHEMA,
                tracker.comment,
                write=True,
                target="issue",
                preflight=tracker.preview_comment,
                reconcile=tracker.find_comment if reconcile else None,
                affected=lambda args, result: [f"issue/{args['issue']}/comment"],
            ),
        ],
        description="issues of the acme/web repository",
    )


def deploy_manifest(log: list[str]) -> CapabilityManifest:
    """A second namespace the worker must never reach."""

    def release(version: str) -> str:
        log.append(f"release {version}")
        return "released"

    return CapabilityManifest(
        "deploy",
        [
            Capability(
                "release",
                "Release a version to production.",
                {"type": "object", "properties": {"version": {"type": "string"}}},
                release,
                write=True,
            )
        ],
    )


def make_guard(clock: FakeClock, **kwargs: Any) -> IntentGuard:
    """A guard with in-memory stores and the fake clock."""
    issuer = TokenIssuer(SECRET, store=MemoryTokenStore(), clock=clock)
    return IntentGuard(issuer, MemoryIntentJournal(), **kwargs)
