"""Benchmark: the scoping middleware's own overhead per model call and per tool call.

    python benchmarks/scoping_overhead.py [--calls 2000] [--cold]

For 50, 500 and 5,000 registered tools (scopes of 10 tools each), times `wrap_model_call` with
a handler that returns at once (the plan, the prompt, the request copy and the reply's record)
and `wrap_tool_call` with a handler that returns at once (the gate reading that record), and
prints p50 / p95. The scope is the application's (`active_context` in state), so the selector
does not run mid-turn, as in a real agent.

`--cold` times the very first `wrap_model_call` of a fresh middleware over fresh tools instead
(the default `LexicalSelector` tokenizes every tool's text once per catalog), and the second.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from rich.console import Console
from rich.table import Table

from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.scopes import LOAD_CONTEXT, Scope
from attention_scoping.testing import ScriptedChatModel

SCOPE_SIZE = 10


def make_tools(n: int) -> list[StructuredTool]:
    """`n` distinct tools with a one-argument schema."""

    def run(x: str) -> str:
        return x

    return [
        StructuredTool.from_function(run, name=f"tool_{i}", description=f"Tool number {i} does x.")
        for i in range(n)
    ]


def make_scopes(tools: list[StructuredTool]) -> list[Scope]:
    """Scopes of `SCOPE_SIZE` consecutive tools."""
    return [
        Scope(
            f"scope_{i // SCOPE_SIZE}",
            f"tools {i} to {i + SCOPE_SIZE - 1}",
            tools=tools[i : i + SCOPE_SIZE],
        )
        for i in range(0, len(tools), SCOPE_SIZE)
    ]


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in microseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return statistics.median(ordered) * 1e6, p95 * 1e6


def load_context_tool(mw: AttentionScopingMiddleware) -> Any:
    """The middleware's `load_context` tool (it registers it with the agent)."""
    return next(t for t in mw.tools if t.name == LOAD_CONTEXT)


def reply_of(result: Any) -> AIMessage:
    """The stamped reply a `wrap_model_call` returned (with or without a state update)."""
    inner = getattr(result, "model_response", result)
    message = inner.result[0]
    assert isinstance(message, AIMessage)
    return message


def measure(n: int, calls: int) -> dict[str, Any]:
    """Time the model-call and tool-call hooks for `n` registered tools."""
    tools = make_tools(n)
    scopes = make_scopes(tools)
    mw = AttentionScopingMiddleware(scopes)
    active = scopes[len(scopes) // 2].name
    target = scopes[len(scopes) // 2].tools[0]
    call = AIMessage(
        "", tool_calls=[{"name": target, "args": {"x": "1"}, "id": "c1", "type": "tool_call"}]
    )
    asked: list[AnyMessage] = [HumanMessage("hello")]
    request = ModelRequest(
        model=ScriptedChatModel(),
        messages=asked,
        tools=[load_context_tool(mw), *tools],
        state={"messages": asked, "active_context": active},  # type: ignore[arg-type]
        system_message=None,
        runtime=None,
    )
    stamped = reply_of(mw.wrap_model_call(request, lambda r: ModelResponse(result=[call])))
    history: list[AnyMessage] = [*asked, stamped]  # the gate reads the reply's record
    state = {"messages": history, "active_context": active}
    request = request.override(messages=history, state=state)  # type: ignore[arg-type]
    response = ModelResponse(result=[AIMessage("ok")])
    tool_request = ToolCallRequest(
        tool_call=stamped.tool_calls[0],
        tool=tools[0],
        state=state,
        runtime=None,  # type: ignore[arg-type]
    )
    done = ToolMessage("ok", tool_call_id="c1")

    model_times: list[float] = []
    tool_times: list[float] = []
    seen: list[int] = []

    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append(len(r.tools))
        return response

    for i in range(calls + 50):
        start = time.perf_counter()
        mw.wrap_model_call(request, handler)
        mid = time.perf_counter()
        ran = mw.wrap_tool_call(tool_request, lambda r: done)
        end = time.perf_counter()
        assert ran is done, ran  # the gate let the shown tool run
        if i >= 50:  # warm-up excluded
            model_times.append(mid - start)
            tool_times.append(end - mid)
    assert seen[-1] == SCOPE_SIZE + 1, seen[-1]
    return {
        "tools": n,
        "scopes": len(scopes),
        "model_call": percentiles(model_times),
        "tool_call": percentiles(tool_times),
    }


def first_calls(n: int) -> tuple[float, float]:
    """Seconds of the first and of the second model call (each the first of its turn, so the
    selector runs) for `n` fresh tools in a fresh middleware with the default selector."""
    tools = make_tools(n)
    mw = AttentionScopingMiddleware(make_scopes(tools))
    times: list[float] = []
    for text in ("tool number 7 does x", "tool number 8 does x"):
        history: list[AnyMessage] = [HumanMessage(text)]
        request = ModelRequest(
            model=ScriptedChatModel(),
            messages=history,
            tools=[load_context_tool(mw), *tools],
            state={"messages": history},
            system_message=None,
            runtime=None,
        )
        started = time.perf_counter()
        mw.wrap_model_call(request, lambda r: ModelResponse(result=[AIMessage("ok")]))
        times.append(time.perf_counter() - started)
    return times[0], times[1]


def cold_table() -> None:
    """Print the first call's time, cold, and the next one's."""
    table = Table(title="AttentionScopingMiddleware: the first model call")
    for column in ("registered tools", "first call, cold", "second call"):
        table.add_column(column, justify="right")
    for n in (500, 5000):
        cold, after = first_calls(n)
        table.add_row(str(n), f"{cold:.3f} s", f"{after:.3f} s")
    Console().print(table)


def main() -> None:
    """Print the overhead table (or, with --cold, the first call's)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    if args.cold:
        cold_table()
        return
    table = Table(title=f"AttentionScopingMiddleware overhead ({args.calls} calls each)")
    for column in (
        "registered tools",
        "scopes",
        "model call p50",
        "model call p95",
        "tool call p50",
        "tool call p95",
    ):
        table.add_column(column, justify="right")
    for n in (50, 500, 5000):
        row = measure(n, args.calls)
        (m50, m95), (t50, t95) = row["model_call"], row["tool_call"]
        table.add_row(
            str(n),
            str(row["scopes"]),
            f"{m50:.0f} µs",
            f"{m95:.0f} µs",
            f"{t50:.0f} µs",
            f"{t95:.0f} µs",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
