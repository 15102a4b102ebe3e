"""REPLICATE.md and README's smallest examples, run as written under the default options.

Step 4's code blocks of REPLICATE.md run against the small agent they build with the defaults,
README's `create_agent` and hand-built `StateGraph` blocks run against stand-in tools and a
scripted model; the constructor signatures, state keys, install spec and version floors the two
documents state are checked against the code and `pyproject.toml`. When a default changes, these
fail: fix the documents.
"""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool

from attention_scoping import AttentionScopingMiddleware, Scope, ScopedAgentState
from attention_scoping.gating import ToolAttentionMiddleware
from attention_scoping.graph import AGENT_ONLY_KEYS
from attention_scoping.hesitation import HesitationMiddleware, RepeatedCallMiddleware
from attention_scoping.select import LexicalSelector
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

ROOT = Path(__file__).resolve().parent.parent
REPLICATE = (ROOT / "REPLICATE.md").read_text()
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

Namespace = dict[str, Any]


def section(text: str, heading: str) -> str:
    """The text of the `## heading` section, up to the next `## ` heading."""
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def python_blocks(text: str) -> list[str]:
    """The fenced ```python blocks of `text`, in order."""
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_blocks(blocks: list[str], namespace: Namespace, where: str) -> Namespace:
    """Execute `blocks` in order in one namespace (as a reader pasting them into one file)."""
    for i, block in enumerate(blocks):
        exec(compile(block, f"<{where} block {i + 1}>", "exec"), namespace)
    return namespace


def assert_defaults(scoping: AttentionScopingMiddleware) -> None:
    """`scoping` has the options a middleware built with none has."""
    reference = AttentionScopingMiddleware(scoping.catalog)
    assert type(scoping.selector) is type(reference.selector) is LexicalSelector
    assert scoping.layout == reference.layout == "compact"
    assert type(scoping.disclosure) is type(reference.disclosure)
    assert scoping.catalog.default_scope is None


# -- REPLICATE.md, step 4 -------------------------------------------------------------------


def test_step_4_examples_pass_as_written_under_the_defaults() -> None:
    blocks = python_blocks(section(REPLICATE, "Step 4"))
    assert len(blocks) == 2
    namespace = run_blocks(blocks, {"__name__": "replicate_step_4"}, "REPLICATE step 4")
    assert_defaults(namespace["scoping"])
    # what the blocks' asserts rest on: refund writes, and it ran once, from the billing turn
    assert namespace["refund"].metadata == {"risk": "write"}
    assert namespace["REFUNDED"] == ["1234"]


def test_step_4_compares_tool_lists_as_sets() -> None:
    for name, text in (("REPLICATE.md", REPLICATE), ("README.md", README)):
        as_lists = re.findall(r"recorded\[\d+\]\[\"tools\"\] == \[", text)
        assert as_lists == [], name
    assert 'set(model.recorded[1]["tools"]) == {' in section(REPLICATE, "Step 4")


# -- REPLICATE.md, the API block --------------------------------------------------------------

DOCUMENTED = {
    "AttentionScopingMiddleware": AttentionScopingMiddleware,
    "Scope": Scope,
    "ToolAttentionMiddleware": ToolAttentionMiddleware,
    "HesitationMiddleware": HesitationMiddleware,
    "RepeatedCallMiddleware": RepeatedCallMiddleware,
}


def same_default(written: ast.expr, default: object) -> bool:
    """A literal equals the default; `Name()` is an instance of that class."""
    if isinstance(written, ast.Call) and isinstance(written.func, ast.Name):
        return type(default).__name__ == written.func.id and not written.args
    return bool(ast.literal_eval(written) == default)


def documented_calls(block: str) -> list[ast.Call]:
    """The constructor calls of the API block (its `*,` markers dropped to make it Python)."""
    tree = ast.parse(block.replace("*, ", ""))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.func.id in DOCUMENTED
    ]


def test_the_api_block_states_the_real_keyword_defaults() -> None:
    api = python_blocks(section(REPLICATE, "The package API"))[0]
    found = documented_calls(api)
    assert {c.func.id for c in found if isinstance(c.func, ast.Name)} >= {
        "AttentionScopingMiddleware",
        "Scope",
        "ToolAttentionMiddleware",
        "HesitationMiddleware",
        "RepeatedCallMiddleware",
    }
    checked = 0
    for call in found:
        assert isinstance(call.func, ast.Name)
        parameters = inspect.signature(DOCUMENTED[call.func.id]).parameters
        for keyword in call.keywords:
            name = keyword.arg
            assert name is not None and name in parameters, f"{call.func.id}({name}=...)"
            default = parameters[name].default
            assert same_default(keyword.value, default), f"{call.func.id}.{keyword.arg}"
            checked += 1
    assert checked >= 10


# -- REPLICATE.md, install spec and version floors ------------------------------------------


def test_the_install_spec_works_from_a_clone_and_names_real_extras() -> None:
    specs = re.findall(r'pip install -e "([^"]+)"', REPLICATE)
    assert specs, "no install command"
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    for spec in specs:
        path, _, names = spec.partition("[")
        assert path in {".", "./attention-scoping"}, spec  # a path that exists from a clone
        assert set(names.rstrip("]").split(",")) <= extras, spec
    assert "/path/to/" not in REPLICATE


def test_replicate_states_the_version_floors_of_pyproject() -> None:
    wanted = [
        dep
        for dep in PYPROJECT["project"]["dependencies"]
        if dep.split(">")[0] in {"langchain", "langchain-core", "langgraph"}
    ]
    assert len(wanted) == 3
    for dep in wanted:
        assert f"`{dep}`" in REPLICATE, dep
    floor = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    assert f"Python {floor}+" in REPLICATE


# -- the state keys of a hand-built graph ---------------------------------------------------


def middleware_keys() -> set[str]:
    """Every key the core middleware writes, as `ScopedAgentState` declares them (an add-on's
    keys come with `agent_state`, which both documents name)."""
    return set(ScopedAgentState.__annotations__) - AGENT_ONLY_KEYS


def test_both_documents_list_every_state_key_a_hand_built_graph_needs() -> None:
    keys = middleware_keys()
    assert {"messages", "active_context", "scope_opened", "scope_selection"} <= keys
    replicate_graph = REPLICATE[REPLICATE.index("Custom `StateGraph` path") :]
    replicate_graph = replicate_graph[: replicate_graph.index("\n- ", 1)]
    readme_graph = section(README, "Use it in a hand-built `StateGraph`")
    for name, text in (("REPLICATE.md", replicate_graph), ("README.md", readme_graph)):
        missing = sorted(k for k in keys if f"`{k}`" not in text)
        assert missing == [], name
        assert "agent_state(" in text, name


def test_replicate_states_the_blast_radius_rule_where_write_tools_are_wired() -> None:
    rule = (
        "code may assist with declared reads; only the model or the application opens anything else"
    )
    assert rule in " ".join(REPLICATE.split())
    step_3 = section(REPLICATE, "Step 3: wire it in")
    assert 'my_tool.metadata = {"risk": "read"}' in step_3
    assert 'metadata={"risk": "write"}' in step_3
    assert "the selector never does" in step_3


# -- README's smallest examples ---------------------------------------------------------------


@pytest.fixture
def spy() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def stand_ins(spy: list[tuple[str, str]]) -> Namespace:
    """The tools README's examples name, none classified: README's own block declares the reads,
    so `refund` and `update_card` stay unclassified (may write), as in a real app."""

    def make(name: str, writes: bool) -> BaseTool:
        @tool(name)
        def stand_in(order_id: str) -> str:
            """Do what the name says for an order (a stand-in of README's examples)."""
            spy.append((name, order_id))
            return f"{name} done for {order_id}"

        del writes  # the example does not mark writes: failing closed must protect it anyway
        return stand_in

    names = {"get_invoice": False, "refund": True, "update_card": True}
    names |= {"open_ticket": False, "search_kb": False, "get_knowledge": False}
    return {name: make(name, writes) for name, writes in names.items()}


def readme_create_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespace: Namespace
) -> Namespace:
    """Run README's `create_agent` block in a folder that has its prompt files."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "billing.md").write_text("BILLING MODULE")
    (tmp_path / "prompts" / "support.md").write_text("SUPPORT MODULE")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(section(README, "Use it in your `create_agent` app"))[:1]
    return run_blocks(blocks, namespace, "README create_agent")


def test_readme_create_agent_example_runs_under_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stand_ins: Namespace
) -> None:
    model = ScriptedChatModel(script=[say("Which order?")])
    namespace = readme_create_agent(tmp_path, monkeypatch, {**stand_ins, "model": model})
    assert_defaults(namespace["scoping"])
    shown = set(model.recorded[0]["tools"])
    assert "load_context" in shown and "get_knowledge" in shown
    assert not shown & {"refund", "update_card"}  # may write: never opened by the selector
    assert "You are Ada" in model.recorded[0]["system"]


def test_readme_refund_question_never_runs_refund(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stand_ins: Namespace,
    spy: list[tuple[str, str]],
) -> None:
    """Issue 38, case 1, on README's own block: "Don't do anything yet" selects billing, the
    model is shown `get_invoice`, and a `refund` call anyway is refused and never runs."""
    model = ScriptedChatModel(  # the block's own invoke first, then the question
        script=[
            say("Which order?"),
            calls(tool_call("refund", {"order_id": "1234"}, "c1")),
            say("Here is how."),
        ]
    )
    namespace = readme_create_agent(tmp_path, monkeypatch, {**stand_ins, "model": model})
    message = "How do refunds work for order 1234? Don't do anything yet."
    result = namespace["agent"].invoke({"messages": [("user", message)]})
    assert set(model.recorded[1]["tools"]) == {"load_context", "get_knowledge", "get_invoice"}
    assert result["scope_opened"]["by"] == "code"
    assert spy == []


def test_readme_hand_built_graph_runs_under_the_defaults(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stand_ins: Namespace,
    spy: list[tuple[str, str]],
) -> None:
    setup = readme_create_agent(
        tmp_path, monkeypatch, {**stand_ins, "model": ScriptedChatModel(script=[say("ok")])}
    )
    llm = ScriptedChatModel(
        script=[
            calls(tool_call("load_context", {"name": "billing"}, "c1")),
            calls(tool_call("refund", {"order_id": "1234"}, "c2")),
            say("Refunded."),
        ]
    )
    blocks = python_blocks(section(README, "Use it in a hand-built `StateGraph`"))
    namespace = run_blocks(
        blocks[:1], {"llm": llm, "scoping": setup["scoping"]}, "README StateGraph"
    )
    config = {"configurable": {"thread_id": "readme"}}
    result = namespace["app"].invoke({"messages": [("user", "Refund order 1234")]}, config)
    assert spy == [("refund", "1234")]
    assert result["active_context"] == "billing"
    assert result["scope_opened"]["by"] == "model"
    assert set(llm.recorded[1]["tools"]) == {
        "load_context",
        "get_knowledge",
        "get_invoice",
        "refund",
        "update_card",
    }
    last = result["messages"][-1]
    assert isinstance(last, AIMessage) and last.text == "Refunded."


# -- issue 35, 8: load_prompt_dir, a multi-line module, installing into an app ----------------


def test_replicate_says_what_load_prompt_dir_returns_and_where_its_path_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page states the return value and that the path is relative to the working folder,
    and the form it recommends finds the files wherever the app is started."""
    from attention_scoping import load_prompt_dir

    step_3 = " ".join(section(REPLICATE, "Step 3: wire it in").split())
    assert '{"billing": "<the text of prompts/billing.md>", ...}' in step_3
    assert "relative to the working folder" in step_3
    assert 'load_prompt_dir(Path(__file__).parent / "prompts")' in step_3
    app = tmp_path / "app"
    (app / "prompts").mkdir(parents=True)
    (app / "prompts" / "billing.md").write_text("  BILLING.\nRefund paid orders only.\n")
    (app / "prompts" / "notes.json").write_text("{}")
    monkeypatch.chdir(tmp_path)  # started from another folder
    with pytest.raises(FileNotFoundError):
        load_prompt_dir("prompts")
    found = load_prompt_dir(app / "prompts")
    assert found == {"billing": "BILLING.\nRefund paid orders only."}


def test_step_4_reads_a_multi_line_module_from_the_json_result() -> None:
    """`load_context`'s result is JSON: a module's line breaks are escaped in its raw text, so
    the example reads `prompt_module` from the parsed result, with a module of two lines."""
    blocks = python_blocks(section(REPLICATE, "Step 4"))
    assert 'json.loads(loaded.content)["prompt_module"]' in blocks[1]
    namespace = run_blocks(blocks, {"__name__": "replicate_multi_line"}, "REPLICATE step 4")
    billing = namespace["scoping"].catalog.scopes["billing"].prompt
    assert "\n" in billing
    tests = " ".join(section(REPLICATE, "Step 4").split())
    assert "the result is json" in tests.lower()


def test_readme_says_how_to_install_into_an_existing_app() -> None:
    text = section(README, "Install it into your own app")
    assert 'pip install -e "/path/to/attention-scoping[openai,tokens,gate]"' in text
    url = PYPROJECT["project"]["urls"]["Homepage"]
    assert f'pip install "attention-scoping[openai,tokens,gate] @ git+{url}' in text
    assert "not on a package index" in " ".join(text.split())
