"""`eval --erase-llama-slots`: a llama.cpp server's slots are emptied before every task."""

from __future__ import annotations

import httpx
import pytest

from attention_scoping_lab.cli import main
from attention_scoping_lab.eval.endpoint import EndpointError
from attention_scoping_lab.eval.llama_slots import server_root, slot_eraser
from attention_scoping_lab.eval.retry import EndpointRejected
from tests.eval_support import answer_after_tool, calc, run
from tests.openai_stub import OpenAIStub


def llama(erase_status: int = 200, slots: object = None) -> tuple[httpx.Client, list[str]]:
    """A fake llama.cpp server: its slots list, and a log of the erase requests it got."""
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == "/slots":
            return httpx.Response(200, json=[{"id": 0}, {"id": 1}] if slots is None else slots)
        if request.method == "POST" and request.url.params.get("action") == "erase":
            seen.append(request.url.path)
            return httpx.Response(erase_status, json={"n_erased": 3})
        return httpx.Response(404)

    return httpx.Client(transport=httpx.MockTransport(handle)), seen


def test_the_root_drops_the_openai_suffix() -> None:
    assert server_root("http://127.0.0.1:8089/v1/") == "http://127.0.0.1:8089"
    assert server_root("http://host:1") == "http://host:1"


def test_every_slot_is_erased_at_once_and_on_each_call() -> None:
    client, seen = llama()
    erase = slot_eraser("http://llama/v1", client)
    assert seen == ["/slots/0", "/slots/1"]  # checked before any task runs
    erase()
    assert seen == ["/slots/0", "/slots/1"] * 2


def test_a_server_without_slot_actions_is_a_clear_error() -> None:
    client, _ = llama(erase_status=501)
    with pytest.raises(EndpointError, match="--slot-save-path"):
        slot_eraser("http://llama/v1", client)


def test_a_server_without_slots_is_a_clear_error() -> None:
    client, _ = llama(slots={"not": "a list"})
    with pytest.raises(EndpointError, match="did not answer a list of slots"):
        slot_eraser("http://llama/v1", client)


def test_a_refusal_during_the_run_stops_it() -> None:
    statuses = [200, 200, 500, 500]
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=[{"id": 0}])
        seen.append(request.url.path)
        return httpx.Response(statuses.pop(0))

    erase = slot_eraser("http://llama/v1", httpx.Client(transport=httpx.MockTransport(handle)))
    erase()
    with pytest.raises(EndpointRejected, match="refused to erase slot 0"):
        erase()


def test_the_runner_calls_the_hook_before_every_task() -> None:
    calls: list[int] = []
    with OpenAIStub([answer_after_tool(lambda body: calc("1+1"))] * 4) as stub:
        result = run(
            stub,
            ["math-multiply", "math-expression"],
            before_task=lambda: calls.append(len(stub.requests)),
        )
    assert calls == [0, 2]  # before the first task, and after the first task's two calls
    assert len(result.results) == 2


def test_the_cli_refuses_concurrency_and_servers_without_slots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OpenAIStub([]) as stub:
        base = ["eval", "--base-url", stub.base_url, "--model", "m", "--erase-llama-slots"]
        assert main([*base, "--concurrency", "2", "--limit", "1"]) == 2
        assert "needs --concurrency 1" in capsys.readouterr().err
        assert main([*base, "--limit", "1"]) == 2  # the stub has no /slots
        assert "not a llama.cpp server with slots" in capsys.readouterr().err
        assert stub.requests == []  # nothing was sent to the model
