"""The example agent's first-hour defects: the key sent to --base-url, an endpoint answering HTML,
the interactive echo, `--once` without a key, and the one-line connection error."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from rich.console import Console

import example_agent
from agents.tiers import PROPOSALS
from tests.example_support import run_example
from tests.http_support import serve
from tests.openai_stub import OpenAIStub, ScriptEntry

CLOSED = "http://127.0.0.1:9"  # discard port: connection refused at once
KEY_VARIABLES = ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "MY_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("ATTENTION_SCOPING_GEOCODING_URL", f"{CLOSED}/v1/search")
    monkeypatch.setenv("ATTENTION_SCOPING_WEATHER_URL", f"{CLOSED}/v1/forecast")


ANSWER: list[ScriptEntry] = [{"content": "Hello."}]


@pytest.mark.parametrize(
    ("variable", "flag"),
    [("OPENROUTER_API_KEY", []), ("OPENAI_API_KEY", []), ("MY_KEY", ["--api-key-env", "MY_KEY"])],
)
def test_base_url_sends_the_key_the_user_set(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    flag: list[str],
) -> None:
    monkeypatch.setenv(variable, "sk-user-key")
    with OpenAIStub(list(ANSWER), api_key="sk-user-key") as stub:
        code = example_agent.main(["--once", "hello", "--base-url", stub.base_url, *flag])
        sent = [h.get("authorization") for h in stub.headers]
    out = capsys.readouterr().out
    assert code == 0, out
    assert sent == ["Bearer sk-user-key"]
    assert f"(key from ${variable})" in out


def test_base_url_without_a_key_still_works_for_keyless_servers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OpenAIStub(list(ANSWER)) as stub:
        code = example_agent.main(["--once", "hello", "--base-url", stub.base_url])
    assert code == 0
    assert "key from" not in capsys.readouterr().out


class _HtmlHandler(BaseHTTPRequestHandler):
    body = b"<html>\n<body><h1>Welcome to nginx!</h1>\n</body>\n</html>\n"
    content_type = "text/html"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _BadJsonHandler(_HtmlHandler):
    body = b"{not json"
    content_type = "application/json"


@pytest.mark.parametrize("handler", [_HtmlHandler, _BadJsonHandler])
def test_an_endpoint_answering_html_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], handler: type[BaseHTTPRequestHandler]
) -> None:
    with serve(handler) as base:
        url = f"{base}/v1"
        code = example_agent.main(["--once", "hello", "--base-url", url, "--timeout", "5"])
        out = capsys.readouterr().out
        assert code == example_agent.EXIT_USAGE
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, out
        assert f"{url} did not answer like an OpenAI-compatible API" in errors[0]
        assert "Traceback" not in out


def test_connection_error_has_one_full_stop(capsys: pytest.CaptureFixture[str]) -> None:
    code = example_agent.main(["--once", "hi", "--base-url", f"{CLOSED}/v1", "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == example_agent.EXIT_USAGE
    assert f"cannot reach {CLOSED}/v1" in out and ".." not in out


def test_once_without_a_key_outside_the_tour_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code = example_agent.main(["--once", "Write me a poem about autumn"])
    out = capsys.readouterr().out
    assert code == example_agent.EXIT_USAGE
    assert "error: $OPENROUTER_API_KEY is not set" in out and "offline tour" in out
    assert "(scripted tour)" not in out  # no canned reply passed off as an answer


def test_once_without_a_key_inside_the_tour_plays_it_labelled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = example_agent.main(["--once", "What is 47 times 83?"])
    out = capsys.readouterr().out
    assert code == 0
    assert "OFFLINE TOUR" in out and "47 × 83 = 3901" in out


def test_interactive_mode_shows_each_user_line_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = iter(["Calculate 47 times 83.", "exit"])

    def terminal_input(self: Console, prompt: str = "", **_: Any) -> str:
        line = next(typed)
        self.print(f"{prompt}{line}")  # what a terminal shows: the prompt and the typed echo
        return line

    monkeypatch.setattr(Console, "input", terminal_input)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    # An answer without the calculator is nudged once (the math scope was pre-selected); the
    # model's second answer stands.
    with OpenAIStub([{"content": "3901."}, {"content": "3901."}]) as stub:
        code = example_agent.main(["--base-url", stub.base_url])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("You: Calculate 47 times 83.") == 1 and "3901." in out
    assert "⋯ thinking (answered without a tool, nudge 1/2): 3901." in out


def _tour(capsys: pytest.CaptureFixture[str], mode: str) -> str:
    """The offline tour in `mode` from a clean glossary: what it printed (it must succeed)."""
    PROPOSALS.clear()
    code, out = run_example(capsys, "--demo", mode)
    assert code == 0, out
    return out


def test_tiers_tour_shows_always_on_tools_and_an_approval_card(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _tour(capsys, "--tiers")
    turns = out.split("You: ")[1:]
    assert len(turns) == 4
    math, translation, _weather, write = turns
    assert "47 × 83 = 3901" in math and "3\u202f901" in translation
    for turn in turns:  # the always-on tools are visible in every scope
        assert "get_knowledge, logout" in turn
    assert "→ propose_glossary_term(term='cloud', language='fr', translation='nuage')" in write
    assert "approval required" in write and "approved automatically (offline tour)" in write
    assert "signed, single use" in write
    assert PROPOSALS == [{"term": "cloud", "language": "fr", "translation": "nuage"}]


def test_gateway_tour_searches_then_executes_through_the_gateway(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _tour(capsys, "--gateway")
    assert (
        "gateway mode: the model is sent search_tool_catalog, get_tool_schema, execute_tool" in out
    )
    turns = out.split("You: ")[1:]
    assert len(turns) == 4
    assert all("→ search_tool_catalog(" in turn for turn in turns)
    assert "→ execute_tool(tool_name='calculate'" in turns[0] and "47 × 83 = 3901" in turns[0]
    assert "3\u202f901" in turns[1]
    assert "approved automatically (offline tour)" in turns[3]
    assert len(PROPOSALS) == 1


def test_gateway_mode_lists_every_tool_with_its_arguments() -> None:
    """The example's gateway agent puts the signature pool in its fixed system prompt, so a
    model can run `calculate` straight from its line, without a search or a schema fetch."""
    from langchain_core.messages import HumanMessage

    from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

    args = {"tool_name": "calculate", "arguments": {"expression": "47*83"}}
    model = ScriptedChatModel(script=[calls(tool_call("execute_tool", args, "c1")), say("3901")])
    agent, _tools = example_agent.build_gateway_agent(model)
    result = agent.invoke(
        {"messages": [HumanMessage("What is 47 times 83?")]},
        {"configurable": {"thread_id": "pool"}},
    )
    system = model.recorded[0]["system"]
    assert "- calculate(expression): " in system
    assert "- get_current_weather(city" in system
    assert '"status": "ok", "tool": "calculate", "result": 3901' in result["messages"][-2].text


def propose_cloud_live(capsys: pytest.CaptureFixture[str], answer: str) -> tuple[int, str]:
    """One live `--tiers` turn whose model loads the translation scope (a write tool is in
    view only in a scope the model loaded itself), proposes the glossary term 'cloud' ->
    'nuage', then says `answer`; returns the exit code and what was printed."""
    load = {"name": "load_context", "arguments": {"name": "translation"}}
    call = {
        "name": "propose_glossary_term",
        "arguments": {"term": "cloud", "language": "fr", "translation": "nuage"},
    }
    script: list[ScriptEntry] = [
        {"tool_calls": [load]},
        {"tool_calls": [call]},
        {"content": answer},
    ]
    question = "Add 'cloud' to the French glossary as 'nuage'"
    with OpenAIStub(script) as stub:
        code = example_agent.main(["--once", question, "--base-url", stub.base_url, "--tiers"])
    return code, capsys.readouterr().out


def test_a_write_without_a_terminal_to_ask_is_rejected_and_does_not_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    PROPOSALS.clear()
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, out = propose_cloud_live(capsys, "It was not approved.")
    assert code == 0, out
    assert "rejected: no terminal to ask for approval" in out
    assert PROPOSALS == []
    assert "It was not approved." in out


@pytest.mark.parametrize(("reply", "ran"), [("y", True), ("n", False)])
def test_a_terminal_user_approves_or_rejects_the_write(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reply: str, ran: bool
) -> None:
    PROPOSALS.clear()
    prompts: list[str] = []

    def terminal_input(self: Console, prompt: str = "", **_: Any) -> str:
        prompts.append(prompt)
        return reply

    monkeypatch.setattr(Console, "input", terminal_input)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    code, out = propose_cloud_live(capsys, "Done.")
    assert code == 0, out
    assert prompts == ["  approve propose_glossary_term? \\[y/N] "]  # escaped: shown as [y/N]
    assert ("approved by you" if ran else "rejected by you") in out
    assert len(PROPOSALS) == (1 if ran else 0)
