"""MCP listings are bounded like results (issue 35, 3): a tool's description, its input schema's
size and its depth are capped, with a mark the model reads, one log line naming the server and
the tool, and `audit` naming the oversized tools. The server lists a 2,000,000-character
description, a 2.5 MB schema and a schema 60 objects deep."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage

from attention_scoping.mcp import McpConnectMiddleware, McpServers, McpTool
from attention_scoping.mcp.bounds import (
    DESCRIPTION_MAX_CHARS,
    SCHEMA_MAX_CHARS,
    SCHEMA_MAX_DEPTH,
    bound_record,
)
from attention_scoping.mcp.cache import ToolListCache
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.mcp_servers.oversized_server import tools as listed_tools
from tests.mcp_support import python_server

BIG = python_server("oversized_server.py")
CUT = ("huge_description", "huge_schema", "deep_schema")


def depth(value: Any) -> int:
    """Nesting levels of objects and arrays in `value` (the top one is 1)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def within_caps(description: str, schema: dict[str, Any]) -> bool:
    """Whether a tool's description and schema are within the caps."""
    size = len(json.dumps(schema, ensure_ascii=False))
    return (
        len(description) <= DESCRIPTION_MAX_CHARS
        and size <= SCHEMA_MAX_CHARS
        and (depth(schema) <= SCHEMA_MAX_DEPTH)
    )


def schema_of(tool: McpTool) -> dict[str, Any]:
    """The registered tool's input schema (an MCP tool's is always a dict)."""
    assert isinstance(tool.args_schema, dict)
    return tool.args_schema


@pytest.fixture
def big(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.WARNING, logger="attention_scoping.mcp")
    servers = McpServers({"mcpServers": {"big": BIG}}, cache_dir=str(tmp_path / "cache"))
    yield servers
    servers.close()


def test_an_oversized_listing_is_registered_and_cached_within_the_caps(
    big: McpServers, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    tools = {t.remote_name: t for t in big.tools}
    assert sorted(tools) == ["deep_schema", "huge_description", "huge_schema", "lookup"]
    for tool in tools.values():
        assert isinstance(tool.args_schema, dict) and within_caps(
            tool.description, tool.args_schema
        )
    # the cuts are marked where the model reads them
    long = tools["huge_description"]
    total = len(listed_tools()[0]["description"])
    assert long.description.startswith("Look things up. All work and no play.")
    assert f"[... cut: {total:,} characters, showing the first " in long.description
    assert long.args_schema == listed_tools()[0]["inputSchema"]  # its schema was fine
    schemas = {name: schema_of(tool) for name, tool in tools.items()}
    for name in ("huge_schema", "deep_schema"):
        assert "[input schema cut: it " in tools[name].description
        assert schemas[name]["description"].startswith("[input schema cut: it ")
    wide = schemas["huge_schema"]
    assert "field_0" in wide["properties"] and wide["required"] == ["field_0"]
    assert 0 < len(wide["properties"]) < 20_000
    deep = schemas["deep_schema"]
    assert deep["properties"]["name"] == {"type": "string"} and deep["required"] == ["name"]
    assert deep["properties"]["tree"] == {
        "type": "object",
        "description": "[nested schema not shown]",
    }
    assert tools["lookup"].description == "Look a word up."  # an ordinary tool is untouched
    # one log line per oversized tool, naming the server and the tool
    logged = caplog.get_records("setup") + caplog.records  # listed when the fixture was made
    lines = [r.getMessage() for r in logged if "oversized" in r.getMessage()]
    assert len(lines) == 3
    for name in CUT:
        assert sum(f"'big' lists tool '{name}'" in line for line in lines) == 1
    # the cache holds what was registered, never the server's 4.5 MB
    cache = ToolListCache(tmp_path / "cache")
    path = cache.path(big.config.servers["big"])
    assert path.stat().st_size < 2 * DESCRIPTION_MAX_CHARS + 2 * SCHEMA_MAX_CHARS
    cached = cache.get(big.config.servers["big"])
    assert cached is not None and sorted(cached.oversized) == sorted(CUT)
    for record in cached.tools:
        assert within_caps(record["description"], record["inputSchema"])


def test_the_first_turn_over_an_oversized_listing_sends_only_bounded_tools(
    big: McpServers,
) -> None:
    """Pre-selection and the model read the bounded tools; a cut schema's tool stays
    callable (the server checks the arguments)."""
    model = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "big"})),
            calls(tool_call("huge_schema", {"field_0": "a", "field_19999": "b"})),
            say("stored"),
        ]
    )
    middleware: list[Any] = [
        AttentionScopingMiddleware(big.scopes, selector=None),
        McpConnectMiddleware(big),
    ]
    agent: Any = create_agent(model, tools=big.tools, middleware=middleware)
    out = agent.invoke({"messages": [("user", "Store a record with field_0 = a")]})
    assert model.recorded[1]["tools"][1:] == [
        "deep_schema",
        "huge_description",
        "huge_schema",
        "lookup",
    ]
    for call in model.recorded:
        sizes = [len(json.dumps(s, ensure_ascii=False)) for s in call["schemas"]]
        assert sum(sizes) <= 4 * (DESCRIPTION_MAX_CHARS + SCHEMA_MAX_CHARS)
        for schema in call["schemas"]:
            function = schema["function"]
            assert within_caps(function["description"], function["parameters"])
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results[-1].content == "ok huge_schema"


def test_the_pre_selection_reads_bounded_tools(big: McpServers) -> None:
    """With the default options (intent pre-selection on), the first model call is made over
    the bounded registrations: no request carries more than the caps."""
    model = ScriptedChatModel(script=[say("nothing to do")])
    middleware: list[Any] = [AttentionScopingMiddleware(big.scopes), McpConnectMiddleware(big)]
    agent: Any = create_agent(model, tools=big.tools, middleware=middleware)
    agent.invoke({"messages": [("user", "look up the word tree")]})
    assert "huge_description" in model.recorded[0]["tools"]  # pre-selected: it reads
    for schema in model.recorded[0]["schemas"]:
        function = schema["function"]
        assert within_caps(function["description"], function["parameters"])


def test_bound_record_cuts_names_annotations_and_keeps_what_fits() -> None:
    record = {
        "name": "odd",
        "description": "fine",
        "inputSchema": {
            "type": "object",
            "properties": {
                "k" * 1_000: {"type": "string"},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "d" * 5_000},
                "pad": {"type": "string", "description": "p" * (SCHEMA_MAX_CHARS + 1)},
            },
        },
        "annotations": {"readOnlyHint": True, "x": "y" * 10_000, "destructiveHint": "no"},
    }
    bounded = bound_record(record)
    schema = bounded.record["inputSchema"]
    assert list(schema["properties"]) == ["mode", "pad"]  # a 1,000-character name is left out
    assert schema["properties"]["mode"]["enum"] == ["a", "b"]
    assert len(schema["properties"]["mode"]["description"]) <= 300
    assert bounded.record["annotations"] == {"readOnlyHint": True}
    assert bounded.cuts == (f"input schema that is larger than {SCHEMA_MAX_CHARS:,} characters",)
    assert bound_record({**record, "inputSchema": {"type": "object"}}).cuts == ()


def test_a_cache_written_before_the_bounds_is_read_within_them(tmp_path: Path) -> None:
    """A cache file from an older version, holding a 2 MB description, is cut on reading."""
    from attention_scoping.mcp.cache import CACHE_VERSION
    from attention_scoping.mcp.config import load_config

    server = load_config({"mcpServers": {"big": BIG}}).servers["big"]
    cache = ToolListCache(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    record = {**listed_tools()[0], "annotations": {"readOnlyHint": True}}
    payload = {"version": CACHE_VERSION, "key": server.cache_key, "tools": [record]}
    cache.path(server).write_text(json.dumps(payload))
    cached = cache.get(server)
    assert cached is not None and len(cached.tools[0]["description"]) <= DESCRIPTION_MAX_CHARS
    assert list(cached.oversized) == ["huge_description"]


def test_audit_names_the_oversized_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from attention_scoping_lab.cli import main

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"big": BIG}}))
    assert (
        main(["audit", str(path), "--mcp-timeout", "60", "--json", str(tmp_path / "a.json")]) == 0
    )
    out = " ".join(capsys.readouterr().out.split())
    for name in CUT:
        assert f"tool '{name}' of MCP server 'big' is oversized" in out
    assert "tool 'lookup'" not in out
    notes = json.loads((tmp_path / "a.json").read_text())["notes"]
    assert sum("is oversized" in note for note in notes) == 3
