"""The example agent: the offline tour as a subprocess, live mode against a local stub server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import example_agent
from tests.example_support import ask_once
from tests.openai_stub import OpenAIStub, ScriptEntry, auth_error

ROOT = Path(__file__).resolve().parent.parent
CLOSED = "http://127.0.0.1:9"  # discard port: connection refused at once


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"OPENROUTER_API_KEY", "OPENAI_API_KEY"}}
    env.update(
        COLUMNS="200",
        ATTENTION_SCOPING_GEOCODING_URL=f"{CLOSED}/v1/search",
        ATTENTION_SCOPING_WEATHER_URL=f"{CLOSED}/v1/forecast",
    )
    for key in ("OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    for key in ("COLUMNS", "ATTENTION_SCOPING_GEOCODING_URL", "ATTENTION_SCOPING_WEATHER_URL"):
        monkeypatch.setenv(key, env[key])
    return env


def test_offline_tour_runs_as_a_subprocess(offline_env: dict[str, str]) -> None:
    # No key and no flag: the tour is the default, and says it is scripted.
    proc = subprocess.run(
        [sys.executable, "example_agent.py"],
        cwd=ROOT,
        env=offline_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "OFFLINE TOUR" in out and "scripted" in out
    assert "Traceback" not in out + proc.stderr
    turns = out.split("You: ")[1:]
    assert len(turns) == 3
    math, translation, weather = turns
    # "What is 47 times 83?" names no scope the selector can match: the model loads math
    # itself. The other two questions' scopes are selected from the message (their tools are
    # declared reads), so no navigation call is needed.
    assert "context: none  tools: load_context  " in math
    assert "→ load_context(name='math')" in math
    assert "context: math  tools: load_context, calculate" in math
    assert "(pre-selected from the message)" not in math
    assert "load_context(" not in translation + weather
    assert "(pre-selected from the message)" in translation and "(pre-selected" in weather
    assert "→ calculate(expression='47 * 83')" in math and "47 × 83 = 3901" in math
    assert "[active_context = math]" in math
    assert "context: translation  tools: load_context, detect_language" in translation
    assert "3\u202f901" in translation  # French grouping: narrow no-break space
    assert "[active_context = translation]" in translation
    assert "tools: load_context, get_current_weather, get_forecast" in weather
    assert "weather service unreachable" in weather
    assert "[active_context = weather]" in weather
    assert "tool schemas:" in out and "tokens per call if all were sent" in out


def test_once_against_an_openai_compatible_server(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script: list[ScriptEntry] = [
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "47*83"}}]},
        {"content": "47 times 83 is 3901."},
    ]
    code, out, stub = ask_once(capsys, script)
    assert code == 0, out
    assert "47 times 83 is 3901." in out and "[active_context = math]" in out
    assert "OFFLINE TOUR" not in out
    # The math scope is pre-selected from the question: the first call already has its tools.
    assert stub.tool_names(0) == [
        "load_context",
        "calculate",
        "summary_statistics",
        "convert_units",
    ]
    assert "You are Scout" in stub.system_text(0)  # prompts/core.md inside the core layer
    assert stub.tool_messages(1)  # the calculate result went back to the server
    assert "3901" in str(list(stub.tool_messages(1).values()))


def test_bad_key_is_a_clear_message(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIStub([auth_error()]) as stub:
        code = example_agent.main(["--once", "hi", "--base-url", stub.base_url])
    out = capsys.readouterr().out
    assert code == example_agent.EXIT_USAGE
    assert "rejected the API key (HTTP 401)" in out and "Traceback" not in out


def test_unreachable_endpoint_is_a_clear_message(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = example_agent.main(["--once", "hi", "--base-url", f"{CLOSED}/v1", "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == example_agent.EXIT_USAGE
    assert f"cannot reach {CLOSED}/v1" in out


def test_missing_live_key_is_a_clear_message(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = example_agent.parse_args(["--once", "hi"])
    with pytest.raises(example_agent.SetupError, match=r"\$OPENROUTER_API_KEY is not set"):
        example_agent.live_model(args)


def test_gated_tour_loads_held_back_schemas_on_first_use(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = example_agent.main(["--demo", "--gate", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "gate held back" in out and "summary pool" in out
    assert "47 × 83 = 3901" in out and "3\u202f901" in out
    # Ranked second for "weather", get_current_weather is refused once, then sent and run.
    weather = out.split("You: ")[3]
    assert weather.count("→ get_current_weather(city='Paris')") == 2
    assert "tool_not_available" in weather and "weather service unreachable" in weather


def test_stall_is_hidden_nudged_and_shown_dimmed(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    stall = (
        "To run the calculation I need the following parameter: expression (the arithmetic "
        "expression to evaluate). Would you like to proceed? Please provide the expression."
    )
    script: list[ScriptEntry] = [
        {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]},
        {"content": stall},
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "47*83"}}]},
        {"content": "3901"},
    ]
    code, out, stub = ask_once(capsys, script)
    assert code == 0, out
    assert "⋯ thinking (nudge 1/2)" in out
    assert "Agent" in out and "3901" in out
    # The stall is shown once, as a dimmed think line, never as the agent's answer.
    assert out.count("Would you like to proceed?") == 1
    assert "(nudge 1/2): To run the calculation" in out
    assert stub.requests[2]["messages"][-1]["role"] == "user"  # the nudge turn


def test_example_agent_shows_cached_tokens_per_call(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """With a server that reports cached tokens, each model call shows its usage."""
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]},
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "47*83"}}]},
        {"content": "47 times 83 is 3901."},
    ]
    code, out, _stub = ask_once(capsys, script, prompt_cache=True)
    assert code == 0, out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("$ input")]
    assert len(lines) == 3
    assert "(cached 0)" in lines[0] or "(cached 0 =" in lines[0]
    # the third call repeats the second call's tools, system prompt and messages
    assert "cached 0 " not in lines[2] and "cached 0)" not in lines[2]


def test_example_agent_compact_layout_sends_its_own_prompt(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--prompt-layout compact`: every call carries the agent's own prompt alone, and the
    math module arrives in the load_context result."""
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "load_context", "arguments": {"name": "math"}}]},
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "47*83"}}]},
        {"content": "47 times 83 is 3901."},
    ]
    with OpenAIStub(script) as stub:
        argv = ["--once", "Calculate 47 times 83.", "--base-url", stub.base_url]
        code = example_agent.main([*argv, "--prompt-layout", "compact"])
    out = capsys.readouterr().out
    assert code == 0, out
    systems = {r["messages"][0]["content"] for r in stub.requests}
    assert systems == {example_agent.CORE_PROMPT}
    loaded = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert "Do not compute in your head" in loaded[0]["content"]


FENCED = '```json\n{"name": "calculate", "arguments": {"expression": "47*83"}}\n```'


def _fenced_model(body: dict[str, Any]) -> dict[str, Any]:
    """A local model as llama.cpp serves Qwen2.5-Coder: its call comes as fenced JSON."""
    if body["messages"][-1]["role"] == "tool":
        return {"content": "47 times 83 is 3901."}
    offered = [t["function"]["name"] for t in body.get("tools") or []]
    if "calculate" in offered:
        return {"content": FENCED}
    return {"content": '```json\n{"name": "load_context", "arguments": {"name": "math"}}\n```'}


def test_a_local_server_writing_fenced_json_is_answered_through_the_tool(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """With --base-url, text tool calls are converted by default: the fenced call runs the
    tool and the answer is the model's reply to its result, not the JSON."""
    with OpenAIStub([_fenced_model] * 4) as stub:
        code = example_agent.main(["--once", "Calculate 47 times 83.", "--base-url", stub.base_url])
        results = [stub.tool_messages(i) for i in range(len(stub.requests))]
    out = capsys.readouterr().out
    assert code == 0, out
    assert "→ calculate(expression='47*83')" in out and "47 times 83 is 3901." in out
    assert '"name": "calculate"' not in out  # the JSON is not printed as the answer
    assert any("3901" in str(list(r.values())) for r in results)  # the tool really ran


def test_no_text_tool_calls_leaves_the_json_as_the_answer(
    offline_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIStub([_fenced_model] * 6) as stub:
        argv = ["--once", "Calculate 47 times 83.", "--base-url", stub.base_url]
        code = example_agent.main([*argv, "--no-text-tool-calls"])
        results = [m for r in stub.requests for m in r["messages"] if m["role"] == "tool"]
    out = capsys.readouterr().out
    assert code == 0, out
    assert not results and "→ calculate" not in out
    assert '"name": "calculate"' in out.split("Agent")[-1]  # the JSON is the answer


@pytest.mark.parametrize(
    ("argv", "converted"),
    [
        ([], False),  # OpenRouter: providers return real tool calls
        (["--base-url", "http://127.0.0.1:8080/v1"], True),  # a local server
        (["--base-url", "http://127.0.0.1:8080/v1", "--no-text-tool-calls"], False),
        (["--text-tool-calls"], True),
    ],
)
def test_text_tool_calls_default_on_for_local_servers(argv: list[str], converted: bool) -> None:
    assert example_agent.text_tool_calls(example_agent.parse_args(argv)) is converted


def test_the_approval_prompt_shows_y_n_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich would read `[y/N]` as markup and print nothing; the prompt keeps it literal."""
    import io

    from rich.console import Console

    screen = io.StringIO()
    view = example_agent.TurnView(Console(file=screen, width=200), [])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda *_: "y")
    answer, label = view.decide({"name": "propose_glossary_term", "approval_token": "t"})
    assert "approve propose_glossary_term? [y/N]" in screen.getvalue()
    assert answer == {"type": "approve", "token": "t"} and label == "approved by you"
