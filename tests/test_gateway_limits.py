"""Gateway limits: deep or huge JSON in a model's arguments or a tool's result is a structured
payload, never a `RecursionError` (or any exception) that ends the run."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from attention_scoping.common.errors import render_payload
from attention_scoping.common.limits import PREVIEW_CHARS, json_result, load_json_text, measure
from attention_scoping.gateway import JsonLimits, ToolGateway
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import FakeClock, make_gateway

DEPTH = 100_000


def deep_dict(depth: int = DEPTH) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


def deep_text(depth: int = DEPTH) -> str:
    return "[" * depth + "]" * depth


def no_rank(query: str, specs: Any) -> list[tuple[str, float]]:
    return []


@pytest.fixture
def ran() -> list[Any]:
    return []


@pytest.fixture
def gateway(ran: list[Any]) -> ToolGateway:
    @tool
    def store(x: Any = None) -> str:
        """Store a value."""
        ran.append(x)
        return "stored"

    @tool
    def deep_json(n: int) -> str:
        """Return JSON text nested n levels."""
        return deep_text(n)

    @tool
    def deep_object(n: int) -> dict[str, Any]:
        """Return a dict nested n levels."""
        return deep_dict(n)

    @tool
    def long_text(n: int) -> str:
        """Return n characters of text."""
        return "x" * n

    return ToolGateway([store, deep_json, deep_object, long_text], ranker=no_rank)


def assert_refused(body: dict[str, Any], rule: str, ran: list[Any]) -> None:
    assert body["error"] == "invalid_arguments", body
    assert body["problems"][0]["rule"] == rule
    assert "too large" in body["problems"][0]["message"]
    assert body["next_step"].startswith('Call execute_tool(tool_name="store"')
    assert ran == []
    render_payload(body)  # the payload itself serialises


def test_deeply_nested_argument_object_is_refused(gateway: ToolGateway, ran: list[Any]) -> None:
    assert_refused(gateway.execute("store", {"x": deep_dict()}), "maxDepth", ran)


def test_deeply_nested_argument_text_is_refused(gateway: ToolGateway, ran: list[Any]) -> None:
    body = gateway.execute("store", '{"x": ' + deep_text() + "}")
    assert_refused(body, "maxDepth", ran)


async def test_deep_arguments_refused_on_the_async_path(
    gateway: ToolGateway, ran: list[Any]
) -> None:
    assert_refused(await gateway.aexecute("store", {"x": deep_dict()}), "maxDepth", ran)


def test_huge_numbers_and_wide_values_are_refused(gateway: ToolGateway, ran: list[Any]) -> None:
    assert_refused(gateway.execute("store", {"x": 10**5000}), "maxDigits", ran)
    assert_refused(gateway.execute("store", {"x": list(range(2_000_000))}), "maxSize", ran)
    assert_refused(gateway.execute("store", {"x": "y" * 2_000_000}), "maxSize", ran)


def test_limits_are_configurable_and_inclusive(ran: list[Any]) -> None:
    @tool
    def store(x: Any = None) -> str:
        """Store a value."""
        ran.append(x)
        return "stored"

    gateway = ToolGateway([store], ranker=no_rank, argument_limits=JsonLimits(max_depth=3))
    assert gateway.execute("store", {"x": {"y": {}}})["status"] == "ok"  # 3 levels
    assert_refused(gateway.execute("store", {"x": {"y": {"z": {}}}}), "maxDepth", ran[1:])
    with pytest.raises(ValueError, match="max_depth must be at least 1"):
        JsonLimits(max_depth=0)


@pytest.mark.parametrize(
    ("tool_name", "n", "preview"),
    [("deep_json", DEPTH, True), ("deep_object", DEPTH, False), ("long_text", 3_000_000, True)],
)
def test_oversized_results_are_reported_not_raised(
    gateway: ToolGateway, tool_name: str, n: int, preview: bool
) -> None:
    body = gateway.execute(tool_name, {"n": n})
    assert body["error"] == "result_too_large" and body["ran"] is True
    assert body["rule"] in ("maxDepth", "maxSize")
    assert f"Do not call {tool_name} again" in body["next_step"]
    assert ("preview" in body) is preview
    if preview:
        assert len(body["preview"]) == PREVIEW_CHARS
    assert len(render_payload(body)) < 10_000


def test_results_within_limits_pass_through(gateway: ToolGateway) -> None:
    assert gateway.execute("deep_json", {"n": 3})["result"] == [[[]]]
    assert gateway.execute("deep_object", {"n": 2})["result"] == {"a": {"a": {}}}
    assert gateway.execute("long_text", {"n": 5})["result"] == "xxxxx"


def test_malformed_names_are_structured(gateway: ToolGateway) -> None:
    body = gateway.execute(["store"], {})  # type: ignore[arg-type]
    assert body["error"] == "unknown_tool" and body["tool"] == "list"
    body = gateway.execute("s" * 100_000, {})
    assert body["error"] == "unknown_tool" and len(render_payload(body)) < 1_000
    names: list[Any] = [json.loads(deep_text(500)), "x" * 100_000, *[f"t{i}" for i in range(500)]]
    body = gateway.schema(names)
    assert body["disclosed"] == [] and len(body["not_found"]) == 20
    assert body["not_found"][0] == "<list>"
    assert len(render_payload(body)) < 10_000
    assert [d["name"] for d in gateway.schema("store")["disclosed"]] == ["store"]


def test_long_values_are_clipped_in_problems() -> None:
    @tool
    def short(code: Annotated[str, Field(max_length=5)]) -> str:
        """Take a short code."""
        return code

    body = ToolGateway([short], ranker=no_rank).execute("short", {"code": "z" * 500_000})
    assert body["error"] == "invalid_arguments" and body["problems"][0]["rule"] == "maxLength"
    assert len(render_payload(body)) < 2_000


def test_write_tool_with_deep_arguments_is_refused_before_approval() -> None:
    gateway = make_gateway([], FakeClock())
    args = {"title": "t", "message": deep_text(), "link_url": deep_dict()}
    body = gateway.execute("scheduled_jobs", args)  # no interrupt: refused before approval
    assert body["error"] == "invalid_arguments"
    assert body["problems"][0]["rule"] == "maxDepth"


def tool_bodies(gateway: ToolGateway, *steps: tuple[str, Any]) -> list[dict[str, Any]]:
    script = [
        calls(tool_call("execute_tool", {"tool_name": name, "arguments": args}, f"c{i}"))
        for i, (name, args) in enumerate(steps)
    ]
    model = ScriptedChatModel(script=[*script, say("done")])
    agent = create_agent(model, tools=gateway.tools)
    result = agent.invoke({"messages": [HumanMessage("go")]})
    return [json.loads(m.text) for m in result["messages"] if isinstance(m, ToolMessage)]


def test_agent_run_survives_deep_json_both_ways(gateway: ToolGateway, ran: list[Any]) -> None:
    bodies = tool_bodies(
        gateway,
        ("store", '{"x": ' + deep_text() + "}"),
        ("deep_json", {"n": DEPTH}),
        ("store", {"x": 1}),
    )
    assert [b.get("error") for b in bodies] == ["invalid_arguments", "result_too_large", None]
    assert bodies[2]["status"] == "ok" and ran == [1]


def test_measure_walks_without_recursion() -> None:
    limits = JsonLimits()
    assert measure(deep_dict(), limits) is not None
    assert measure({"a": [1, 2.5, None, True, "s"]}, limits) is None
    value, exceeded = load_json_text(deep_text(), limits)
    assert value is None and exceeded is not None and exceeded.rule == "maxDepth"
    with pytest.raises(ValueError):
        load_json_text("not json", limits)


def test_json_result_converts_models_and_objects() -> None:
    limits = JsonLimits()

    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    class Point(BaseModel):
        x: int

    assert json_result('{"a": 1}', limits) == ({"a": 1}, None, None)
    assert json_result("plain", limits) == ("plain", None, None)
    assert json_result(Point(x=1), limits) == ({"x": 1}, None, None)
    assert json_result(Opaque(), limits) == ("opaque", None, None)
    text, exceeded, _ = json_result({"when": Opaque()}, limits)
    assert exceeded is None and isinstance(text, str) and text.startswith("{'when': <")


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON-like value: any type, sometimes very deep, wide, long or odd."""
    roll = rng.random()
    if depth > 3 and roll < 0.5:
        return rng.choice([None, True, 1.5, -(10 ** rng.randint(1, 6000)), "é\ud800", ""])
    if roll < 0.05:
        return json.loads(deep_text(rng.choice([63, 64, 65, 900])))
    if roll < 0.08:
        return deep_dict(rng.choice([10, 100, 5_000]))
    if roll < 0.10:
        return "w" * rng.choice([10, 1_000_001])
    if roll < 0.4:
        return {f"k{i}": random_json(rng, depth + 1) for i in range(rng.randint(0, 4))}
    if roll < 0.6:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return rng.choice([0, 2**70, float("inf"), "text", "{", "[1,", "null", False])


def test_random_calls_always_answer_with_a_payload(gateway: ToolGateway, ran: list[Any]) -> None:
    rng = random.Random(20261130)
    names: list[Any] = ["store", "stor", "deep_json", "", None, 7, ["store"], "x" * 10_000]
    outcomes: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for _ in range(300):
        name = "store" if rng.random() < 0.7 else rng.choice(names)
        arguments = random_json(rng)
        if rng.random() < 0.6:
            arguments = {"x": arguments}
        if rng.random() < 0.2:
            try:
                arguments = json.dumps(arguments)
            except (ValueError, RecursionError):
                arguments = deep_text(rng.choice([10, DEPTH]))
        body = gateway.execute(name, arguments)
        assert list(body)[-1] == "next_step", body
        assert len(render_payload(body)) < 1_100_000
        outcomes[body.get("error") or body["status"]] += 1
        if body.get("error") == "invalid_arguments":
            rules.update(p["rule"] for p in body["problems"])
    assert set(outcomes) <= {"ok", "unknown_tool", "invalid_arguments", "tool_failed"}
    assert outcomes["ok"] == len(ran) > 20
    assert {"maxDepth", "maxSize", "maxDigits", "type"} <= set(rules)
