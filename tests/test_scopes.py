"""Scope configuration: both forms accepted; mistakes rejected naming the bad and valid values."""

from __future__ import annotations

import pytest
from langchain_core.tools import BaseTool, tool

from attention_scoping.errors import ScopeConfigError, UnknownScopeError
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import Scope, ScopeCatalog


def test_plain_tool_scopes_dict_is_accepted(toolbox: dict[str, BaseTool]) -> None:
    catalog = ScopeCatalog(
        {"math": {"add", "multiply"}, "text": {"shout"}}, tools=list(toolbox.values())
    )
    assert catalog.names == ("math", "text")
    assert set(catalog.visible("math")) == {"load_context", "add", "multiply"}
    assert catalog.visible(None) == ("load_context",)
    assert catalog.scopes_offering("shout") == ("text",)
    assert catalog.checked


def test_scope_objects_carry_their_tools(scopes: list[Scope]) -> None:
    catalog = ScopeCatalog(scopes)
    assert set(catalog.tool_objects) == {"add", "multiply", "shout", "reverse"}
    assert catalog.scopes["math"].tools == ("add", "multiply")
    assert catalog.checked  # every scope tool is an object: nothing left to check later


def test_unknown_tool_names_bad_value_and_valid_ones(toolbox: dict[str, BaseTool]) -> None:
    with pytest.raises(ScopeConfigError) as err:
        ScopeCatalog({"math": {"add", "multiplY"}}, tools=list(toolbox.values()))
    text = str(err.value)
    assert "'multiplY'" in text and "'math'" in text
    assert "did you mean 'multiply'" in text
    assert "'add'" in text and "'shout'" in text  # the registered tools are listed


def test_unknown_default_scope(scopes: list[Scope]) -> None:
    with pytest.raises(ScopeConfigError, match=r"'maths'.*did you mean 'math'.*'math', 'text'"):
        ScopeCatalog(scopes, default_scope="maths")


def test_duplicate_scope_names(scopes: list[Scope]) -> None:
    with pytest.raises(ScopeConfigError, match="duplicate scope name 'math'"):
        ScopeCatalog([*scopes, Scope("math", tools=["add"])])


def test_same_tool_twice_in_one_scope() -> None:
    with pytest.raises(ScopeConfigError, match="lists tool 'add' twice"):
        Scope("math", tools=["add", "add"])


def test_two_different_tools_with_one_name(toolbox: dict[str, BaseTool]) -> None:
    @tool("add")
    def other_add(x: int) -> int:
        """Another add."""
        return x

    with pytest.raises(ScopeConfigError, match="two different tools are named 'add'"):
        ScopeCatalog([Scope("a", tools=[toolbox["add"]]), Scope("b", tools=[other_add])])


@pytest.mark.parametrize("name", ["", "has space", "-dash", "x" * 65, 3])
def test_invalid_scope_names(name: object) -> None:
    with pytest.raises(ScopeConfigError, match="invalid scope name"):
        Scope(name)  # type: ignore[arg-type]


def test_tools_given_as_a_string_is_rejected() -> None:
    with pytest.raises(ScopeConfigError, match="not the string"):
        Scope("math", tools="add")


def test_unknown_always_on_tool(toolbox: dict[str, BaseTool]) -> None:
    with pytest.raises(ScopeConfigError, match=r"always-on tool 'get_knowlege'.*get_knowledge"):
        ScopeCatalog({"math": {"add"}}, always_on=["get_knowlege"], tools=list(toolbox.values()))


def test_same_tool_in_two_scopes_is_allowed(toolbox: dict[str, BaseTool]) -> None:
    catalog = ScopeCatalog({"a": {"add"}, "b": {"add", "shout"}}, tools=list(toolbox.values()))
    assert catalog.scopes_offering("add") == ("a", "b")


def test_resolve_active_context(scopes: list[Scope]) -> None:
    catalog = ScopeCatalog(scopes, default_scope="text")
    assert catalog.resolve(None) == "text"
    assert catalog.resolve("math") == "math"
    with pytest.raises(UnknownScopeError, match=r"'mat'.*did you mean 'math'"):
        catalog.resolve("mat")


def test_names_only_scopes_are_validated_at_first_model_call() -> None:
    # Without tool objects nothing can be checked at construction; the first call checks.
    mw = AttentionScopingMiddleware({"math": {"add", "nonexistent"}})
    assert not mw.catalog.checked
    with pytest.raises(ScopeConfigError, match="unknown tool 'nonexistent'"):
        mw.catalog.check_tools(["add"])


def test_middleware_rejects_bad_options(scopes: list[Scope]) -> None:
    with pytest.raises(TypeError, match="unscoped_tools"):
        AttentionScopingMiddleware(scopes, unscoped_tools="show")  # type: ignore[call-arg]
    with pytest.raises(ScopeConfigError, match="not beside it"):
        AttentionScopingMiddleware(ScopeCatalog(scopes), default_scope="math")
    with pytest.raises(ScopeConfigError, match="selector must have a select"):
        AttentionScopingMiddleware(scopes, selector="lexical")  # type: ignore[arg-type]
    with pytest.raises(ScopeConfigError, match="disclosure must have a disclose"):
        AttentionScopingMiddleware(scopes, disclosure="anthropic")  # type: ignore[arg-type]


def test_scope_fields_are_checked() -> None:
    """A scope given a non-string description or prompt, or no tools, says which."""
    with pytest.raises(ScopeConfigError, match="description must be a string"):
        Scope("x", None)  # type: ignore[arg-type]
    with pytest.raises(ScopeConfigError, match="prompt must be a string"):
        Scope("x", "d", [], prompt=3)  # type: ignore[arg-type]
    with pytest.raises(ScopeConfigError, match="declares 'b' a read"):
        Scope("x", "d", ["a"], reads=["b"])
