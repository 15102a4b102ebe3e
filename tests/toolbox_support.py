"""Small real tools with an observable side effect: each records `(name, arguments)` in a
list when it really runs, so a test can prove that a refused tool never executed. All but
`save_note` are declared reads (`metadata={"risk": "read"}`); `save_note` is unclassified, so
it may write."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, tool

from attention_scoping.scopes import Scope

Ran = list[tuple[str, dict[str, Any]]]

TOOL_NAMES = ("add", "multiply", "shout", "reverse", "get_knowledge", "save_note")


def make_toolbox(ran: Ran, names: tuple[str, ...] = TOOL_NAMES) -> dict[str, BaseTool]:
    """The tools called `names`, by name, each appending its call to `ran`."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append(("add", {"a": a, "b": b}))
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        ran.append(("multiply", {"a": a, "b": b}))
        return a * b

    @tool
    def shout(text: str) -> str:
        """Return the text in upper case."""
        ran.append(("shout", {"text": text}))
        return text.upper()

    @tool
    def reverse(text: str) -> str:
        """Return the text reversed."""
        ran.append(("reverse", {"text": text}))
        return text[::-1]

    @tool
    def get_knowledge(topic: str) -> str:
        """Look up a fact in the knowledge base."""
        ran.append(("get_knowledge", {"topic": topic}))
        return f"facts about {topic}"

    @tool
    def save_note(title: str, body: str) -> dict[str, Any]:
        """Save a note and return its record."""
        ran.append(("save_note", {"title": title, "body": body}))
        return {"saved": True, "title": title, "chars": len(body)}

    every = (add, multiply, shout, reverse, get_knowledge, save_note)
    for read in (add, multiply, shout, reverse, get_knowledge):
        read.metadata = {"risk": "read"}  # declared reads; save_note may write (undeclared)
    return {t.name: t for t in every if t.name in names}


def math_and_text_scopes(tools: dict[str, BaseTool]) -> list[Scope]:
    """Two scopes over the toolbox: `math` (add, multiply) and `text` (shout, reverse)."""
    return [
        Scope(
            "math",
            "integer arithmetic",
            tools=[tools["add"], tools["multiply"]],
            prompt="Use add and multiply for arithmetic.",
        ),
        Scope(
            "text",
            "string transformations",
            tools=[tools["shout"], tools["reverse"]],
            prompt="Use shout and reverse for text.",
        ),
    ]
