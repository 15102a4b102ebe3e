"""Shared fixtures: small real tools with observable side effects, scope sets over them, and the
safety tests' fake clock and issue tracker."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool

from attention_scoping.scopes import Scope
from tests.safety_support import FakeClock, Tracker
from tests.toolbox_support import TOOL_NAMES, make_toolbox, math_and_text_scopes

NAVIGATION_ONLY: dict[str, Any] = {"selector": None}
"""Scoping options of the tests about navigation by the model alone (`load_context`): no
selection, so only `load_context` (plus always-on tools) while no scope is active."""


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
    return make_toolbox(ledger.ran, TOOL_NAMES[:5])


@pytest.fixture
def scopes(toolbox: dict[str, BaseTool]) -> list[Scope]:
    return math_and_text_scopes(toolbox)


@pytest.fixture
def clock() -> FakeClock:
    """A clock the safety tests move by hand (a file may define its own `clock`)."""
    return FakeClock()


@pytest.fixture
def tracker() -> Tracker:
    """A fresh fake issue tracker for the manifest and two-phase write tests."""
    return Tracker()


@pytest.fixture
def no_model_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model API key in the environment (the eval then sends none to a local server)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
