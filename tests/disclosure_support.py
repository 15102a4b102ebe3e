"""Shared pieces of the disclosure tests: small real tools that record their runs, the scopes
over them, a scripted call, and one turn of a checkpointed agent."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, tool

from attention_scoping import Scope

THREAD = {"configurable": {"thread_id": "disclosure"}}


def call(name: str, call_id: str, /, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call."""
    return {"name": name, "id": call_id, "arguments": arguments}


def make_tools(ran: list[str]) -> dict[str, BaseTool]:
    """Tools that append their name to `ran` when they really run (`save_note` writes)."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append("add")
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        ran.append("multiply")
        return a * b

    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        ran.append("shout")
        return text.upper() + "!"

    @tool
    def reverse(text: str) -> str:
        """Reverse a text."""
        ran.append("reverse")
        return text[::-1]

    @tool
    def save_note(title: str) -> str:
        """Save a note with a title."""
        ran.append("save_note")
        return f"saved {title}"

    @tool
    def list_notes() -> list[str]:
        """List the saved notes."""
        ran.append("list_notes")
        return ["groceries"]

    @tool
    def convert_km(km: float) -> float:
        """Convert kilometres to miles."""
        ran.append("convert_km")
        return round(km * 0.621, 2)

    save_note.metadata = {"risk": "write"}
    tools = (add, multiply, shout, reverse, save_note, list_notes, convert_km)
    return {t.name: t for t in tools}


def make_scopes(tools: dict[str, BaseTool]) -> list[Scope]:
    """Four scopes over `make_tools`."""
    return [
        Scope("math", "integer arithmetic", tools=[tools["add"], tools["multiply"]], prompt="M."),
        Scope("text", "text transformations", tools=[tools["shout"], tools["reverse"]]),
        Scope("notes", "saving and listing notes", tools=[tools["save_note"], tools["list_notes"]]),
        Scope("units", "unit conversions", tools=[tools["convert_km"]], prompt="Units."),
    ]


def turn(agent: Any, text: str, **state: Any) -> dict[str, Any]:
    """One user turn on the test thread."""
    return dict(agent.invoke({"messages": [("user", text)], **state}, THREAD))
