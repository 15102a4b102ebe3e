"""Billing a recorded session: `RequestLogMiddleware` writes what an agent really sent,
`attention-scoping bill` prices it on the simulated prompt cache, bad files are one-line errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from attention_scoping.common.tokens import get_counter
from attention_scoping.observe.jsonl import read_json_lines
from attention_scoping.observe.request_log import RequestLogMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from attention_scoping_lab.cli import main
from attention_scoping_lab.cost import PRICE_MODELS, memo_count, price_model
from attention_scoping_lab.recorded import (
    RecordedCall,
    SessionFileError,
    bill_session,
    call_times,
    read_session,
)

PROMPT = "You answer questions about the weather. " * 200  # above the cacheable minimum


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def _record(path: Path, questions: list[str]) -> ScriptedChatModel:
    """Run a scripted agent with the request log; one tool call and an answer per question."""
    script: list[Any] = []
    for i, _ in enumerate(questions):
        script += [calls(tool_call("get_weather", {"city": f"C{i}"}, f"c{i}")), say("Sunny.")]
    model = ScriptedChatModel(script=script)
    ticks = iter(range(0, 1000, 2))
    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt=PROMPT,
        middleware=[RequestLogMiddleware(path, clock=lambda: float(next(ticks)))],
    )
    state: dict[str, Any] = {"messages": []}
    for question in questions:
        state = agent.invoke({"messages": [*state["messages"], HumanMessage(question)]})
    return model


def _line(**fields: Any) -> str:
    base: dict[str, Any] = {
        "tools": [],
        "system": "s",
        "messages": [{"role": "user", "content": "x"}],
    }
    return json.dumps({**base, **fields})


def test_the_log_holds_what_the_model_was_sent(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "session.jsonl"
    model = _record(path, ["weather in C0?", "and in C1?"])
    session = read_session(path)
    assert len(session) == len(model.recorded) == 4
    for call, sent in zip(session, model.recorded, strict=True):
        assert [t["function"]["name"] for t in call.tools] == sent["tools"]
        assert call.system == (sent["system"],)
        assert len(call.messages) == len(sent["messages"]) - 1  # the system message apart
    assert [m["role"] for m in session[1].messages] == ["user", "assistant", "tool"]
    assert call_times(session) == [0.0, 2.0, 4.0, 6.0]


def test_each_call_reads_what_the_previous_one_sent(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _record(path, ["weather in C0?"])
    session = read_session(path)
    prices = [price_model("anthropic"), price_model("none")]
    bills = bill_session(session, prices, memo_count(get_counter().count))
    first, second = bills["anthropic"].calls
    assert first.cache_read_tokens == 0 and first.cache_write_tokens == first.input_tokens
    assert second.cache_read_tokens == first.input_tokens  # the whole previous prompt
    assert bills["none"].billed == bills["none"].input_tokens
    assert bills["anthropic"].billed < bills["none"].billed


def test_recorded_times_decide_cache_lifetimes() -> None:
    """Calls 400 s apart: the 5-minute cache has expired, the 1-hour one has not."""
    messages: tuple[dict[str, Any], ...] = ({"role": "user", "content": "q " * 1500},)
    later = (*messages, {"role": "assistant", "content": "a"})
    session = [
        RecordedCall((), ("s",), messages, at=1000.0),
        RecordedCall((), ("s",), later, at=1400.0),
    ]
    prices = [PRICE_MODELS["anthropic"], PRICE_MODELS["anthropic-1h"]]
    bills = bill_session(session, prices, memo_count(get_counter().count))
    assert bills["anthropic"].calls[1].cache_read_tokens == 0
    assert bills["anthropic-1h"].calls[1].cache_read_tokens > 0
    untimed = [RecordedCall((), (), c.messages) for c in session]
    assert call_times(untimed) == [0.0, 4.0]  # same user turn: 4 s apart


def test_bill_command_prints_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, out = tmp_path / "session.jsonl", tmp_path / "bill.json"
    _record(path, ["weather in C0?", "and in C1?"])
    assert main(["bill", str(path), "--calls", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Billed input of" in printed and "Per call (anthropic)" in printed
    doc = json.loads(out.read_text())
    assert doc["n_calls"] == 4 and doc["price_model"] == "anthropic"
    assert set(doc["price_models"]) == set(PRICE_MODELS)
    none, anthropic = doc["price_models"]["none"], doc["price_models"]["anthropic"]
    assert none["billed_input"] == none["input_tokens"]
    assert anthropic["billed_input"] < none["billed_input"]
    assert len(anthropic["calls"]) == 4 and anthropic["cache_read_tokens"] > 0


def test_a_json_array_file_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text("[" + _line(t=1) + "," + _line(t=2) + "]")
    assert [c.at for c in read_session(path)] == [1.0, 2.0]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "no model calls"),
        ("{not json\n", "line 1 is not JSON"),
        ("[1, 2", "not a JSON array"),
        ('"hello"\n', "line 1: expected a JSON object (one model call), got str"),
        ('{"tools": []}\n', "a model call needs 'messages' (keys found: tools)"),
        (_line(messages="hi") + "\n", "'messages' must be a list of JSON objects, got str"),
        (_line(messages=[{"role": "robot"}]) + "\n", "message 1 has role 'robot'; valid: user"),
        (_line(tools={"a": 1}) + "\n", "'tools' must be a list of JSON objects, got dict"),
        (_line(system=3) + "\n", "'system' must be a string or a list of strings, got int"),
        (_line(t="noon") + "\n", "'t' must be a finite number of seconds, got 'noon'"),
        (_line(t=True) + "\n", "'t' must be a finite number of seconds, got True"),
        (_line(t=5) + "\n" + _line(t=3) + "\n", "values go backwards"),
    ],
)
def test_bad_session_files_are_named_errors(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SessionFileError, match=None) as caught:
        read_session(path)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_bill_command_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(_line() + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t": NaN, "messages": []}\n')
    for args, expected in (
        ([str(tmp_path / "missing.jsonl")], "cannot read session file"),
        ([str(bad)], "line 1: 't' must be a finite number of seconds, got nan"),
        ([str(good), "--price", "cheap"], "valid: anthropic, anthropic-1h, openai, none"),
        ([str(good), "--cache-read", "-1"], "cache_read must be a number >= 0"),
        ([str(good), "--json", str(tmp_path)], "is a directory"),
    ):
        assert main(["bill", *args]) == 2
        err = capsys.readouterr().err
        assert expected in " ".join(err.split()) and "Traceback" not in err


def test_example_agent_records_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`example_agent.py --demo --record-requests FILE` writes a file `bill` prices: every call
    carries load_context, the first reads nothing from the cache, later ones read prefixes."""
    import example_agent

    path = tmp_path / "tour.jsonl"
    # the layered prompt: a prefix above OpenAI's 1,024-token cache minimum
    argv = ["--demo", "--prompt-layout", "layered", "--record-requests", str(path)]
    assert example_agent.main(argv) == 0
    session = read_session(path)
    assert len(session) >= 6
    assert all(any(t["function"]["name"] == "load_context" for t in c.tools) for c in session)
    capsys.readouterr()
    out = tmp_path / "tour-bill.json"
    assert main(["bill", str(path), "--json", str(out)]) == 0
    calls = json.loads(out.read_text())["price_models"]["openai"]["calls"]
    assert calls[0]["cache_read_tokens"] == 0 and any(c["cache_read_tokens"] for c in calls)


BAD_SESSION_LINES = {
    "deeply nested": (b"[" * 100_000, "line 2 is too large: it nests deeper than 64 levels"),
    "lone surrogate": (
        b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
        "line 2 is not valid text: a string holds a lone surrogate",
    ),
    "5,000 digits": (
        b'{"messages": [], "t": ' + b"9" * 5000 + b"}",
        "line 2 is too large: an integer has too many digits",
    ),
    "not UTF-8": (b'{"messages": [], "system": "\xc3("}', "line 2 is not UTF-8 (byte 29"),
    "truncated": (b'{"messages": [{"role": "us', "line 2 is not JSON"),
}


@pytest.mark.parametrize("case", list(BAD_SESSION_LINES))
def test_bill_on_a_bad_line_is_one_error_line_naming_it(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bill` on a deeply nested line, a lone surrogate, a 5,000-digit number, bytes that are
    not UTF-8 or a cut line: `error: FILE: line N ...`, exit 2, no traceback."""
    bad, expected = BAD_SESSION_LINES[case]
    path = tmp_path / "session.jsonl"
    path.write_bytes(_line().encode() + b"\n" + bad + b"\n")
    assert main(["bill", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "Traceback" not in err and "\n" not in err
    assert f"session.jsonl: {expected}" in " ".join(err.split())


def test_a_deeply_nested_array_file_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text("[" * 100_000)
    with pytest.raises(SessionFileError, match="not a JSON array \\(too large: it nests deeper"):
        read_session(path)


def test_the_log_writes_a_lone_surrogate_as_a_question_mark(tmp_path: Path) -> None:
    """A message with a lone surrogate (a tool's broken output) cannot be UTF-8: the log
    writes `?` instead of ending the run, and `bill` reads the file."""
    path = tmp_path / "session.jsonl"
    model = ScriptedChatModel(script=[say("Done.")])
    agent = create_agent(model, tools=[get_weather], middleware=[RequestLogMiddleware(path)])
    agent.invoke({"messages": [HumanMessage("weather in \ud800?")]})
    [call] = read_session(path)
    assert call.messages[-1]["content"] == "weather in ??"
    assert main(["bill", str(path)]) == 0


def test_log_lines_from_many_threads_stay_whole(tmp_path: Path) -> None:
    """Agents in several threads share one session file: every line is whole and present
    (the file then interleaves their sessions; `bill` prices one session per file)."""
    path = tmp_path / "session.jsonl"
    middleware = RequestLogMiddleware(path)

    def record(i: int) -> None:
        model = ScriptedChatModel(script=[say("ok")] * 5)
        agent = create_agent(model, tools=[get_weather], middleware=[middleware])
        for turn in range(5):
            agent.invoke({"messages": [HumanMessage(f"q{i}-{turn} " + "x" * 20_000)]})

    threads = [threading.Thread(target=record, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = read_json_lines(path)
    questions = {line.value["messages"][0]["content"].split()[0] for line in lines}
    assert len(lines) == 20
    assert questions == {f"q{i}-{turn}" for i in range(4) for turn in range(5)}
