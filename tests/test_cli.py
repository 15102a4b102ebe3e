"""The `attention-scoping` command: outputs, and one-line errors naming file and line."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from attention_scoping_lab.args import non_negative, positive
from attention_scoping_lab.cli import main

DATA = Path(__file__).resolve().parent / "data"
CATALOG = str(DATA / "tiny_catalog.jsonl")
QUERIES = str(DATA / "tiny_queries.jsonl")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_writes_json_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_png = tmp_path / "b.json", tmp_path / "b.png"
    code, out, _ = run(
        [
            "bench",
            "--catalog",
            CATALOG,
            "--queries",
            QUERIES,
            "--methods",
            "bm25,hashing",
            "--k",
            "1,3",
            "--thresholds",
            "0.5",
            "--json",
            str(out_json),
            "--plot",
            str(out_png),
            "--cache-dir",
            str(tmp_path / "vectors"),
            "--quiet",
        ],
        capsys,
    )
    assert code == 0
    assert "Selection quality" in out and "bm25" in out
    doc = json.loads(out_json.read_text())
    assert doc["n_tools"] == 6 and doc["n_queries"] == 3
    assert set(doc["methods"]) == {"bm25", "hashing", "default@threshold=0.5"}
    assert set(doc["methods"]["bm25"]["recall"]) == {"1", "3"}
    assert out_png.stat().st_size > 1000


@pytest.mark.parametrize(
    ("catalog", "queries", "message"),
    [
        ("bad_json.jsonl", "tiny_queries.jsonl", "bad_json.jsonl:2: invalid JSON"),
        (
            "missing_field.jsonl",
            "tiny_queries.jsonl",
            "missing_field.jsonl:2: missing field 'description'",
        ),
        (
            "tiny_catalog.jsonl",
            "unknown_gold.jsonl",
            "unknown_gold.jsonl:2: gold id 'send_mail' is not in the catalog "
            "(did you mean 'send_email'?)",
        ),
        ("nowhere.jsonl", "tiny_queries.jsonl", "nowhere.jsonl: file not found"),
    ],
)
def test_bench_input_errors(
    catalog: str, queries: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        [
            "bench",
            "--catalog",
            str(DATA / catalog),
            "--queries",
            str(DATA / queries),
            "--methods",
            "bm25",
            "--quiet",
        ],
        capsys,
    )
    assert code == 2
    assert message in " ".join(err.split())
    assert "Traceback" not in err and out == ""


def test_bench_option_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["bench", "--catalog", CATALOG, "--queries", QUERIES, "--methods", "fast"], capsys
    )
    assert code == 2 and "unknown method 'fast'" in err
    code, _, err = run(
        ["bench", "--catalog", CATALOG, "--queries", QUERIES, "--plot", "x.svg"], capsys
    )
    assert code == 2 and "expected a .png file name" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--catalog", CATALOG, "--queries", QUERIES, "--k", "0"])
    assert exit_info.value.code == 2


def test_audit_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.json"
    code, out, _ = run(
        ["audit", CATALOG, "--json", str(path), "--turns", "5", "--price-in", "2.5"], capsys
    )
    assert code == 0
    assert "6 tools" in out and "Heaviest" in out and "gateway" in out
    assert "@ $2.5/M" in out
    doc = json.loads(path.read_text())
    assert {"n_tools", "tokenizer", "eager_tokens_per_call"} <= set(doc)
    code, out, _ = run(
        ["audit", str(DATA / "openai_tools.json"), "--suggest", "0", "--encoding", "cl100k_base"],
        capsys,
    )
    assert code == 0 and "cl100k_base" in out


def test_audit_price_usd_is_price_in_and_the_old_spelling_warns(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    code, new, _ = run(["audit", CATALOG, "--suggest", "0", "--price-in", "3"], capsys)
    assert code == 0 and "@ $3/M" in new and not caplog.records
    code, old, _ = run(["audit", CATALOG, "--suggest", "0", "--price", "3"], capsys)
    assert code == 0 and old == new
    assert [r.getMessage() for r in caplog.records] == [
        "--price USD is deprecated for audit and will be removed in 1.0: use --price-in USD "
        "(--price names a price model in simulate and bill)"
    ]
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", CATALOG, "--price", "anthropic"])
    assert exit_info.value.code == 2
    assert "use --price-in USD" in capsys.readouterr().err


def test_money_is_usd_per_million_tokens_in_every_command() -> None:
    from attention_scoping_lab.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {
        name: {o for a in command._actions for o in a.option_strings if "price" in o}
        for name, command in sub.choices.items()
    }
    assert flags["audit"] == {"--price-in", "--price"}  # --price: the deprecated USD spelling
    assert flags["eval"] == {"--price-in", "--price-out", "--price-cached"}
    assert flags["simulate"] == flags["bill"] == {"--price"}  # a price model, by name
    assert flags["bench"] == set()


def test_the_eval_price_protocol_is_call_pricer_and_its_old_name_warns() -> None:
    from attention_scoping_lab.eval import CallPricer, TokenPrices

    assert isinstance(TokenPrices(1.0), CallPricer)
    with pytest.warns(DeprecationWarning, match="use CallPricer"):
        from attention_scoping_lab.eval import PriceModel
    assert PriceModel is CallPricer


def test_audit_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["audit", str(DATA / "missing_field.jsonl")], capsys)
    assert code == 2 and "missing_field.jsonl:2: missing field 'description'" in " ".join(
        err.split()
    )
    code, _, err = run(["audit", "no_such_module_xyz:TOOLS"], capsys)
    assert code == 2 and "cannot import 'no_such_module_xyz'" in err
    assert "Traceback" not in err


def test_simulate_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sim.json"
    code, out, _ = run(
        ["simulate", "--tasks", "6", "--ranker", "bm25", "--json", str(path), "--quiet"], capsys
    )
    assert code == 0 and "47,312" in out
    doc = json.loads(path.read_text())
    assert doc["n_tools"] == 120 and set(doc["strategies"]) >= {
        "eager",
        "scoped",
        "gated",
        "gateway",
    }


def test_console_script_is_installed() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "attention_scoping_lab.cli", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and "audit" in result.stdout and "bench" in result.stdout


GOOD_TOOL = {
    "id": "a",
    "name": "a_tool",
    "description": "does a",
    "parameters": {"type": "object", "properties": {}},
}


def _hostile_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Inputs that once ended in a traceback: (file, expected message part)."""
    good = json.dumps(GOOD_TOOL)
    files: dict[str, tuple[Path, str]] = {}

    def put(name: str, content: str | bytes, expect: str) -> None:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        files[name] = (path, expect)

    put("long_number.jsonl", good[:-1] + ', "x": ' + "9" * 5000 + "}\n", ":1: invalid JSON")
    deep = "[" * 100_000 + "]" * 100_000
    put("deep.jsonl", good[:-1] + ', "x": ' + deep + "}\n", ":1: invalid JSON (nested too deeply)")
    put("deep.json", deep, "invalid JSON (nested too deeply)")
    fn = '[{"type": "function", "function": {"name": "caf\xe9", "parameters": {}}}]'
    put("latin1.json", fn.encode("latin-1"), "not UTF-8 text")
    put("surrogate.jsonl", good.replace("does a", "\\ud800") + "\n", ":1: a string holds a lone")
    return files


def test_hostile_catalog_files_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, (path, expect) in _hostile_files(tmp_path).items():
        code, _, err = run(["audit", str(path)], capsys)
        assert code == 2, name
        assert err.startswith(f"error: {path}"), (name, err)
        assert expect in err, (name, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, (name, err)


def test_catalog_text_is_printed_literally_never_as_markup_or_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = [
        {**GOOD_TOOL, "name": "[bold red]boom[/]", "server": "\x1b]0;pwned\x07srv"},
        {**GOOD_TOOL, "id": "b", "name": "b_\x1b[2Jtool", "server": "other"},
    ]
    path = tmp_path / "markup.jsonl"
    path.write_text("".join(json.dumps(tool) + "\n" for tool in tools))
    code, out, _ = run(["audit", str(path), "--lexical"], capsys)
    assert code == 0
    assert "[bold red]boom[/]" in out
    assert "\x1b" not in out and "\x07" not in out
    assert "b_\\x1b[2Jtool" in out


def test_printable_escapes_control_characters_only() -> None:
    from attention_scoping.common.text import printable

    assert printable("\x1b[31mred\x07 ok\tnext\nline é") == "\\x1b[31mred\\x07 ok\tnext\nline é"


def test_bench_refuses_labels_no_method_can_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # refund_payment needs authenticated=True; without that state no method ever shows it
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "Refund order 9.", "gold_ids": ["refund_payment"]}\n')
    code, out, err = run(
        ["bench", "--catalog", CATALOG, "--queries", str(queries), "--methods", "bm25", "--quiet"],
        capsys,
    )
    assert code == 2 and out == "" and "Traceback" not in err
    assert "no method showed any gold tool" in " ".join(err.split())


def test_bench_refuses_gold_names_where_ids_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "c.jsonl"
    catalog.write_text(
        '{"id": "mail/send", "name": "send_email", "description": "Send an email.", '
        '"parameters": {"type": "object", "properties": {}}}\n'
    )
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "Email Ada.", "gold_ids": ["send_email"]}\n')
    code, _, err = run(
        ["bench", "--catalog", str(catalog), "--queries", str(queries), "--quiet"], capsys
    )
    assert code == 2
    assert "'send_email' is a tool name, not a catalog id" in " ".join(err.split())


def test_number_options_name_what_was_given() -> None:
    assert (positive("3"), non_negative("2.5")) == (3, 2.5)
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected an integer >= 1, got 0$"):
        positive("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected a number >= 0, got 'nan'$"):
        non_negative("nan")
