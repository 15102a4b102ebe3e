"""The eval's results file and the JSON-lines helpers under it: concurrent runs lose nothing,
a crash during a rewrite leaves the old file, and a bad line is one `error:` line naming the
file and the line, exit 2 (issue 25, build item 7)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from attention_scoping.observe import jsonl
from attention_scoping_lab.cli import main
from attention_scoping_lab.eval.results import (
    ResultsFileError,
    ResultsWriter,
    TaskResult,
    finished_results,
    stored_results,
)

GOOD = TaskResult("eager", "a", "m", success=True)


def _result(task: str, model: str = "m", strategy: str = "eager") -> TaskResult:
    return TaskResult(strategy, task, model, success=True)


def _tasks(path: Path) -> list[tuple[str, str]]:
    return [(r.model, r.task) for r in stored_results(path)]


def test_results_appended_by_another_run_after_our_read_survive_our_rewrite(
    tmp_path: Path,
) -> None:
    """The lost-update case: run A reads the file, run B appends, A drops what it will redo.
    A's rewrite re-reads under the lock, so B's result stays and only A's own old one goes."""
    path = tmp_path / "r.jsonl"
    ResultsWriter(path).write(_result("a"))
    stale = stored_results(path)  # run A's read
    ResultsWriter(path).write(_result("b", model="other"))  # run B, meanwhile
    assert [r.task for r in stale] == ["a"]
    ResultsWriter(path, lambda r: r.model == "m" and r.task == "a")  # run A starts
    assert _tasks(path) == [("other", "b")]


def test_concurrent_appends_and_rewrites_lose_no_line(tmp_path: Path) -> None:
    """Four writers append while a fifth keeps rewriting the file (dropping only its own
    marker lines): every appended line is there at the end, and every line is whole."""
    path = tmp_path / "r.jsonl"
    per_writer = 40

    def append(writer: int) -> None:
        out = ResultsWriter(path)
        for i in range(per_writer):
            out.write(_result(f"w{writer}-{i}", model=f"m{writer}"))

    def rewrite() -> None:
        for i in range(10):
            ResultsWriter(path).write(_result(f"mark{i}", model="rewriter"))
            ResultsWriter(path, lambda r: r.model == "rewriter")

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    threads.append(threading.Thread(target=rewrite))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tasks = _tasks(path)
    expected = {(f"m{w}", f"w{w}-{i}") for w in range(4) for i in range(per_writer)}
    assert {t for t in tasks if t[0] != "rewriter"} == expected
    assert len(tasks) == len(set(tasks))
    assert [t for t in tasks if t[0] == "rewriter"] == []


def test_a_crash_during_the_rewrite_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite goes to a temporary file moved into place: when the move fails, the file
    holds what it held, and no temporary file is left behind."""
    path = tmp_path / "r.jsonl"
    for task in ("a", "b"):
        ResultsWriter(path).write(_result(task))
    before = path.read_bytes()

    def crash(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonl.os, "replace", crash)
    with pytest.raises(OSError, match="No space"):
        ResultsWriter(path, lambda r: r.task == "a")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


def test_a_failed_append_leaves_only_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that stops half-way (disk full) is undone: the file keeps its whole lines."""
    path = tmp_path / "r.jsonl"
    ResultsWriter(path).write(_result("a"))
    real_write = os.write
    calls = {"n": 0}

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[:7])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonl.os, "write", half_then_full)
    with pytest.raises(OSError, match="No space"):
        jsonl.append_line(path, _result("x").to_json().encode() + b"\n")
    monkeypatch.undo()
    assert _tasks(path) == [("m", "a")]


def test_a_last_line_cut_short_is_skipped_and_dropped_by_the_next_run(tmp_path: Path) -> None:
    """An interrupted write leaves a cut last line (no newline, maybe inside a character):
    readers skip it, the next run's rewrite drops it, and its appends stay whole lines."""
    path = tmp_path / "r.jsonl"
    for tail in (b'{"strategy": "eager", "ta', '{"last_text": "é'.encode()[:-1]):
        path.write_bytes(GOOD.to_json().encode() + b"\n" + tail)
        assert finished_results(stored_results(path), "m") == [GOOD]
        writer = ResultsWriter(path, lambda r: False)
        assert path.read_bytes() == GOOD.to_json().encode() + b"\n"
        writer.write(_result("b"))
        assert _tasks(path) == [("m", "a"), ("m", "b")]


def test_an_append_after_a_line_without_newline_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(GOOD.to_json().encode())  # a complete line, its newline missing
    jsonl.append_line(path, _result("b").to_json().encode() + b"\n")
    assert _tasks(path) == [("m", "a"), ("m", "b")]


BAD_LINES = {
    "deeply nested": (b"[" * 100_000, "line 2 is too large: it nests deeper than 64 levels"),
    "5,000 digits": (
        b'{"strategy": "eager", "task": "a", "model": "m", "success": true, "steps": '
        + b"7" * 5000
        + b"}",
        "line 2 is too large: an integer has too many digits",
    ),
    "not UTF-8": (b'{"strategy": "eag\xffer"}', "line 2 is not UTF-8 (byte 18"),
    "cut inside a character, not last": (
        '{"last_text": "é'.encode()[:-1],
        "line 2 is not UTF-8 (cut inside a character",
    ),
    "truncated, not last": (b'{"strategy": "eager", "task": "a", "mo', "line 2 is not JSON"),
    "lone surrogate": (
        b'{"strategy": "\\udc00", "task": "a", "model": "m", "success": true}',
        "line 2 is not valid text: a string holds a lone surrogate",
    ),
    "not an object": (b"[1, 2]", "line 2 is not a task result: expected a JSON object"),
    "wrong field type": (
        b'{"strategy": "eager", "task": "a", "model": "m", "success": true, '
        b'"call_seconds": ["slow"]}',
        "line 2 is not a task result: 'call_seconds' must be a list of finite numbers",
    ),
    "bad call triple": (
        b'{"strategy": "eager", "task": "a", "model": "m", "success": true, "calls": [[]]}',
        "line 2 is not a task result: 'calls' must be a list of [tool, arguments object, ran]",
    ),
    "missing fields": (b'{"strategy": "eager"}', "line 2 is not a task result: a task result"),
    "infinite cost": (
        b'{"strategy": "eager", "task": "a", "model": "m", "success": true, "cost": Infinity}',
        "line 2 is not a task result: 'cost' must be a finite number, got inf",
    ),
}


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_eval_resume_on_a_bad_line_is_one_error_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eval --resume` on a results file with a bad line (before its last line, or bad in a
    way no interrupted write produces): `error: FILE: line N ...`, exit 2, no traceback, and
    the file is left as it was."""
    bad, expected = BAD_LINES[case]
    path = tmp_path / "results.jsonl"
    data = GOOD.to_json().encode() + b"\n" + bad + b"\n" + GOOD.to_json().encode() + b"\n"
    path.write_bytes(data)
    argv = ["eval", "--base-url", "http://127.0.0.1:9/v1", "--no-check", "--model", "m"]
    code = main([*argv, "--results", str(path), "--resume", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error:") and "Traceback" not in err and "\n" not in err
    assert f"{path}: {expected}" in " ".join(err.split())
    assert path.read_bytes() == data
    with pytest.raises(ResultsFileError):
        ResultsWriter(path)


def test_results_written_with_a_lone_surrogate_read_back(tmp_path: Path) -> None:
    """A model reply with a lone surrogate cannot be written as UTF-8: it becomes `?` instead
    of ending the run."""
    path = tmp_path / "r.jsonl"
    ResultsWriter(path).write(TaskResult("eager", "a", "m", success=True, last_text="x\ud800y"))
    [back] = stored_results(path)
    assert back.last_text == "x?y"


def test_valid_lines_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    full = TaskResult(
        "eager",
        "a",
        "m",
        success=False,
        error="boom",
        first_tool="calc",
        steps=3,
        call_seconds=(0.5, 1),
        cost=0.25,
        tags=("math",),
        last_text="é ✓",
        calls=(("calc", {"x": [1, {"y": None}]}, True),),
    )
    ResultsWriter(path).write(full)
    assert stored_results(path) == [full]
    assert json.loads(path.read_text(encoding="utf-8"))["last_text"] == "é ✓"


def test_every_task_result_field_is_checked_when_read() -> None:
    """A field added to `TaskResult` gets a type rule in `results.py` too (else a line of
    the wrong type would reach the report)."""
    from attention_scoping_lab.eval import results

    fields = set(TaskResult.__dataclass_fields__)
    assert fields == set(results._FIELD_CHECKS) | set(results._COUNTS)
