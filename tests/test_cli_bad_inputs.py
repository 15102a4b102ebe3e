"""Bad inputs a new user tries end in one clear line and a non-zero exit, never a traceback or
a silent wrong state (issue 35, 7, the command-line part): `eval --timeout` out of range,
output paths in a folder that does not exist or cannot be one, `audit` on an attribute of the
wrong shape, an `eval` run whose every task errored, `example_agent.py --gate 0` and
`--record-requests` into a missing folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import example_agent
from attention_scoping_lab.cli import main
from tests.eval_support import calc
from tests.openai_stub import OpenAIStub

EVAL = ["eval", "--task", "math-multiply", "--strategies", "eager", "--quiet", "--no-check"]


def one_line_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    """The one `error: ...` line a refused command printed (exit 2)."""
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_eval_timeout_must_be_a_positive_finite_number(
    value: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with OpenAIStub([calc("47*83")] * 4) as stub:
        with pytest.raises(SystemExit) as exit_info:
            main([*EVAL, "--base-url", stub.base_url, "--timeout", value])
        assert stub.requests == []
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert err[-1].endswith(
        f"argument --timeout: expected a positive number of seconds, got {value!r}"
    )


@pytest.mark.parametrize("option", ["--results", "--json"])
def test_eval_never_creates_a_folder_it_was_not_asked_to(
    option: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    with OpenAIStub([calc("47*83")] * 4) as stub:
        code = main([*EVAL, "--base-url", stub.base_url, option, str(missing / "x.jsonl")])
        assert stub.requests == []
    err = one_line_error(capsys, code)
    assert f"{missing}" in err and "does not exist" in err
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("option", ["--results", "--json"])
def test_eval_output_under_a_file_is_one_line(
    option: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    with OpenAIStub([calc("47*83")] * 4) as stub:
        code = main([*EVAL, "--base-url", stub.base_url, option, str(afile / "x.jsonl")])
        assert stub.requests == []
    err = one_line_error(capsys, code)
    assert "is not a folder" in err


def test_eval_exits_non_zero_and_says_why_when_every_task_errored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A wrong model name: every call answered 404; the run ends with one line naming the
    reason and exit 1 (not 0 with success 0 %)."""
    wrong = {"status": 404, "error": {"message": "The model 'gpt-9' does not exist"}}
    with OpenAIStub([wrong] * 4) as stub:
        argv = [*EVAL, "--base-url", stub.base_url, "--model", "gpt-9"]
        code = main([*argv, "--results", str(tmp_path / "r.jsonl")])
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: every task errored (1 of 1)") and "\n" not in err
    assert "The model 'gpt-9' does not exist" in err


SHAPES = '''
from langchain_core.tools import tool
from attention_scoping.scopes import Scope

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

INTS = {"math": [1, 2]}
MIXED = {"math": ["add", 3]}
SCOPE_AND_INT = [Scope("math", "Math.", tools=[add]), 3]
NAMES = ["add", "sub"]
'''


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("INTS", "scope 'math' lists int 1; expected tool names or tools"),
        ("MIXED", "scope 'math' lists int 3; expected tool names or tools"),
        ("SCOPE_AND_INT", "item 1 is int 3; expected LangChain tools or Scope objects"),
        ("NAMES", "item 0 is str 'add'; expected LangChain tools or Scope objects"),
    ],
)
def test_audit_of_an_attribute_of_the_wrong_shape_is_one_line(
    attribute: str,
    expected: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "bad_shapes.py").write_text(SHAPES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bad_shapes", raising=False)
    err = one_line_error(capsys, main(["audit", f"bad_shapes:{attribute}", "--suggest", "0"]))
    assert err == f"error: bad_shapes:{attribute}: {expected}"


@pytest.mark.parametrize("k", ["0", "-3"])
def test_example_agent_gate_must_be_at_least_one(
    k: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = example_agent.main(["--demo", "--gate", k])
    out = capsys.readouterr().out.strip()
    assert code == 2 and "\n" not in out, out
    assert out == f"error: --gate K must be at least 1 (the tools shown with full schemas), not {k}"


def test_example_agent_records_requests_only_into_an_existing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    code = example_agent.main(["--demo", "--record-requests", str(missing / "x.jsonl")])
    out = capsys.readouterr().out.strip()
    assert code == 2 and "\n" not in out, out
    assert (
        out
        == f"error: --record-requests {missing / 'x.jsonl'}: the folder {missing} does not exist"
    )
    assert not (tmp_path / "nonexistent").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    code = example_agent.main(["--demo", "--record-requests", str(afile / "x.jsonl")])
    out = capsys.readouterr().out.strip()
    assert (
        code == 2
        and out == f"error: --record-requests {afile / 'x.jsonl'}: {afile} is not a folder"
    )
    code = example_agent.main(["--demo", "--record-requests", str(tmp_path)])
    out = capsys.readouterr().out.strip()
    assert (
        code == 2
        and out == f"error: --record-requests {tmp_path}: is a folder, expected a file name"
    )
