"""The billed-cost session benchmark: sessions, what each strategy shows the model call by
call (byte-identical prefixes where the strategy promises them), the command and its JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.cli import main
from attention_scoping_lab.cost import PRICE_MODELS, Request, memo_count, stable_json
from attention_scoping_lab.simulate.billing import build_strategies
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.session_strategies import (
    GatewaySignatures,
    SessionStrategy,
)
from attention_scoping_lab.simulate.sessions import build_sessions, tool_output

SESSIONS = build_sessions(0, 3, 6)


@pytest.fixture(scope="module")
def strategies() -> dict[str, SessionStrategy]:
    counter = get_counter()
    specs = build_catalog(0, counter)
    return {s.name: s for s in build_strategies(specs, counter, "bm25", None)}


def _play(strategy: SessionStrategy) -> list[tuple[Conversation, list[int]]]:
    """Play the sessions keeping every request; per call, the user turn it belongs to."""
    out = []
    count = memo_count(get_counter().count)
    for session in SESSIONS:
        conv = Conversation(list(PRICE_MODELS.values()), count, keep_requests=True)
        strategy.play(session, conv)
        out.append((conv, [c.turn for c in conv.calls]))
    return out


def _kinds(request: Request, kind: str) -> list[str]:
    return [b.text for b in request.blocks if b.kind == kind]


def _appends(before: Request, after: Request) -> bool:
    """`after` starts with every block of `before`, byte for byte."""
    n = len(before.blocks)
    return len(after.blocks) >= n and after.prefix_hash(n - 1) == before.prefix_hash(n - 1)


def test_sessions_have_exact_turns_and_grow_by_prefix() -> None:
    five, three = build_sessions(1, 4, 5), build_sessions(1, 4, 3)
    assert all(len(s.turns) == 5 for s in five)
    assert [s.turns[:3] for s in five] == [s.turns for s in three]
    assert build_sessions(1, 4, 5) == five and build_sessions(2, 4, 5) != five
    assert tool_output("fs_read_file", "filesystem", "k") == tool_output(
        "fs_read_file", "filesystem", "k"
    )
    with pytest.raises(ValueError, match="at least one"):
        build_sessions(0, 0, 5)


def test_eager_and_stable_strategies_only_append(strategies: dict[str, SessionStrategy]) -> None:
    """Eager and the deferral strategies never change the tools array or the system prompt:
    every call's request is the previous one plus new messages."""
    stable = ("eager", "gate_deferral", "lazy_deferral", "scoping_deferral", "gateway")
    for name in (*stable, "gateway_with_pool", "gateway_signatures", "native_tool_search"):
        for conv, _ in _play(strategies[name]):
            for before, after in zip(conv.requests, conv.requests[1:], strict=False):
                assert _appends(before, after), name


def test_scoping_stable_prompt_keeps_the_system_prompt(
    strategies: dict[str, SessionStrategy],
) -> None:
    """Mode b: the scope's module arrives in the load_context result; the system prompt is
    byte-identical on every call, while plain scoping swaps its module."""
    for conv, _ in _play(strategies["scoping_stable_prompt"]):
        assert len({tuple(_kinds(r, "system")) for r in conv.requests}) == 1
        modules = [m for m in conv.rendered if "prompt_module" in str(m.get("content"))]
        assert modules, "the module travels in the load_context result"
    swapped = {
        tuple(_kinds(r, "system"))
        for conv, _ in _play(strategies["scoping"])
        for r in conv.requests
    }
    assert len(swapped) > 1


def test_scoping_sends_the_active_scope_tools(strategies: dict[str, SessionStrategy]) -> None:
    """After load_context, the calls carry load_context and the scope's tools (and only them)."""
    strategy = strategies["scoping"]
    for conv, _ in _play(strategy):
        for request in conv.requests:
            names = [json.loads(t)["function"]["name"] for t in _kinds(request, "tool")]
            assert names[0] == "load_context"
            assert len({strategy.server_of[n] for n in names[1:]}) <= 1  # type: ignore[attr-defined]
        assert max(len(_kinds(r, "tool")) for r in conv.requests) > 1


def test_turn_gate_keeps_the_prefix_within_a_turn(strategies: dict[str, SessionStrategy]) -> None:
    """Mode a: within a user turn, every call appends to the previous one unless the model
    was refused a tool (then the tools array grows once)."""
    for conv, turns in _play(strategies["turn_gate"]):
        for i in range(1, len(conv.requests)):
            if turns[i] != turns[i - 1]:
                continue
            before, after = conv.requests[i - 1], conv.requests[i]
            refused = '"is_error":true' in after.text()[len(before.text()) :]
            assert refused or _appends(before, after)


def test_per_call_gate_changes_tools_within_turns(strategies: dict[str, SessionStrategy]) -> None:
    changed = 0
    for conv, turns in _play(strategies["per_call_gate"]):
        for i in range(1, len(conv.requests)):
            same_turn = turns[i] == turns[i - 1]
            tools = (_kinds(conv.requests[i - 1], "tool"), _kinds(conv.requests[i], "tool"))
            changed += same_turn and tools[0] != tools[1]
    assert changed > 0


def test_gate_deferral_loads_each_tool_once(strategies: dict[str, SessionStrategy]) -> None:
    """Deferred tools reach the model as definitions appended to the conversation, once."""
    strategy = strategies["gate_deferral"]
    for conv, _ in _play(strategy):
        loaded = [
            json.loads(m["content"])
            for m in conv.rendered
            if m["role"] == "tool" and m["content"].startswith("[")
        ]
        names = [t["function"]["name"] for batch in loaded for t in batch]
        assert len(names) == len(set(names))
        assert all(not _kinds(r, "tool") for r in conv.requests)
    assert strategy.exposure["missed"] == 0


def _gateway_calls(conv: Conversation) -> list[tuple[str, dict[str, Any]]]:
    """(gateway tool, arguments) of every call the model made, in order."""
    out = []
    for message in conv.rendered:
        for call in message.get("tool_calls") or ():
            out.append((call["name"], json.loads(call["arguments"])))
    return out


def test_signature_pool_runs_tools_at_once(strategies: dict[str, SessionStrategy]) -> None:
    """The signature pool: a tool whose line shows every required argument is run through
    execute_tool without a schema fetch; only a tool with a `{…}` argument is fetched first;
    the system prompt is the gateway's own `prompt(pool=True)`."""
    strategy = strategies["gateway_signatures"]
    assert isinstance(strategy, GatewaySignatures)
    for conv, _ in _play(strategy):
        assert strategy.gateway.prompt(pool=True) in _kinds(conv.requests[0], "system")[0]
        made = _gateway_calls(conv)
        fetched = [n for tool, a in made if tool == "get_tool_schema" for n in a["tool_names"]]
        run = [str(args["tool_name"]) for tool, args in made if tool == "execute_tool"]
        assert run
        assert all(not strategy.specs[n].signature_complete for n in fetched)
        assert all(n in fetched for n in run if not strategy.specs[n].signature_complete)
    assert strategy.exposure["missed"] == 0


def test_misfired_direct_calls_are_refused_with_the_schema() -> None:
    """With every direct call misfiring, each new tool's first call is refused by the gateway's
    own check (the payload carries the schema) and the model calls again."""
    counter = get_counter()
    specs = build_catalog(0, counter)
    base = {s.name: s for s in build_strategies(specs, counter, "bm25", None)}
    strategy = GatewaySignatures(specs, base["gateway_signatures"].gateway, misfire=1.0)  # type: ignore[attr-defined]
    refusals = [
        json.loads(m["content"])
        for conv, _ in _play(strategy)
        for m in conv.rendered
        if m["role"] == "tool" and '"invalid_arguments"' in m["content"]
    ]
    assert refusals and all("parameters" in r for r in refusals)
    assert strategy.counters["direct calls refused"] == len(refusals)
    assert strategy.exposure["recovered"] >= len(refusals)


def test_turn_gaps_past_the_ttl_expire_the_5_minute_cache(
    strategies: dict[str, SessionStrategy],
) -> None:
    """The conversation's clock reaches the caches: with 400 s between user turns, a turn's
    first call finds the 5-minute entries gone but the 1-hour ones live; within a turn (4 s
    apart) both read; with no caching nothing is ever read."""
    conv = Conversation(
        list(PRICE_MODELS.values()), memo_count(get_counter().count), turn_gap_s=400
    )
    strategies["eager"].play(SESSIONS[0], conv)
    opening = [c for c in conv.calls if c.first_of_turn and c.turn > 0]
    later = [c for c in conv.calls if not c.first_of_turn]
    assert opening and later
    assert all(c.costs["anthropic"].cache_read_tokens == 0 for c in opening)
    assert all(c.costs["anthropic-1h"].cache_read_tokens > 0 for c in opening)
    assert all(c.costs["anthropic"].cache_read_tokens > 0 for c in later)
    assert all(c.costs["none"].billed == c.costs["none"].input_tokens for c in conv.calls)


def test_command_writes_the_documented_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, png = tmp_path / "cost.json", tmp_path / "cost.png"
    args: Sequence[str] = [
        "simulate",
        "--sessions",
        "2",
        "--turns",
        "3",
        "--price",
        "anthropic",
        "--ranker",
        "bm25",
        "--json",
        str(path),
        "--plot",
        str(png),
        "--quiet",
    ]
    assert main(list(args)) == 0
    out = capsys.readouterr().out
    assert "Billed input per task" in out
    doc = json.loads(path.read_text())
    assert (doc["price_model"], doc["n_sessions"], doc["turns"]) == ("anthropic", 2, 3)
    assert {"eager", "per_call_gate", "recommended"} <= set(doc["strategies"])
    for figures in doc["strategies"].values():
        assert {
            "billed_input_per_task",
            "input_tokens_per_task",
            "cache_hit_ratio",
            "exposure",
        } <= set(figures)
        assert len(figures["cumulative_billed_by_turn"]) == 3
        by_model = figures["billed_by_price_model"]
        assert by_model["none"] == figures["input_tokens_per_task"]  # no caching: 1x
        assert by_model["anthropic"] == figures["billed_input_per_task"]
        assert figures["cumulative_billed_by_turn"][-1] == pytest.approx(
            figures["billed_input_per_task"], abs=0.1 + 1e-6
        )  # both rounded to 0.1: they may differ by one step (plus float error)
    eager = doc["strategies"]["eager"]
    assert eager["billed_input_per_task"] < eager["input_tokens_per_task"]  # caching pays
    assert doc["strategies"]["recommended"]["strategy"] in doc["strategies"]
    assert png.stat().st_size > 0


def test_command_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for args, expected in (
        (["--sessions", "1", "--price", "cheap"], "valid: anthropic, anthropic-1h, openai, none"),
        (["--sessions", "1", "--cache-write", "-2"], "cache_write must be a number >= 0"),
        (["--turns", "5"], "--turns need --sessions N"),
        (["--sessions", "1", "--export", "x"], "--export belongs to the task mode"),
        (["--sessions", "1", "--misfire", "1.5"], "--misfire must be a share between 0 and 1"),
        (["--misfire", "0.2"], "--misfire need --sessions N"),
        (["--strategies", "eager"], "--strategies need --sessions N"),
        (["--sessions", "1", "--strategies", " , "], "--strategies needs at least one"),
        (
            ["--sessions", "1", "--turns", "1", "--ranker", "bm25", "--strategies", "nope"],
            "unknown strategy 'nope'; valid: conversation_only, eager,",
        ),
    ):
        assert main(["simulate", *args, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert expected in " ".join(err.split()) and "Traceback" not in err


def test_stable_json_of_a_session_message() -> None:
    assert stable_json({"b": 1, "a": [2, {"d": 3, "c": 4}]}) == '{"a":[2,{"c":4,"d":3}],"b":1}'
