"""The middlewares' option groups: small constructors, presets, contradictions refused at
construction, and the 0.1 keyword options still accepted with one DeprecationWarning."""

from __future__ import annotations

import inspect
import logging
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

import attention_scoping
from attention_scoping import (
    AttentionScopingMiddleware,
    Grounding,
    HesitationMiddleware,
    Layout,
    Navigation,
    Nudging,
    Promotion,
    Radar,
    Scope,
    ScopeConfigError,
    SummaryPool,
    ToolAttentionMiddleware,
)
from attention_scoping.common.option_groups import DEPRECATED_PREFIX
from attention_scoping.hesitation.node import HesitationNodeMiddleware
from attention_scoping.scoping import options as scoping_options
from attention_scoping.scoping.prompts import DEFAULT_CORE, INDEX_HEADER
from attention_scoping.testing import ScriptedChatModel, say
from tests.hesitation_support import MATH, scoped_agent, sent

CONSTRUCTORS = [
    AttentionScopingMiddleware,
    ToolAttentionMiddleware,
    HesitationMiddleware,
    HesitationNodeMiddleware,
]


def keyword_options(cls: type) -> list[str]:
    params = inspect.signature(cls).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]


def deprecations(record: list[warnings.WarningMessage]) -> list[str]:
    """The deprecation messages of old keyword options (other libraries' are left out)."""
    return [
        str(w.message)
        for w in record
        if issubclass(w.category, DeprecationWarning)
        and str(w.message).startswith(DEPRECATED_PREFIX)
    ]


def build(cls: Any, *args: Any, **options: Any) -> tuple[Any, list[str]]:
    """Construct `cls` and return it with the DeprecationWarnings it emitted."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        made = cls(*args, **options)
    return made, deprecations(record)


# -- small constructors ---------------------------------------------------------------------


@pytest.mark.parametrize("cls", CONSTRUCTORS, ids=lambda c: c.__name__)
def test_constructors_take_at_most_ten_keyword_options(cls: type) -> None:
    names = keyword_options(cls)
    assert 5 <= len(names) <= 10, names


def test_the_defaults_are_the_measured_ones(scopes: list[Scope]) -> None:
    """0.1's defaults, except the layout: compact, chosen by measurement (docs/scoping.md)."""
    scoping, warned = build(AttentionScopingMiddleware, scopes)
    assert warned == []
    assert (scoping.start.preselect, scoping.start.start, scoping.start.top_k) == (
        "every_turn",
        "top",
        5,
    )
    assert (scoping.start._ranker_spec, scoping.on_foreign_tool) == ("auto", "refuse")
    assert (scoping.prompt_layout, scoping.module_delivery) == ("compact", "load_context")
    assert scoping.core_prompt == ""
    assert scoping.layout == scoping_options.LAYOUT_PRESETS["compact"]
    layered, _ = build(AttentionScopingMiddleware, scopes, layout="layered")
    assert (layered.prompt_layout, layered.module_delivery) == ("layered", "system_prompt")
    assert layered.core_prompt == DEFAULT_CORE
    assert layered.index.startswith(INDEX_HEADER)
    assert scoping.navigation == scoping_options.NAVIGATION_PRESETS["preselect"]
    gate, warned = build(ToolAttentionMiddleware, ranker="bm25")
    assert warned == []
    assert (gate.k, gate.intent_turns, gate.sticky_turns, gate.detect_names) == (5, 1, 2, True)
    assert (gate.decide_per, gate.summary_pool, gate.pool_budget_tokens) == ("call", "auto", 2500)
    nudger, warned = build(HesitationMiddleware)
    assert warned == []
    assert (nudger.max_nudges, nudger.threshold, nudger.nudge_role) == (2, 2.0, "user")
    assert (nudger.nudge_writes, nudger.hint_expected) == (False, True)
    assert nudger.expect_tool_call is not None


def test_the_option_groups_are_public_names() -> None:
    for name in ("Navigation", "Layout", "Promotion", "SummaryPool", "Radar", "Nudging"):
        assert name in attention_scoping.__all__
    assert issubclass(ScopeConfigError, ValueError)


# -- scoping: presets and groups ------------------------------------------------------------


def test_the_model_preset_shows_only_load_context_until_the_model_loads_a_scope(
    scopes: list[Scope],
) -> None:
    model = ScriptedChatModel(script=[say("Which context?")])
    scoping = AttentionScopingMiddleware(scopes, navigation="model")
    agent = create_agent(model, middleware=[scoping])
    agent.invoke({"messages": [HumanMessage("multiply 47 and 83")]})
    assert model.recorded[0]["tools"] == ["load_context"]
    assert not scoping.start.needs_ranking


def test_the_stable_layout_keeps_the_system_prompt_across_scopes(scopes: list[Scope]) -> None:
    scoping = AttentionScopingMiddleware(scopes, layout="stable")
    math = scoping.prompt_layers({"active_context": "math"}, "Be brief.").render()
    text = scoping.prompt_layers({"active_context": "text"}, "Be brief.").render()
    assert math == text
    assert scoping.module_delivery == "load_context" and scoping.prompt_layout == "layered"


def test_a_navigation_group_reaches_the_start_set(scopes: list[Scope]) -> None:
    model = ScriptedChatModel(script=[say("ok")])
    navigation = Navigation(preselect="off", start="top", top_k=1, ranker="lexical")
    agent = create_agent(
        model, middleware=[AttentionScopingMiddleware(scopes, navigation=navigation)]
    )
    agent.invoke({"messages": [HumanMessage("shout this text")]})
    assert model.recorded[0]["tools"] == ["load_context", "shout"]


def test_a_compact_layout_keeps_an_explicit_core_prompt(scopes: list[Scope]) -> None:
    scoping = AttentionScopingMiddleware(scopes, layout=Layout("compact", core_prompt="Rules."))
    assert scoping.prompt_layers({}, "Mine.").render() == "Rules.\n\nMine."
    assert scoping.module_delivery == "load_context"


# -- scoping: contradictions and unknown values ---------------------------------------------


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda: Layout("compact", module_delivery="system_prompt"), "module_delivery="),
        (lambda: Layout("compact", index_header="# Scopes"), "index_header="),
        (lambda: Navigation(start="index", top_k=3), "top_k=3"),
        (lambda: Navigation(preselect="off", margin=0.1), "margin=0.1"),
        (lambda: Navigation(preselect="off", start="all", min_score=0.2), "min_score=0.2"),
        (lambda: Navigation(preselect="off", start="index", ranker="dense"), "ranker='dense'"),
        (lambda: Navigation(ranker=lambda q, d: []), "custom ranker needs"),
        (lambda: Navigation(margin=1.5), "margin must be in [0, 1)"),
        (lambda: Navigation(top_k=0), "top_k must be"),
    ],
)
def test_contradicting_options_are_refused_naming_the_value(make: Any, names: str) -> None:
    with pytest.raises(ScopeConfigError) as caught:
        make()
    assert names in str(caught.value)


def test_a_contradiction_names_what_is_valid() -> None:
    with pytest.raises(ScopeConfigError, match=r"valid: top_k with start='top'"):
        Navigation(start="all", top_k=2)


def test_a_custom_ranker_without_preselection_needs_only_min_score(scopes: list[Scope]) -> None:
    def rank(query: str, docs: Any) -> list[tuple[str, float]]:
        return [("reverse", 0.9)] if "text" in query else []

    navigation = Navigation(preselect="off", ranker=rank, min_score=0.5)
    model = ScriptedChatModel(script=[say("ok")])
    agent = create_agent(
        model, middleware=[AttentionScopingMiddleware(scopes, navigation=navigation)]
    )
    agent.invoke({"messages": [HumanMessage("flip this text")]})
    assert model.recorded[0]["tools"] == ["load_context", "reverse"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"navigation": "auto"}, "navigation must be 'preselect', 'model' or a Navigation(...)"),
        ({"layout": "tiny"}, "layout must be 'layered', 'compact', 'stable' or a Layout(...)"),
        ({"navigation": Layout()}, "not Layout("),
    ],
)
def test_an_unknown_preset_names_the_valid_ones(
    scopes: list[Scope], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScopeConfigError) as caught:
        AttentionScopingMiddleware(scopes, **options)
    assert message in str(caught.value)


def test_an_unknown_option_value_names_the_valid_ones() -> None:
    with pytest.raises(ScopeConfigError, match="start must be one of 'index', 'all' or 'top'"):
        Navigation(start="everything")  # type: ignore[arg-type]
    with pytest.raises(ScopeConfigError, match="prompt must be 'layered' or 'compact'"):
        Layout("short")  # type: ignore[arg-type]
    with pytest.raises(ScopeConfigError, match="on_foreign_tool must be 'refuse' or 'switch'"):
        Navigation(on_foreign_tool="maybe")  # type: ignore[arg-type]


# -- the 0.1 keyword options ----------------------------------------------------------------


def test_old_scoping_options_map_into_the_groups_with_one_warning(scopes: list[Scope]) -> None:
    scoping, warned = build(
        AttentionScopingMiddleware, scopes, preselect="off", start="index", prompt_layout="compact"
    )
    assert scoping.navigation == scoping_options.MODEL_NAVIGATION
    assert scoping.layout == scoping_options.COMPACT_LAYOUT
    assert len(warned) == 1
    assert "preselect, start, prompt_layout" in warned[0]
    assert "navigation=Navigation(preselect='off', start='index')" in warned[0]
    assert "layout=Layout(prompt='compact')" in warned[0]


def test_the_warning_points_at_the_callers_line(scopes: list[Scope]) -> None:
    with pytest.warns(DeprecationWarning, match=DEPRECATED_PREFIX) as record:
        AttentionScopingMiddleware(scopes, ranker="lexical")
    assert [w.filename for w in record if DEPRECATED_PREFIX in str(w.message)] == [__file__]


def test_old_options_apply_on_top_of_a_preset(scopes: list[Scope]) -> None:
    scoping, warned = build(AttentionScopingMiddleware, scopes, navigation="model", start="all")
    assert (scoping.start.preselect, scoping.start.start) == ("off", "all")
    assert len(warned) == 1


def test_old_options_are_checked_under_their_old_names(scopes: list[Scope]) -> None:
    with pytest.raises(ScopeConfigError, match="prompt_layout must be 'layered' or 'compact'"):
        AttentionScopingMiddleware(scopes, prompt_layout="short")
    with pytest.raises(ScopeConfigError, match="module_delivery='system_prompt' contradicts"):
        AttentionScopingMiddleware(scopes, prompt_layout="compact", module_delivery="system_prompt")
    with pytest.raises(ScopeConfigError, match="top_k=3 is used only by start='top'"):
        AttentionScopingMiddleware(scopes, start="index", start_top_k=3)


@pytest.mark.parametrize("cls", CONSTRUCTORS, ids=lambda c: c.__name__)
def test_an_option_that_never_existed_is_a_type_error(cls: Any, scopes: list[Scope]) -> None:
    args = (scopes,) if cls is AttentionScopingMiddleware else ()
    with pytest.raises(TypeError, match=r"__init__\(\) got an unexpected keyword argument 'kk'"):
        cls(*args, kk=3)


def test_old_gate_options_map_into_promotion_and_summary_pool() -> None:
    gate, warned = build(
        ToolAttentionMiddleware, ranker="bm25", decide_per="turn", pool_budget_tokens=10
    )
    assert (gate.decide_per, gate.pool_budget_tokens) == ("turn", 10)
    assert gate.promotion == Promotion(decide_per="turn")
    assert len(warned) == 1
    assert "promotion=Promotion(decide_per='turn')" in warned[0]
    assert "summary_pool=SummaryPool(budget_tokens=10)" in warned[0]
    with pytest.raises(ValueError, match="decide_per must be 'call' or 'turn', not 'session'"):
        ToolAttentionMiddleware(ranker="bm25", decide_per="session")


def test_old_hesitation_options_map_into_the_groups() -> None:
    for cls in (HesitationMiddleware, HesitationNodeMiddleware):
        nudger, warned = build(cls, nudge_role="system", expect_tool_call=None, threshold=3.0)
        assert (nudger.nudge_role, nudger.threshold) == ("system", 3.0)
        assert nudger.expect_tool_call is None and not nudger.hint_expected
        assert len(warned) == 1 and "grounding=Grounding(expect_tool_call=None)" in warned[0]


# -- gating and hesitation groups -----------------------------------------------------------


def test_gate_groups_and_presets() -> None:
    gate = ToolAttentionMiddleware(
        ranker="bm25", promotion="per_turn", summary_pool=SummaryPool("auto", budget_tokens=99)
    )
    assert (gate.decide_per, gate.summary_pool, gate.pool_budget_tokens) == ("turn", "auto", 99)
    assert ToolAttentionMiddleware(ranker="bm25", summary_pool="off").summary_pool == "off"
    gate = ToolAttentionMiddleware(ranker="bm25", promotion=Promotion(threshold=0.2))
    assert gate.threshold == 0.2
    with pytest.raises(ValueError, match="budget_tokens=99 is read only by mode='auto'"):
        SummaryPool("scope", budget_tokens=99)
    with pytest.raises(ValueError, match="promotion must be 'per_call', 'per_turn' or a Promo"):
        ToolAttentionMiddleware(ranker="bm25", promotion="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="need intent_turns >= 1"):
        Promotion(intent_turns=0)


def test_hesitation_groups_and_presets() -> None:
    off = HesitationMiddleware(grounding="off")
    assert off.expect_tool_call is None and not off.hint_expected
    check = HesitationMiddleware(grounding="check")
    assert check.expect_tool_call is not None and not check.hint_expected
    custom = HesitationMiddleware(
        radar=Radar(threshold=3.0, ignore_tools=["load_context"]),
        nudging=Nudging(role="system", writes=True),
    )
    assert (custom.threshold, custom.ignore_tools) == (3.0, frozenset({"load_context"}))
    assert (custom.nudge_role, custom.nudge_writes) == ("system", True)
    with pytest.raises(ValueError, match="hint=True needs expect_tool_call"):
        Grounding(expect_tool_call=None, hint=True)
    with pytest.raises(ValueError, match="role must be 'user' or 'system'"):
        Nudging(role="assistant")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="radar must be a Radar"):
        HesitationMiddleware(radar="strict")  # type: ignore[arg-type]


def test_grounding_check_nudges_without_the_hint(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("3901"), say("3901")], grounding="check")
    agent.invoke({"messages": [HumanMessage(MATH)]}, {"configurable": {"thread_id": "t"}})
    hint = "Tools that match the user's request"
    assert not any(hint in m.text for m in sent(model, 0))
    assert len(model.recorded) == 2  # the ungrounded first reply was still nudged


# -- the documented default path logs no WARNING --------------------------------------------


def test_without_the_gate_extra_pre_selection_says_once_at_info_which_ranker_runs(
    scopes: list[Scope], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from attention_scoping.gating import catalog_ranker

    def missing(*_: Any, **__: Any) -> Any:
        raise ImportError("No module named 'onnxruntime'")

    monkeypatch.setattr(catalog_ranker, "CatalogRanker", missing)
    model = ScriptedChatModel(script=[say("ok"), say("ok")])
    agent = create_agent(model, middleware=[AttentionScopingMiddleware(scopes)])
    with caplog.at_level(logging.INFO, logger="attention_scoping"):
        agent.invoke({"messages": [HumanMessage("multiply 47 and 83")]})
        agent.invoke({"messages": [HumanMessage("shout hello")]})
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    said = [r.getMessage() for r in caplog.records if "ranks with" in r.getMessage()]
    assert len(said) == 1
    assert said[0].startswith("scope pre-selection ranks with lexical (fallback)")
    assert "gate" in said[0]


def test_old_layout_keywords_keep_the_layout_they_were_written_for(scopes: list[Scope]) -> None:
    """0.1's layout keywords without `prompt_layout` were written against its layered
    default: they still build a layered layout (with the DeprecationWarning), not an error
    from the compact default."""
    scoping, warned = build(AttentionScopingMiddleware, scopes, index_header="# Tools")
    assert warned and scoping.prompt_layout == "layered"
    assert scoping.index.startswith("# Tools")
    delivered, _ = build(AttentionScopingMiddleware, scopes, module_delivery="system_prompt")
    assert (delivered.prompt_layout, delivered.module_delivery) == ("layered", "system_prompt")
    with pytest.raises(ScopeConfigError, match="index_header"):
        AttentionScopingMiddleware(scopes, layout=Layout(index_header="# Tools"))


@pytest.mark.parametrize("cls", [HesitationMiddleware, HesitationNodeMiddleware])
def test_approval_follows_changes_nothing_and_warns_at_the_callers_line(cls: Any) -> None:
    """`approval_follows` never changed a nudge (the blast-radius rule keeps writes out of
    them): it is deprecated, and a stack that passes it behaves as one that does not."""
    with pytest.warns(DeprecationWarning, match="approval_follows does nothing") as record:
        given = cls(approval_follows=True)
    assert [w.filename for w in record if "approval_follows" in str(w.message)] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = cls()
    assert not hasattr(given, "approval_follows")
    keys = ("max_nudges", "nudge_writes", "hint_expected", "radar", "nudging", "grounding")
    assert [getattr(given, k) for k in keys] == [getattr(plain, k) for k in keys]
