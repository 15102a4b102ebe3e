"""Where the bill goes (`attention_scoping_lab.simulate.breakdown`): the parts add up to the bill
the benchmark reports, and each part is what its tokens are."""

from __future__ import annotations

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.cost import PRICE_MODELS, memo_count
from attention_scoping_lab.simulate.breakdown import HOW, PARTS, breakdown
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.native_strategies import NativeScoping
from attention_scoping_lab.simulate.session_strategies import (
    ConversationOnly,
    Eager,
    SessionStrategy,
)
from attention_scoping_lab.simulate.sessions import build_sessions

SESSIONS = build_sessions(0, 2, 4)
COUNT = memo_count(get_counter().count)
SPECS = build_catalog(0, get_counter())


def _billed(strategy: SessionStrategy, price: str) -> float:
    total = 0.0
    for session in SESSIONS:
        conv = Conversation([PRICE_MODELS[price]], COUNT)
        strategy.play(session, conv)
        total += sum(c.costs[price].billed for c in conv.calls)
    return total / len(SESSIONS)


@pytest.mark.parametrize("price", ["anthropic", "openai"])
def test_the_parts_add_up_to_the_bill(price: str) -> None:
    for strategy in (Eager(SPECS), NativeScoping(SPECS, mode="whole")):
        found = breakdown(strategy, SESSIONS, price, COUNT)
        assert found["total"] == pytest.approx(_billed(strategy, price), rel=1e-9)
        assert sum(found["by_how"][h] for h in HOW) == pytest.approx(found["total"])
        assert set(found["by_part"]) == set(PARTS)


def test_each_part_is_what_its_tokens_are() -> None:
    floor = breakdown(ConversationOnly(SPECS), SESSIONS, "anthropic", COUNT)
    eager = breakdown(Eager(SPECS), SESSIONS, "anthropic", COUNT)
    native = breakdown(NativeScoping(SPECS, mode="whole"), SESSIONS, "anthropic", COUNT)
    assert floor["by_part"]["tools"] == 0 and floor["by_part"]["definitions"] == 0
    assert eager["by_part"]["tools"] > 0.8 * eager["total"]
    assert eager["by_part"]["definitions"] == 0 and eager["disclosure_call_requests"] == 0
    # the native scope pays for what it disclosed, in load_context results
    assert native["by_part"]["definitions"] > native["by_part"]["tools"] > 0
    assert native["by_part"]["disclosure calls"] > 0 and native["disclosure_call_requests"] > 0
    assert native["by_how"]["write"] > 0 and native["by_how"]["read"] > 0
