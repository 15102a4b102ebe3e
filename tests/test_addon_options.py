"""The add-ons' option groups: small typed groups and presets, contradictions refused at
construction naming the valid values."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from attention_scoping.gating import Promotion, SummaryPool, ToolAttentionMiddleware
from attention_scoping.hesitation import Grounding, HesitationMiddleware, Nudging, Radar
from attention_scoping.scopes import Scope
from attention_scoping.testing import say
from tests.hesitation_support import MATH, scoped_agent, sent


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
    with pytest.raises(
        ValueError, match="promotion must be a Promotion or one of 'per_call', 'per_turn'"
    ):
        ToolAttentionMiddleware(ranker="bm25", promotion="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="intent_turns must be an integer >= 1, not 0"):
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
    with pytest.raises(TypeError, match="radar must be a Radar"):
        HesitationMiddleware(radar="strict")  # type: ignore[arg-type]


def test_grounding_check_nudges_without_the_hint(scopes: list[Scope]) -> None:
    agent, model = scoped_agent(scopes, [say("3901"), say("3901")], grounding="check")
    agent.invoke({"messages": [HumanMessage(MATH)]}, {"configurable": {"thread_id": "t"}})
    hint = "Tools that match the user's request"
    assert not any(hint in m.text for m in sent(model, 0))
    assert len(model.recorded) == 2  # the ungrounded first reply was still nudged
