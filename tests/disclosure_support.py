"""Shared pieces of the disclosure tests: small real tools that record their runs (the reads
declared), the scopes over them, a scripted call, the scripted session the end-to-end tests
share, one turn of a checkpointed agent, and `ChatAnthropic` pointed at a local server."""

from __future__ import annotations

from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.tools import BaseTool, tool
from pydantic import SecretStr

from attention_scoping.scopes import Scope

THREAD = {"configurable": {"thread_id": "disclosure"}}


def anthropic_chat(base_url: str, **options: Any) -> ChatAnthropic:
    """`ChatAnthropic` on a local server (the scripted stub or the eval's bridge), no retries;
    `options` override the model name, key and the rest."""
    settings: dict[str, Any] = {
        "model": "claude-stub",
        "api_key": SecretStr("k"),
        "max_retries": 0,
        **options,
    }
    return ChatAnthropic(base_url=base_url, **settings)


def call(name: str, call_id: str, /, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call."""
    return {"name": name, "id": call_id, "arguments": arguments}


Turn = tuple[str, dict[str, Any], list[dict[str, Any]]]
"""One user turn of a scripted session: the user's text, state to set, the model's replies."""


def replies(*calls: dict[str, Any], answer: str) -> list[dict[str, Any]]:
    """A turn's model replies: each call in a reply of its own, then the answer."""
    return [{"tool_calls": [c]} for c in calls] + [{"content": answer}]


def script_of(session: list[Turn]) -> list[Any]:
    """The stub's script for a whole session: every turn's replies in order."""
    return [reply for _, _, turn_replies in session for reply in turn_replies]


OPENING: list[Turn] = [
    ("Please add 2 and 3.", {}, replies(
        call("load_context", "t1a", name="math"), call("add", "t1b", a=2, b=3), answer="5"
    )),
    ("Now multiply 4 by 5.", {}, replies(call("multiply", "t2a", a=4, b=5), answer="20")),
    ("Shout hello.", {}, replies(
        call("load_context", "t3a", name="text"), call("shout", "t3b", text="hello"),
        answer="HELLO!",
    )),
]  # fmt: skip
"""Three turns every end-to-end session starts with: the model loads math, then text."""

NOTES_AND_UNITS: list[Turn] = [
    ("Reverse abc.", {}, replies(call("reverse", "t4a", text="abc"), answer="cba")),
    ("Save a note called groceries.", {}, replies(
        call("load_context", "t5a", name="notes"), call("save_note", "t5b", title="groceries"),
        answer="saved",
    )),
    ("List my notes.", {}, replies(call("list_notes", "t6a"), answer="groceries")),
    ("Convert 5 km to miles.", {"active_context": "units"}, replies(
        call("convert_km", "t7a", km=5), answer="3.1 miles"
    )),
    ("Add 1 and 1 again.", {}, replies(
        call("load_context", "t8a", name="math"), call("add", "t8b", a=1, b=1), answer="2"
    )),
]  # fmt: skip
"""Turns four to eight after `OPENING` in the Anthropic and allowed_tools sessions: notes by
the model, units by the application, math again."""

THANKS: Turn = ("Thanks.", {}, replies(answer="You are welcome."))
"""The closing turn: no tool call."""


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

    for read in (add, multiply, shout, reverse, list_notes, convert_km):
        read.metadata = {"risk": "read"}
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
