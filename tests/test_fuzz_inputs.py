"""Property-based fuzzing of the readers of text from outside (issue 25, build item 11): the
text-call parser, MCP tool results and fault payloads, and the results and session files.

Invariants: no exception escapes but the documented ones, and every answer has its documented
type (the parser's `TextCall`s name a string and hold an object; an MCP result is text or
JSON-ready content blocks, an `isError` result is a `ToolException` carrying a JSON payload; a
file reader returns its records or raises its one-line error naming the line).

CI runs a derandomised profile (`FUZZ_INPUT_EXAMPLES`, default 300 per property, 2,100 cases in
all); a longer run: `FUZZ_INPUT_EXAMPLES=20000 python -m pytest tests/test_fuzz_inputs.py`.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.tools import ToolException
from mcp import types as mcp_types
from pydantic import ValidationError

import attention_scoping.textcalls as textcalls
from attention_scoping.common.errors import render_payload
from attention_scoping.mcp.faults import FaultCode, McpFault, exception_text, fault_payload
from attention_scoping.mcp.tools import as_content, fault_exception
from attention_scoping.observe.jsonl import JsonLinesError, parse_lines
from attention_scoping.textcalls import parse as textcall_parse
from attention_scoping_lab.cost import PRICE_MODELS
from attention_scoping_lab.eval.results import (
    ResultsFileError,
    ResultsWriter,
    TaskResult,
    figures,
    stored_results,
)
from attention_scoping_lab.recorded import (
    RecordedCall,
    SessionFileError,
    bill_session,
    read_session,
)
from tests.fuzz_support import check_reader, fuzz_settings

EXAMPLES = int(os.environ.get("FUZZ_INPUT_EXAMPLES", "300"))

FUZZ = fuzz_settings(EXAMPLES)

DEEP = 5_000 if hasattr(textcall_parse, "MAX_JSON_DEPTH") else 300
"""Bracket runs the parser is fed: past the interpreter's recursion limit once the parser is
iterative (`MAX_JSON_DEPTH` marks that version), within it before."""

any_text = st.one_of(
    st.text(max_size=20),
    st.builds(
        lambda head, odd, tail: head + odd + tail,
        st.text(max_size=8),
        st.characters(categories=["Cs"]),
        st.text(max_size=8),
    ),
)
"""Any code points, lone surrogates included (a JSON `\\ud800` escape decodes to one)."""

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    any_text,
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)

# -- the text-call parser ------------------------------------------------------------------------

NAMES = st.sampled_from(["get_weather", "send_email", "calculate", "", "x" * 60, "名前", "a b"])
NAME_KEYS = st.sampled_from(["name", "tool", "tool_name", "function"])
ARG_KEYS = st.sampled_from(["arguments", "parameters", "args", "tool_input", "input"])


@st.composite
def call_objects(draw: st.DrawFn) -> Any:
    """Something shaped like a call, nearly, or not at all."""
    args = draw(st.one_of(json_value, st.text(max_size=30).map(json.dumps)))
    obj: dict[str, Any] = {draw(NAME_KEYS): draw(st.one_of(NAMES, json_leaf))}
    if draw(st.booleans()):
        obj[draw(ARG_KEYS)] = args
    if draw(st.booleans()):
        obj = {"type": "function", "function": obj}
    extra = draw(st.dictionaries(st.text(max_size=6), json_leaf, max_size=2))
    return draw(st.sampled_from([obj, {**extra, **obj}, [obj, obj], extra]))


@st.composite
def fragments(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return draw(st.text(alphabet=string.printable + "{}[]\"'`é✓", max_size=40))
    text = json.dumps(draw(call_objects()), ensure_ascii=draw(st.booleans()))
    if kind == 1:
        return text
    if kind == 2:
        return f"```{draw(st.sampled_from(['json', '', 'python', 'tool_call']))}\n{text}\n```"
    if kind == 3:
        return f"<tool_call>{text}</tool_call>" if draw(st.booleans()) else f"<tool_call>{text}"
    if kind == 4:
        return "{" + text + "}"  # a template's escaped braces
    if kind == 5:
        return text[: draw(st.integers(0, len(text)))]  # cut short
    if kind == 6:
        depth = draw(st.integers(1, DEEP))
        return draw(st.sampled_from(["[", "{", '{"a":', "[{"])) * depth
    if kind == 7:
        return '"' + text.replace('"', '\\"') + '"'  # quoted
    return draw(st.sampled_from(["Here is the call:", "Example:", "Do not run this:", "\n"]))


replies = st.lists(fragments(), max_size=5).map(" ".join)


def _check_calls(calls: Any) -> None:
    assert isinstance(calls, list)
    for call in calls:
        assert isinstance(call, textcalls.TextCall)
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)
        assert call.source in ("tag", "fence", "bare")


@FUZZ
@given(text=replies, offered=st.frozensets(NAMES, max_size=3))
def test_the_text_call_parser_reads_any_reply(text: str, offered: frozenset[str]) -> None:
    """`find_text_calls`, `offered_calls` and `strip_calls` on any reply: no exception, lists
    of `TextCall`s (the offered split by name) and a string."""
    _check_calls(textcalls.find_text_calls(text))
    named, others = textcalls.offered_calls(text, offered)
    _check_calls(named)
    _check_calls(others)
    assert all(c.name in offered for c in named) and all(c.name not in offered for c in others)
    assert isinstance(textcalls.strip_calls(text), str)


# -- MCP tool results and faults -----------------------------------------------------------------

URIS = st.builds(
    lambda scheme, path: f"{scheme}{path}",
    st.sampled_from(["file:///", "https://x.test/", "mem://k/"]),
    st.text(alphabet=string.ascii_letters + string.digits + "-_./", max_size=12),
)
extras = st.dictionaries(st.sampled_from(["annotations", "_meta", "extra", "x"]), json_value)


def _block(kind: str, draw: st.DrawFn) -> dict[str, Any]:
    text = any_text
    if kind == "text":
        return {"type": "text", "text": draw(text)}
    if kind in ("image", "audio"):
        return {"type": kind, "data": draw(text), "mimeType": draw(text)}
    if kind == "resource":
        inner: dict[str, Any] = {"uri": draw(URIS)}
        inner["text" if draw(st.booleans()) else "blob"] = draw(text)
        return {"type": "resource", "resource": inner}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": draw(URIS), "name": draw(text)}
    return {
        "type": draw(st.text(max_size=8)),
        **draw(st.dictionaries(st.text(max_size=6), json_value, max_size=3)),
    }


@st.composite
def content_blocks(draw: st.DrawFn) -> dict[str, Any]:
    kinds = ["text", "image", "audio", "resource", "resource_link", "other"]
    block = _block(draw(st.sampled_from(kinds)), draw)
    return {**draw(extras), **block}


@st.composite
def tool_results(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {"content": draw(st.lists(content_blocks(), max_size=4))}
    if draw(st.booleans()):
        deep: Any = draw(json_value)
        for _ in range(draw(st.sampled_from([0, 0, 0, 150]))):  # the SDK refuses ~250 levels
            deep = {"a": deep}
        raw["structuredContent"] = {"v": deep}
    if draw(st.booleans()):
        raw["isError"] = draw(st.booleans())
    return raw


@FUZZ
@given(raw=tool_results())
def test_any_mcp_tool_result_becomes_content_or_a_structured_error(raw: dict[str, Any]) -> None:
    """Whatever content blocks a server sends (as the SDK accepts them), the model gets text or
    JSON-ready blocks, or, for `isError`, a `tool_error` payload; nothing else is raised."""
    try:
        result = mcp_types.CallToolResult.model_validate(raw)
    except ValidationError:
        return  # the SDK refuses it: the connection reports malformed_result
    try:
        content = as_content("srv", "a_tool", result)
    except ToolException as exc:
        assert result.is_error
        payload = json.loads(str(exc))
        assert payload["error"] == "tool_error" and payload["server"] == "srv"
        assert payload["tool"] == "a_tool" and isinstance(payload["next_step"], str)
        return
    assert not result.is_error
    if isinstance(content, list):
        assert all(isinstance(b, dict) and b["type"] in ("text", "image") for b in content)
        json.dumps(content, ensure_ascii=False)
    else:
        assert isinstance(content, str)


exception_trees = st.recursive(
    st.builds(ValueError, st.text(max_size=30)) | st.builds(OSError, st.text(max_size=30)),
    lambda inner: st.lists(inner, min_size=1, max_size=3).map(
        lambda leaves: ExceptionGroup("group", leaves)
    ),
    max_leaves=6,
)


@FUZZ
@given(
    server=st.text(max_size=30),
    message=st.text(max_size=200),
    code=st.sampled_from(get_args(FaultCode)),
    tool=st.none() | st.text(max_size=30),
    detail=st.none() | st.text(max_size=60),
    cause=exception_trees,
    limit=st.integers(min_value=1, max_value=400),
)
def test_any_mcp_fault_is_a_json_payload_with_a_next_step(
    server: str,
    message: str,
    code: FaultCode,
    tool: str | None,
    detail: str | None,
    cause: BaseException,
    limit: int,
) -> None:
    """Any fault (any server name, message, tool, detail, and the text of any exception or
    group of them): a payload with its code and next step, rendered as JSON that reads back."""
    text = exception_text(cause, limit)
    assert isinstance(text, str) and len(text) <= limit
    fault = McpFault(server, message, code=code, tool=tool, detail=detail or text)
    payload = fault_payload(fault)
    assert payload["error"] == code and payload["server"] == server
    assert isinstance(payload["next_step"], str) and payload["next_step"]
    rendered = render_payload(payload)
    assert json.loads(rendered) == payload
    assert str(fault_exception(fault)) == rendered


# -- the results and session files ---------------------------------------------------------------

raw_lines = st.one_of(
    json_value.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=60),
    st.builds(lambda n, c: c * n, st.integers(1, 3_000), st.sampled_from([b"[", b"{", b'{"a":'])),
    st.integers(4_000, 6_000).map(lambda n: b'{"steps": ' + b"9" * n + b"}"),
    st.sampled_from([b'"\\ud800"', b'{"t": NaN}', b"\xc3", b"\xff\xfe", b"Infinity", b"\x00"]),
)


@st.composite
def task_result_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A task result's JSON, every field maybe of the wrong type."""
    good = TaskResult(
        draw(st.text(max_size=8)), draw(st.text(max_size=8)), "m", success=draw(st.booleans())
    ).to_json()
    value: dict[str, Any] = json.loads(good)
    for key in draw(st.lists(st.sampled_from(sorted(value)), max_size=3)):
        value[key] = draw(json_value)
    return value


files = st.lists(
    st.one_of(raw_lines, task_result_objects().map(lambda v: json.dumps(v).encode())),
    max_size=5,
).map(lambda lines: b"\n".join(lines))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_the_results_reader_reads_any_file(scratch: Path) -> None:
    """`stored_results` (what `eval --resume` reads) on any bytes: task results, or one
    `ResultsFileError` naming the file (and the line), never another exception."""
    path = scratch / "results.jsonl"

    def accepted(results: list[TaskResult]) -> None:
        assert all(isinstance(r, TaskResult) for r in results)
        row = figures("s", results)  # what the report computes from them
        assert row.tasks == len(results) and row.errors <= len(results)

    check_reader(
        FUZZ,
        files,
        path,
        stored_results,
        ResultsFileError,
        names_file=lambda message: message.startswith(str(path)),
        accepted=accepted,
    )


@st.composite
def session_objects(draw: st.DrawFn) -> Any:
    """A session line's JSON: mostly a model call, some fields maybe of any type."""
    message = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "user", "robot"])},
        optional={
            "content": st.one_of(any_text, any_text, json_value),
            "tool_calls": json_value,
            "tool_call_id": json_value,
        },
    )
    call: dict[str, Any] = {"messages": draw(st.lists(message, max_size=3))}
    optional = {
        "tools": st.lists(st.dictionaries(any_text, json_value, max_size=3), max_size=2),
        "system": st.one_of(any_text, st.lists(any_text, max_size=2)),
        "t": st.floats(min_value=0, max_value=1e9, allow_nan=False),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            call[key] = draw(st.one_of(strategy, strategy, strategy, json_value))
    return draw(json_value) if draw(st.integers(0, 5)) == 5 else call


session_line = session_objects().map(lambda v: json.dumps(v).encode())
calls_only = st.lists(session_line, min_size=1, max_size=4)
with_bad_lines = st.lists(st.one_of(session_line, raw_lines), min_size=1, max_size=4)
sessions = st.one_of(calls_only, calls_only, with_bad_lines).map(lambda lines: b"\n".join(lines))


def test_the_session_reader_and_the_bill_read_any_file(scratch: Path) -> None:
    """`read_session` (what `bill` reads) on any bytes: the calls, which then bill without an
    exception, or one `SessionFileError` naming the file."""
    path = scratch / "session.jsonl"
    prices = list(PRICE_MODELS.values())[:2]

    def accepted(calls: list[RecordedCall]) -> None:
        assert calls and all(isinstance(c, RecordedCall) for c in calls)
        bills = bill_session(calls, prices, len)
        assert all(len(b.calls) == len(calls) for b in bills.values())

    check_reader(
        FUZZ,
        sessions,
        path,
        read_session,
        SessionFileError,
        names_file=lambda message: "session.jsonl" in message,
        accepted=accepted,
    )


def test_written_results_read_back(scratch: Path) -> None:
    """Any task result the eval writes reads back equal (a lone surrogate as `?`), among lines
    of any other results."""
    path = scratch / "roundtrip.jsonl"
    texts = st.text(max_size=30)

    @FUZZ
    @given(
        result=st.builds(
            TaskResult,
            strategy=texts,
            task=texts,
            model=texts,
            success=st.booleans(),
            error=st.none() | texts,
            steps=st.integers(0, 10**6),
            call_seconds=st.lists(st.floats(0, 1e6), max_size=3).map(tuple),
            cost=st.floats(0, 1e6),
            tags=st.lists(texts, max_size=2).map(tuple),
            last_text=texts,
            calls=st.lists(
                st.tuples(texts, st.dictionaries(texts, json_value, max_size=3), st.booleans()),
                max_size=2,
            ).map(tuple),
        )
    )
    def check(result: TaskResult) -> None:
        path.unlink(missing_ok=True)
        ResultsWriter(path).write(result)
        [back] = stored_results(path)
        assert back == _without_surrogates(result)

    check()


def _without_surrogates(result: TaskResult) -> TaskResult:
    """`result` as written: every lone surrogate replaced by `?`."""
    return TaskResult.from_dict(json.loads(result.to_json().encode("utf-8", "replace")))


@FUZZ
@given(data=st.lists(raw_lines, max_size=6).map(lambda lines: b"\n".join(lines)))
def test_the_json_lines_reader_reads_any_bytes(data: bytes) -> None:
    """`parse_lines` under both files: parsed lines with their numbers, or one error naming
    the line, for any bytes at all."""
    try:
        lines = parse_lines(data, "f.jsonl", cut_tail=True)
    except JsonLinesError as exc:
        assert str(exc).startswith("f.jsonl: line ") and "\n" not in str(exc)
        return
    numbers = [line.number for line in lines]
    assert numbers == sorted(set(numbers))
    assert all(data.split(b"\n")[line.number - 1] == line.raw for line in lines)
