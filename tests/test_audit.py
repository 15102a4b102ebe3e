"""`audit` on tiny tool sets: target loading, per-call figures, scopes and suggested scopes."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_scoping.common.tokens import get_counter
from attention_scoping.common.tool import ToolSpec
from attention_scoping.observe.tax import tool_tokens
from attention_scoping_lab.audit import TargetError, audit, load_target
from attention_scoping_lab.audit.billing import pool_fetch_tokens
from attention_scoping_lab.audit.clusters import kmeans, suggest_scopes
from attention_scoping_lab.audit.figures import GATEWAY_POOL_METHOD
from attention_scoping_lab.catalog import CatalogError, load_catalog

DATA = Path(__file__).resolve().parent / "data"

MODULE = '''
from langchain_core.tools import tool

from attention_scoping.scopes import Scope

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

@tool
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()

@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return word

lookup.metadata = {"risk": "read"}

@tool
def purge(word: str) -> str:
    """Remove a word for good."""
    return word

purge.metadata = {"risk": "write"}

ALL_TOOLS = [add, shout]
CLASSIFIED = [add, shout, lookup, purge]
TOOL_SCOPES = {"math": {"add"}, "text": {"shout"}}
SCOPES = [Scope("math", tools=[add], reads=[add]), Scope("text", tools=[shout, lookup, purge])]
BROKEN_SCOPES = {"math": {"add", "multiply"}}
NUMBER = 3

def build():
    return ALL_TOOLS
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "my_agent_tools.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_agent_tools"
    sys.modules.pop("my_agent_tools", None)


def test_catalog_target_with_servers_as_scopes() -> None:
    target = load_target(str(DATA / "tiny_catalog.jsonl"))
    assert len(target.specs) == 6
    assert target.scopes == {
        "weather": ["get_weather", "get_forecast"],
        "mail": ["send_email", "read_inbox"],
        "billing": ["create_invoice", "refund_payment"],
    }
    figures = audit(target, turns=10, k=2)
    specs = load_catalog(DATA / "tiny_catalog.jsonl")
    eager = tool_tokens([s.provider_schema() for s in specs])
    assert figures.eager_tokens_per_call == eager
    assert figures.n_tools == 6 and figures.tokenizer.startswith("o200k_base")
    assert figures.heaviest[0]["tokens"] == max(h["tokens"] for h in figures.heaviest)
    names = [m.name for m in figures.methods]
    assert names[0] == "eager (all tools)" and names[1].startswith("scoped (3 scopes")
    assert figures.methods[0].session_tokens == eager * 10
    scoped = figures.methods[1]
    assert scoped.tool_tokens_per_call < eager
    assert 0 < scoped.cacheable_share < 1  # load_context stays; scope tools and all after change
    gateway, pooled = figures.methods[-2:]
    assert gateway.name.startswith("gateway") and gateway.cacheable_share == 1
    assert pooled.name == GATEWAY_POOL_METHOD and pooled.cacheable_share == 1
    # a bench catalog declares no read, so the pool names no tool: the gateway's cost, each
    # use searched for and its schema fetched (a listed read would skip both)
    assert figures.gateway_fetch_tokens["pool_listed"] == 0
    assert pooled.prompt_tokens_per_call == gateway.prompt_tokens_per_call
    assert pooled.session_tokens == gateway.session_tokens
    costs = dict(figures.gateway_fetch_tokens)
    fetch = costs["search_tokens"] + costs["schema_tokens"]
    assert pool_fetch_tokens(costs) == fetch
    assert pool_fetch_tokens({**costs, "pool_listed": 1.0, "incomplete_signatures": 0.0}) == 0
    assert figures.suggested_scopes == []  # scopes exist
    bills = figures.billed_per_session
    assert bills["eager (all tools)"]["none"] == 10 * eager + 600 * sum(range(1, 11))
    per_call, per_turn = bills["gated (k=2)"], bills["gated (k=2), decided per turn"]
    assert per_turn["anthropic"] < per_call["anthropic"]  # fewer tools-array changes
    assert bills["eager (all tools)"]["anthropic"] < bills["eager (all tools)"]["none"]
    assert bills[GATEWAY_POOL_METHOD]["anthropic"] == bills[gateway.name]["anthropic"]


def test_openai_tools_target_and_lexical_suggestions() -> None:
    target = load_target(str(DATA / "openai_tools.json"))
    assert [s.name for s in target.specs] == ["lookup_order", "cancel_order"]
    assert target.scopes is None
    figures = audit(target, suggest=0)
    assert figures.n_tools == 2 and figures.suggested_scopes == []


def test_module_targets(user_module: str) -> None:
    tools = load_target(f"{user_module}:ALL_TOOLS")
    assert [s.name for s in tools.specs] == ["add", "shout"] and tools.scopes is None
    scoped = load_target(f"{user_module}:TOOL_SCOPES")
    assert scoped.scopes == {"math": ["add"], "text": ["shout"]}
    assert [s.name for s in load_target(f"{user_module}:build").specs] == ["add", "shout"]


def test_audit_lists_the_tools_nobody_classified(user_module: str) -> None:
    """Issue 38, bad input: a tool nobody classified is listed by `audit` (in the figures, the
    --json document and a terminal note saying how to declare it); a read declared by metadata
    or by `Scope(..., reads=...)` and a declared write are not."""
    from rich.console import Console

    from attention_scoping_lab.audit import render

    plain = load_target(f"{user_module}:CLASSIFIED")
    assert plain.unclassified == ["add", "shout"]
    scoped = load_target(f"{user_module}:SCOPES")
    assert scoped.unclassified == ["shout"] and scoped.reads == ["add"]
    figures = audit(scoped, suggest=0)
    assert figures.unclassified == ["shout"] and figures.as_dict()["unclassified"] == ["shout"]
    console = Console(record=True, width=400)
    render(figures, console)
    text = console.export_text()
    assert "1 tool nobody classified, so code never opens them" in text
    assert "load_context): shout. Declare reads with metadata={'risk': 'read'}" in text
    catalog = load_target(str(DATA / "tiny_catalog.jsonl"))  # the format carries no risk
    assert catalog.unclassified == sorted(s.name for s in catalog.specs)


def test_many_unclassified_tools_are_counted_past_the_first_ones() -> None:
    from attention_scoping_lab.audit.report import UNCLASSIFIED_SHOWN, unclassified_line

    names = [f"tool_{i:02d}" for i in range(UNCLASSIFIED_SHOWN + 3)]
    line = unclassified_line(names)
    assert line.startswith(f"{len(names)} tools nobody classified")
    assert f"tool_{UNCLASSIFIED_SHOWN - 1:02d} and 3 more (under unclassified in --json)" in line
    assert f"tool_{UNCLASSIFIED_SHOWN:02d}" not in line


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("NOPE", "has no attribute 'NOPE'"),
        ("NUMBER", "is a int; expected a list of tools"),
        ("BROKEN_SCOPES", "names unknown tool 'multiply'"),
    ],
)
def test_bad_module_targets(user_module: str, attribute: str, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        load_target(f"{user_module}:{attribute}")


def test_import_errors_are_explained() -> None:
    with pytest.raises(TargetError, match="cannot import 'no_such_module_xyz'"):
        load_target("no_such_module_xyz:TOOLS")
    with pytest.raises(TargetError, match="no such file"):
        load_target("missing-catalog")
    with pytest.raises(CatalogError, match="file not found"):
        load_target("missing.jsonl")


def test_the_example_agent_scopes() -> None:
    target = load_target("agents:build_scopes")
    figures = audit(target, suggest=0)
    assert [s.name for s in figures.scopes] == ["math", "translation", "weather"]
    sizes = {s.name: s.n_tools for s in figures.scopes}
    assert sizes == {"math": 3, "translation": 4, "weather": 2}
    assert figures.eager_tokens_per_call == tool_tokens(
        [s.provider_schema() for s in target.specs], get_counter()
    )


def _spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name, name, description, {"type": "object", "properties": {}})


def test_suggested_scopes_separate_obvious_groups() -> None:
    specs = [
        _spec("send_email", "Send an email message to a recipient."),
        _spec("read_email", "Read the email messages of the inbox."),
        _spec("delete_email", "Delete an email message from the inbox."),
        _spec("get_weather", "Current weather temperature for a city."),
        _spec("weather_forecast", "Weather forecast temperature for a city."),
        _spec("weather_alerts", "Severe weather alerts for a city."),
    ]
    groups, how = suggest_scopes(specs, 2, embeddings=False)
    assert how.startswith("TF-IDF")
    members = sorted(sorted(names) for _, names in groups)
    assert members == [
        ["delete_email", "read_email", "send_email"],
        ["get_weather", "weather_alerts", "weather_forecast"],
    ]
    assert {name for name, _ in groups} == {"email", "weather"} or all(
        any(word in name for word in ("email", "weather", "inbox", "city")) for name, _ in groups
    )


def test_kmeans_is_deterministic() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert (kmeans(vectors, 4) == kmeans(vectors, 4)).all()
    assert len(set(kmeans(vectors, 4).tolist())) == 4


def test_json_has_the_required_fields(tmp_path: Path) -> None:
    from attention_scoping_lab.audit import write_json

    figures = audit(load_target(str(DATA / "tiny_catalog.jsonl")), suggest=2, embeddings=False)
    path = tmp_path / "audit.json"
    write_json(figures, path)
    doc = json.loads(path.read_text())
    assert doc["n_tools"] == 6 and doc["tokenizer"].startswith("o200k_base")
    assert doc["eager_tokens_per_call"] == figures.eager_tokens_per_call
    assert len(doc["suggested_scopes"]) == 2
