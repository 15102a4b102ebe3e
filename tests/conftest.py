"""Shared fixtures: small real tools with observable side effects, and scope sets over them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool

from attention_scoping import Scope

NAVIGATION_ONLY: dict[str, Any] = {"preselect": "off", "start": "index"}
"""Scoping options of the tests about navigation-only mode (`load_context` navigation): no
intent pre-selection, and only `load_context` (plus always-on tools) while no scope is active.
Tests of the graph path run the defaults (tests/test_nodes.py)."""


class Ledger:
    """Records which tools actually ran, so tests can prove a refused tool never executed."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def names(self) -> list[str]:
        return [name for name, _ in self.ran]


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def toolbox(ledger: Ledger) -> dict[str, BaseTool]:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ledger.ran.append(("add", {"a": a, "b": b}))
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        ledger.ran.append(("multiply", {"a": a, "b": b}))
        return a * b

    @tool
    def shout(text: str) -> str:
        """Return the text in upper case."""
        ledger.ran.append(("shout", {"text": text}))
        return text.upper()

    @tool
    def reverse(text: str) -> str:
        """Return the text reversed."""
        ledger.ran.append(("reverse", {"text": text}))
        return text[::-1]

    @tool
    def get_knowledge(topic: str) -> str:
        """Look up a fact in the knowledge base."""
        ledger.ran.append(("get_knowledge", {"topic": topic}))
        return f"facts about {topic}"

    return {t.name: t for t in (add, multiply, shout, reverse, get_knowledge)}


@pytest.fixture
def scopes(toolbox: dict[str, BaseTool]) -> list[Scope]:
    return [
        Scope(
            "math",
            "integer arithmetic",
            tools=[toolbox["add"], toolbox["multiply"]],
            prompt="Use add and multiply for arithmetic.",
        ),
        Scope(
            "text",
            "string transformations",
            tools=[toolbox["shout"], toolbox["reverse"]],
            prompt="Use shout and reverse for text.",
        ),
    ]
