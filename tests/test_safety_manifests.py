"""Capability manifests: provider-safe names, schema validation naming the field, read/write."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from attention_scoping.approval.middleware import asks_approval
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.risk import declared_read, declared_write
from attention_scoping.safety import (
    MAX_NAME_LENGTH,
    SEPARATOR,
    ArgumentError,
    Capability,
    CapabilityManifest,
    ManifestConfigError,
    ManifestRegistry,
    UnknownToolError,
    WriteNotGuardedError,
    capability_from_tool,
    manifest_prompt,
    manifest_scope,
    manifest_tools,
)
from attention_scoping.safety.manifests import PROVIDER_SAFE_NAME
from attention_scoping.scopes import Scope, ScopeCatalog
from attention_scoping.select import Selection
from tests.safety_support import Tracker, deploy_manifest, repo_manifest

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def noop(**kwargs: Any) -> str:
    return "ok"


def spec(name: str = "t", schema: dict[str, Any] | None = None, **kw: Any) -> Capability:
    return Capability(name, "A tool.", schema or {"type": "object", "properties": {}}, noop, **kw)


@pytest.fixture
def repo(tracker: Tracker) -> CapabilityManifest:
    return repo_manifest(tracker)


def call(tool_obj: Any, args: dict[str, Any]) -> ToolMessage:
    msg = tool_obj.invoke({"type": "tool_call", "id": "c1", "name": tool_obj.name, "args": args})
    assert isinstance(msg, ToolMessage)
    return msg


# -- names ----------------------------------------------------------------------------------


def test_namespaced_names_are_valid_for_every_provider(repo: CapabilityManifest) -> None:
    assert SEPARATOR == "__"
    assert repo.qualified_names == ("repo__get_issue", "repo__add_label", "repo__comment")
    assert repo.write_names == ("repo__add_label", "repo__comment")
    for name in repo.qualified_names:
        assert OPENAI_NAME.match(name) and PROVIDER_SAFE_NAME.match(name)
    longest = CapabilityManifest("ns-" + "a" * 20, [spec("b" * (MAX_NAME_LENGTH - 25))])
    assert len(longest.qualified_names[0]) == MAX_NAME_LENGTH


@pytest.mark.parametrize(
    ("namespace", "why"),
    [
        ("repo:git", "invalid namespace"),
        ("repo.git", "invalid namespace"),
        ("1repo", "start with a letter"),
        ("re__po", "never '__'"),
        ("repo_", "must not end with '_'"),
        ("", "invalid namespace"),
        ("répo", "invalid namespace"),
    ],
)
def test_bad_namespaces_fail_at_construction(namespace: str, why: str) -> None:
    with pytest.raises(ManifestConfigError, match=why):
        CapabilityManifest(namespace, [spec()])


def test_bad_tool_definitions_fail_at_construction() -> None:
    with pytest.raises(ManifestConfigError, match="invalid tool name 'get:issue'"):
        spec("get:issue")
    with pytest.raises(ManifestConfigError, match="invalid tool name '_x'"):
        spec("_x")
    with pytest.raises(ManifestConfigError, match="at most 64"):
        CapabilityManifest("a" * 30, [spec("b" * 33)])
    with pytest.raises(ManifestConfigError, match="two tools named 't'"):
        CapabilityManifest("ns", [spec(), spec()])
    with pytest.raises(ManifestConfigError, match="not a valid JSON schema"):
        spec(schema={"type": "object", "properties": {"a": {"type": "strng"}}})
    with pytest.raises(ManifestConfigError, match="must describe an object"):
        spec(schema={"type": "array"})
    with pytest.raises(ManifestConfigError, match="target field 'issue' is not a parameter"):
        spec(write=True, target="issue")
    with pytest.raises(ManifestConfigError, match="handler must be callable"):
        Capability("t", "d", {"type": "object"}, "not callable")  # type: ignore[arg-type]
    with pytest.raises(ManifestConfigError, match="no tools"):
        CapabilityManifest("ns", [])


def test_registry_resolves_names_and_explains_unknown_ones(tracker: Tracker) -> None:
    registry = ManifestRegistry([repo_manifest(tracker), deploy_manifest([])])
    manifest, found = registry.resolve("repo__comment")
    assert manifest.namespace == "repo" and found.name == "comment"
    with pytest.raises(UnknownToolError) as info:
        registry.resolve("billing__refund")
    assert info.value.reason == "unknown_namespace" and "'repo', 'deploy'" in str(info.value)
    with pytest.raises(UnknownToolError) as info:
        registry.resolve("repo__coment")
    assert info.value.reason == "unknown_tool"
    assert "did you mean 'repo__comment'" in str(info.value)
    with pytest.raises(UnknownToolError, match="there is no a namespace"):
        registry.resolve("comment")
    with pytest.raises(ManifestConfigError, match="namespace 'repo'"):
        ManifestRegistry([repo_manifest(tracker), repo_manifest(tracker)])
    assert registry.owns("deploy__release") and not registry.owns("deploy__rollback")


# -- validation and execution ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "path", "text"),
    [
        ({}, "issue", "issue", "missing required field 'issue'"),
        ({"issue": "7"}, "issue", "issue", "'issue' must be integer, got string \"7\""),
        ({"issue": 0}, "issue", "issue", "minimum"),
        ({"issue": 1, "id": 2}, "id", "id", "unexpected field 'id' (allowed: issue)"),
    ],
)
def test_invalid_arguments_name_the_field_and_nothing_runs(
    repo: CapabilityManifest,
    tracker: Tracker,
    args: dict[str, Any],
    field: str,
    path: str,
    text: str,
) -> None:
    with pytest.raises(ArgumentError) as info:
        repo.execute("repo__get_issue", args)
    head = info.value.problems[0]
    assert (head.field, head.path) == (field, path) and text in head.message
    assert tracker.reads == []


def test_nested_paths_are_reported() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                    "required": ["sku"],
                },
            }
        },
    }
    m = CapabilityManifest("shop", [spec("order", schema)])
    with pytest.raises(ArgumentError) as info:
        m.validate("shop__order", {"items": [{"sku": "a"}, {"qty": "2"}]})
    problems = {(p.field, p.path) for p in info.value.problems}
    assert ("sku", "items[1].sku") in problems and ("qty", "items[1].qty") in problems


def test_reads_run_writes_refuse_to_run_directly(
    repo: CapabilityManifest, tracker: Tracker
) -> None:
    assert repo.execute("repo__get_issue", {"issue": 1})["title"] == "Login fails"
    with pytest.raises(WriteNotGuardedError, match="two-phase"):
        repo.execute("repo__add_label", {"issue": 1, "label": "bug"})
    assert tracker.mutations == []
    with pytest.raises(UnknownToolError):
        repo.execute("deploy__release", {})


def test_async_handlers() -> None:
    async def fetch(key: str) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"key": key}

    schema = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    m = CapabilityManifest("kv", [Capability("get", "Get a key.", schema, fetch)])
    assert asyncio.run(m.aexecute("kv__get", {"key": "a"})) == {"key": "a"}
    with pytest.raises(TypeError, match="aexecute"):
        m.execute("kv__get", {"key": "a"})
    with pytest.raises(ArgumentError):
        asyncio.run(m.aexecute("kv__get", {}))


# -- LangChain adapters ---------------------------------------------------------------------


def test_tools_answer_mistakes_with_structured_errors(
    repo: CapabilityManifest, tracker: Tracker
) -> None:
    tools = {t.name: t for t in manifest_tools(repo)}
    assert manifest_tools(repo)[0] is tools["repo__get_issue"]  # built once, shared
    ok = call(tools["repo__get_issue"], {"issue": 2})
    assert ok.status == "success" and json.loads(ok.content)["title"] == "Slow search"  # type: ignore[arg-type]
    bad = call(tools["repo__get_issue"], {"issue": "two"})
    body = json.loads(bad.content)  # type: ignore[arg-type]
    assert bad.status == "error" and body["error"] == "invalid_arguments"
    assert body["field"] == "issue" and "next_step" in body
    write = call(tools["repo__comment"], {"issue": 1, "body": "hi"})
    assert write.status == "error"
    assert json.loads(write.content)["error"] == "write_not_guarded"  # type: ignore[arg-type]
    assert tracker.mutations == [] and tracker.reads == [2]


def test_write_tools_show_the_confirmation_field(repo: CapabilityManifest) -> None:
    schemas = {t.name: t.tool_call_schema for t in manifest_tools(repo)}
    assert "confirmation_code" in schemas["repo__comment"]["properties"]  # type: ignore[index]
    assert "confirmation_code" not in schemas["repo__get_issue"]["properties"]  # type: ignore[index]
    assert schemas["repo__comment"]["required"] == ["issue", "body"]  # type: ignore[index]
    assert "confirmation_code" not in repo.specs["comment"].parameters["properties"]


def test_manifest_is_a_scope(repo: CapabilityManifest) -> None:
    scope = manifest_scope(repo)
    assert isinstance(scope, Scope)
    assert scope.name == "repo" and scope.description == "issues of the acme/web repository"
    assert scope.tools == repo.qualified_names
    assert list(scope.tool_objects) == manifest_tools(repo)
    assert scope.reads == {"repo__get_issue"}


def test_manifest_tools_declare_their_risk(repo: CapabilityManifest) -> None:
    tools = {t.name: t for t in manifest_tools(repo)}
    assert declared_read(tools["repo__get_issue"])
    for name in ("repo__add_label", "repo__comment"):
        # a write: code never opens it; its guard is the two-phase code, not a human
        assert declared_write(tools[name]) and not declared_read(tools[name])
        assert not asks_approval(tools[name])


class _Picks:
    """A selector that always chooses one scope (code opening it for the model)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope

    def select(self, text: str, catalog: ScopeCatalog) -> Selection:
        return Selection(self.scope, "confident")


def test_a_manifest_scope_code_opens_shows_its_reads_only(tracker: Tracker) -> None:
    repo = repo_manifest(tracker)
    scoping = AttentionScopingMiddleware([manifest_scope(repo)], selector=_Picks("repo"))
    state = {"messages": [HumanMessage("label issue 1 as docs")]}
    plan = scoping.plan(state, [*manifest_tools(repo), *scoping.tools])
    assert plan.opened_by == "code" and plan.tools == ("repo__get_issue", "load_context")


def test_manifest_prompt_lists_namespaces_and_the_two_step_rule(tracker: Tracker) -> None:
    text = manifest_prompt([repo_manifest(tracker)])
    assert "- repo: issues of the acme/web repository" in text
    assert "repo__add_label, repo__comment" in text and "confirmation_code" in text


def test_spec_from_an_existing_langchain_tool() -> None:
    @tool
    def shout(text: str, times: int = 1) -> str:
        """Shout the text."""
        return text.upper() * times

    m = CapabilityManifest("text", [capability_from_tool(shout)])
    assert m.execute("text__shout", {"text": "hi", "times": 2}) == "HIHI"
    with pytest.raises(ArgumentError) as info:
        m.execute("text__shout", {"times": 2})
    assert info.value.problems[0].field == "text"
