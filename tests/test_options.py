"""The core middleware's options: few and flat, defaults that say what they are, and every
bad value an error at construction naming the valid ones."""

from __future__ import annotations

import inspect
import logging

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

import attention_scoping
from attention_scoping.errors import AttentionScopingError, ScopeConfigError
from attention_scoping.middleware import AttentionScopingMiddleware, Rewrite
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import CATALOGS_KEPT, LexicalSelector
from attention_scoping.testing import ScriptedChatModel, say
from tests.toolbox_support import make_toolbox


def keyword_options(cls: type) -> list[str]:
    params = inspect.signature(cls).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]


def test_the_middleware_takes_at_most_eight_keyword_options() -> None:
    names = keyword_options(AttentionScopingMiddleware)
    assert len(names) <= 8, names
    assert names == ["always_on", "default_scope", "selector", "layout", "disclosure", "name"]


def test_the_defaults(scopes: list[Scope]) -> None:
    """Compact layout, the lexical selector at (0.25, 0.1), the rewrite disclosure."""
    scoping = AttentionScopingMiddleware(scopes)
    assert scoping.layout == "compact"
    assert isinstance(scoping.selector, LexicalSelector)
    assert (scoping.selector.min_score, scoping.selector.margin) == (0.25, 0.1)
    assert isinstance(scoping.disclosure, Rewrite)
    assert scoping.catalog.default_scope is None
    assert scoping.name == "AttentionScopingMiddleware"


def test_the_root_exports_the_core_only() -> None:
    names = attention_scoping.__all__
    assert len(names) <= 30
    for name in names:
        module = type(attention_scoping).__getattribute__(attention_scoping, "_EXPORTS")[name]
        assert "." not in module  # a top-level core module
        assert getattr(attention_scoping, name) is not None
    with pytest.raises(AttributeError, match="HesitationMiddleware"):
        attention_scoping.HesitationMiddleware  # noqa: B018 - add-ons live in subpackages


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"layout": "short"}, r"layout='short' is not valid.*'compact', 'layered', 'stable'"),
        ({"selector": "lexical"}, "selector must have a select"),
        ({"disclosure": "native"}, "disclosure must have a disclose"),
        ({"default_scope": "maths"}, r"unknown default_scope 'maths' \(did you mean 'math'"),
    ],
)
def test_a_bad_value_names_the_valid_ones(
    scopes: list[Scope], options: dict[str, object], message: str
) -> None:
    with pytest.raises(ScopeConfigError, match=message) as err:
        AttentionScopingMiddleware(scopes, **options)  # type: ignore[arg-type]
    assert isinstance(err.value, AttentionScopingError)


@pytest.mark.parametrize(("min_score", "margin"), [(float("nan"), 0.1), (0.2, -0.1), (1.5, 0.1)])
def test_a_selector_calibration_outside_zero_to_one_is_refused(
    min_score: float, margin: float
) -> None:
    with pytest.raises(ScopeConfigError, match="must be a number in \\[0, 1\\]"):
        LexicalSelector(min_score=min_score, margin=margin)


def test_a_name_nobody_registered_fails_at_the_first_model_call(scopes: list[Scope]) -> None:
    """Names are checked against the agent's tools once they are known."""
    scoping = AttentionScopingMiddleware(scopes, always_on=["nope"])
    agent = create_agent(ScriptedChatModel(script=[say("hi")]), middleware=[scoping])
    with pytest.raises(ScopeConfigError, match="always-on tool 'nope' is not registered"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_an_option_that_does_not_exist_is_a_type_error(scopes: list[Scope]) -> None:
    for old in ("navigation", "prompt_layout", "unscoped_tools", "on_foreign_tool", "ranker"):
        with pytest.raises(TypeError, match=old):
            AttentionScopingMiddleware(scopes, **{old: None})  # type: ignore[arg-type]


def test_construction_names_the_unclassified_tools_once(
    scopes: list[Scope], caplog: pytest.LogCaptureFixture
) -> None:
    """One INFO line names the scoped tools nobody declared a read or a write."""
    save_note = make_toolbox([], ("save_note",))["save_note"]  # unclassified
    notes = Scope("notes", "notes", [save_note])
    with caplog.at_level(logging.INFO, logger="attention_scoping"):
        AttentionScopingMiddleware([*scopes, notes])
    lines = [r.getMessage() for r in caplog.records if "nobody declared a read" in r.getMessage()]
    assert len(lines) == 1 and "save_note" in lines[0] and "add" not in lines[0]


def test_the_default_path_logs_no_warning(
    scopes: list[Scope], caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(script=[say("4")])
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes)])
    with caplog.at_level(logging.WARNING):
        agent.invoke({"messages": [HumanMessage("add 2 and 2")]})
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_the_shared_default_selector_keeps_a_bounded_number_of_catalogs() -> None:
    """Middleware built in a loop share the default selector: it remembers the words of the
    last few catalogs only, and still selects for each."""
    selector = LexicalSelector()
    for _ in range(3 * CATALOGS_KEPT):
        catalog = ScopeCatalog([Scope("math", "arithmetic sums", ["add"])])
        assert selector.select("arithmetic sums please", catalog).scope == "math"
    assert len(selector._documents) == CATALOGS_KEPT
