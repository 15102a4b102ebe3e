"""The scheduled-jobs scenario's pieces, shared by the scenario, gateway, approval and
hesitation tests: a scheduled_jobs tool that records every real execution, a gateway over it
with approval, the arguments of a deferred reminder, and a stall as models write it (a list of
the tool's parameters and a question instead of the call)."""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping.approval.middleware import ApprovalGate
from attention_scoping.gateway.tools import CatalogEntry, ToolGateway
from attention_scoping.safety.tokens import TokenIssuer
from tests.safety_support import SECRET, FakeClock

__all__ = [
    "ARGS",
    "SECRET",
    "SEED_STALL",
    "FakeClock",
    "make_gateway",
    "make_scheduled_jobs",
    "other_tools",
    "payload",
]

SEED_STALL = (
    "To schedule a deferred notification job, you need to provide the following details: "
    "title, message, schedule_time, folder, notify_ntfy, notify_email… Would you like to "
    "proceed? If so, please provide the necessary parameters."
)


def make_scheduled_jobs(runs: list[dict[str, Any]]) -> BaseTool:
    """A scheduled_jobs tool with a dozen fields that records every real execution."""

    @tool
    def scheduled_jobs(
        title: str,
        message: str,
        schedule_time: str = "+30m",
        folder: str = "reminders",
        notify_ntfy: bool = False,
        notify_email: bool = False,
        recurrence: Literal["none", "daily", "weekly"] = "none",
        priority: Literal["low", "normal", "high"] = "normal",
        tags: list[str] | None = None,
        timezone: str = "UTC",
        link_url: str | None = None,
        assignee: str | None = None,
    ) -> str:
        """Schedule a deferred job that notifies the user later (a reminder).

        Args:
            title: Short title of the job.
            message: Text of the reminder.
            schedule_time: When to fire: an ISO time or a delay such as '+30m'.
            folder: Folder the job is filed in.
            notify_ntfy: Push the reminder through ntfy.
            notify_email: Email the reminder too.
            recurrence: Repeat the job.
            priority: Priority of the job.
            tags: Free tags.
            timezone: Time zone of schedule_time.
            link_url: Related URL, e.g. a pull request.
            assignee: Who should act on the reminder.
        """
        runs.append({"title": title, "message": message, "schedule_time": schedule_time})
        return json.dumps({"job_id": f"job_{len(runs):03d}", "fires": schedule_time})

    return scheduled_jobs


def other_tools() -> list[BaseTool]:
    """Three unrelated tools that share the gateway's catalog with scheduled_jobs: two
    declared reads (`get_weather`, `list_jobs`) and `create_invoice`, which nobody classified
    (so it may write: code never names it, and approval does not ask for it)."""

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny in {city}"

    @tool
    def create_invoice(customer_id: str, amount: float) -> str:
        """Create an invoice for a customer."""
        return "INV-1"

    @tool
    def list_jobs(folder: str = "reminders") -> str:
        """List the scheduled jobs of a folder."""
        return "[]"

    get_weather.metadata = {"risk": "read"}
    list_jobs.metadata = {"risk": "read"}
    return [get_weather, create_invoice, list_jobs]


def make_gateway(runs: list[dict[str, Any]], clock: FakeClock, ttl: float = 600) -> ToolGateway:
    """A gateway over scheduled_jobs (a write tool behind approval) and `other_tools()`."""
    issuer = TokenIssuer(SECRET, clock=clock)
    entry = CatalogEntry.from_tool(
        make_scheduled_jobs(runs),
        risk="write",
        defaults={"schedule_time": "+30m"},
    )
    return ToolGateway([entry, *other_tools()], approval=ApprovalGate(issuer, ttl=ttl))


ARGS = {
    "title": "PR #482 follow-up",
    "message": "Verify approvals, merge, and update the report",
    "schedule_time": "+30m",
    "link_url": "https://github.com/acme/core/pull/482",
}


def payload(message: ToolMessage) -> dict[str, Any]:
    """The JSON body of a tool message."""
    return json.loads(message.text)
