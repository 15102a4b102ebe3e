"""Billed input per task of the example agent over a multi-turn session: the real middleware
and tools, the offline tour's scripted model, every request billed on the simulated prompt
cache of `attention_scoping_lab.cost`.

    python benchmarks/example_cost.py [--turns 10] [--price anthropic]

The session cycles the tour's three kinds of turn (arithmetic, translating the answer, the
weather in a city), so the scope changes on every turn: the hardest case for scoping. The
weather service is pointed at a closed local port (offline: the tool reports it unreachable).
Configurations: every tool and every module on every call (eager), scoping as shipped, scoping
with the layered and the stable layout (modules in `load_context` results), and scoping plus
the gate (add-on) deciding per call or per turn.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's agents/ package

CLOSED = "http://127.0.0.1:9"  # discard port: connection refused at once
os.environ.setdefault("ATTENTION_SCOPING_GEOCODING_URL", f"{CLOSED}/v1/search")
os.environ.setdefault("ATTENTION_SCOPING_WEATHER_URL", f"{CLOSED}/v1/forecast")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from agents import CORE_PROMPT, build_scopes  # noqa: E402
from agents.tour import tour_model  # noqa: E402
from attention_scoping.common.tokens import get_counter  # noqa: E402
from attention_scoping.middleware import AttentionScopingMiddleware  # noqa: E402
from attention_scoping.observe.render import as_provider_message  # noqa: E402
from attention_scoping_lab.cost import (  # noqa: E402
    PRICE_MODELS,
    SessionCost,
    memo_count,
    price_model,
)
from attention_scoping_lab.recorded import RecordedCall, bill_session  # noqa: E402

CITIES = ("Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Vienna", "Oslo", "Dublin", "Prague")
LANGUAGES = ("French", "German", "Spanish", "Italian")


def questions(turns: int) -> list[str]:
    """`turns` user messages cycling arithmetic, translation of the answer and weather."""
    out = []
    for i in range(turns):
        kind = i % 3
        if kind == 0:
            out.append(f"What is {12 + 7 * i} times {31 + 3 * i}?")
        elif kind == 1:
            out.append(f"Translate that answer to {LANGUAGES[i % len(LANGUAGES)]}")
        else:
            out.append(f"What's the weather in {CITIES[i % len(CITIES)]}?")
    return out


def _agent(config: str, model: Any) -> Any:
    scopes = build_scopes()
    if config == "eager":
        registered = AttentionScopingMiddleware(scopes).tools
        tools = [t for t in registered if t.name != "load_context"]
        modules = "\n\n".join(s.prompt for s in scopes)
        return create_agent(
            model,
            tools=tools,
            system_prompt=CORE_PROMPT + "\n\n" + modules,
            checkpointer=InMemorySaver(),
        )
    layout: Literal["stable", "layered", "compact"] = (
        "stable"
        if "module in load_context" in config
        else "compact"
        if "compact" in config
        else "layered"
    )
    middleware: list[Any] = [AttentionScopingMiddleware(scopes, layout=layout)]
    if "gate" in config:
        from attention_scoping.gating import ToolAttentionMiddleware

        per: Literal["per_call", "per_turn"] = "per_turn" if "per turn" in config else "per_call"
        middleware.append(ToolAttentionMiddleware(k=1, summary_pool="scope", promotion=per))
    return create_agent(
        model, system_prompt=CORE_PROMPT, middleware=middleware, checkpointer=InMemorySaver()
    )


def play(config: str, turns: int) -> list[dict[str, Any]]:
    """Run the session; the requests the model was sent, as recorded."""
    model = tour_model()
    agent = _agent(config, model)
    thread = {"configurable": {"thread_id": config}}
    for question in questions(turns):
        agent.invoke({"messages": [HumanMessage(question)]}, thread)
    return list(model.recorded)


def bill(recorded: Sequence[dict[str, Any]], prices: Sequence[Any]) -> dict[str, SessionCost]:
    """The session's bill per price model, as `attention-scoping bill` computes it (4 s between
    the calls of a turn, 60 s between turns)."""
    calls = [
        RecordedCall(
            tools=tuple(call["schemas"]),
            system=(call["system"] or "",),
            messages=tuple(
                as_provider_message(m) for m in call["messages"] if not isinstance(m, SystemMessage)
            ),
        )
        for call in recorded
    ]
    return bill_session(calls, prices, memo_count(get_counter().count))


CONFIGS = (
    "eager",
    "scoping, compact (the default)",
    "scoping, layered",
    "scoping, module in load_context",
    "scoping + gate per call",
    "scoping + gate per turn",
)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--price", default="anthropic", choices=list(PRICE_MODELS))
    args = parser.parse_args()
    price = price_model(args.price)
    prices = [price, *(p for n, p in PRICE_MODELS.items() if n != price.name)]
    rows = {config: (play(config, args.turns)) for config in CONFIGS}
    bills = {config: bill(recorded, prices) for config, recorded in rows.items()}
    eager = bills["eager"]
    table = Table(
        title=f"Example agent, {args.turns}-turn session (scope changes every turn), "
        f"billed input ({price.name} prices)"
    )
    for column in (
        "configuration",
        "calls",
        "raw input",
        "billed input",
        "vs eager",
        "cache hit",
        *(f"vs eager, {p.name}" for p in prices[1:]),
    ):
        table.add_column(column, justify="left" if column == "configuration" else "right")
    for config, totals in bills.items():
        mine = totals[price.name]
        table.add_row(
            config,
            str(len(rows[config])),
            f"{mine.input_tokens:,.0f}",
            f"{mine.billed:,.0f}",
            f"{mine.billed / eager[price.name].billed:.1%}",
            f"{mine.hit_ratio:.1%}" if mine.input_tokens else "-",
            *(f"{totals[p.name].billed / eager[p.name].billed:.1%}" for p in prices[1:]),
        )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
