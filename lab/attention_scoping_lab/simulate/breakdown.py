"""Where a strategy's bill goes: billed input split by what the tokens are (the tools and system
prefix, the conversation, disclosed definitions, disclosure round trips) and by how they were
billed (cache reads, cache writes, uncached), per session.

Each call's bill is attributed to the blocks of its request by position: the first
`cache_read_tokens` are reads, the next `cache_write_tokens` writes, the rest uncached (a block
straddling a boundary is split in proportion). Inside a disclosure result (the search tool's or
`load_context`'s), the expanded definitions are separated from the payload text by their share
of the result's tokens.

    python -m attention_scoping_lab.simulate.breakdown --sessions 20 --turns 10 --price anthropic
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attention_scoping.common.tokens import get_counter
from attention_scoping_lab.cost import PRICE_MODELS, CallCost, Request, memo_count, price_model
from attention_scoping_lab.simulate.catalog import build_catalog
from attention_scoping_lab.simulate.conversation import Conversation
from attention_scoping_lab.simulate.session_strategies import SessionStrategy
from attention_scoping_lab.simulate.sessions import Session, build_sessions

DISCLOSING = frozenset({"search_tools", "tool_search", "load_context"})
"""Tools whose results disclose definitions (and whose calls are disclosure round trips)."""

PARTS = (
    "tools",
    "system",
    "user",
    "tool calls",
    "tool outputs",
    "answers",
    "disclosure calls",
    "disclosure text",
    "definitions",
)
"""What a billed token can be."""

HOW = ("read", "write", "uncached")

DEFAULT_STRATEGIES = (
    "conversation_only",
    "eager",
    "scoping",
    "per_call_gate",
    "gate_anthropic",
    "gate_anthropic_announced",
    "scoping_anthropic_whole",
    "gate_openai",
    "gate_openai_announced",
    "scoping_allowed_tools",
)


def definition_share(content: str, count: Callable[[str], int]) -> float:
    """Share of a disclosure result's tokens taken by the expanded definitions (its last line,
    a JSON list of definitions; 0 when there is none)."""
    _, _, last = content.rpartition("\n")
    try:
        defs = json.loads(last)
    except ValueError:
        return 0.0
    if not (isinstance(defs, list) and defs and isinstance(defs[0], Mapping)):
        return 0.0
    total = count(content)
    return count(last) / total if total else 0.0


def _classify(
    request: Request, count: Callable[[str], int], names: dict[str, str]
) -> list[list[tuple[str, float]]]:
    """Per block: (part, share) pairs summing to 1; `names` maps call ids to tool names."""
    out: list[list[tuple[str, float]]] = []
    for block in request.blocks:
        if block.kind != "message":
            out.append([("tools" if block.kind == "tool" else "system", 1.0)])
            continue
        message = json.loads(block.text)
        role = message.get("role")
        if role == "user":
            out.append([("user", 1.0)])
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                names[call["id"]] = call["name"]
            if not calls:
                out.append([("answers", 1.0)])
            elif any(c["name"] in DISCLOSING for c in calls):
                out.append([("disclosure calls", 1.0)])
            else:
                out.append([("tool calls", 1.0)])
        elif names.get(message.get("tool_call_id", "")) in DISCLOSING:
            share = definition_share(str(message.get("content", "")), count)
            out.append([("definitions", share), ("disclosure text", 1.0 - share)])
        else:
            out.append([("tool outputs", 1.0)])
    return out


def attribute(
    request: Request,
    cost: CallCost,
    billed: Mapping[str, float],
    parts: list[list[tuple[str, float]]],
) -> dict[tuple[str, str], float]:
    """The call's billed input by (part, how): tokens at positions below the cache read are
    reads, the next ones writes, the rest uncached; `billed` is the price of a token of each."""
    out: dict[tuple[str, str], float] = {}
    read_end = cost.cache_read_tokens
    write_end = read_end + cost.cache_write_tokens
    start = 0
    for block, shares in zip(request.blocks, parts, strict=True):
        end = start + block.tokens
        spans = {
            "read": max(0, min(end, read_end) - start),
            "write": max(0, min(end, write_end) - max(start, read_end)),
            "uncached": max(0, end - max(start, write_end)),
        }
        for how, tokens in spans.items():
            for part, share in shares:
                key = (part, how)
                out[key] = out.get(key, 0.0) + tokens * share * billed[how]
        start = end
    return out


def breakdown(
    strategy: SessionStrategy,
    sessions: Sequence[Session],
    price: str,
    count: Callable[[str], int],
) -> dict[str, Any]:
    """Billed input per session by part and by how, and the disclosure calls' share."""
    model = PRICE_MODELS[price]
    billed = {"read": model.cache_read, "write": model.cache_write, "uncached": 1.0}
    totals: dict[tuple[str, str], float] = {}
    disclosure_calls = 0.0
    for session in sessions:
        conv = Conversation([model], count, keep_requests=True)
        strategy.play(session, conv)
        names: dict[str, str] = {}
        for request, call in zip(conv.requests, conv.calls, strict=True):
            parts = _classify(request, count, names)
            cost = call.costs[model.name]
            for key, value in attribute(request, cost, billed, parts).items():
                totals[key] = totals.get(key, 0.0) + value
            calls = _reply(conv, request).get("tool_calls") or []
            if any(c["name"] in DISCLOSING for c in calls):
                disclosure_calls += cost.billed
    n = len(sessions)
    by_part = {p: sum(totals.get((p, h), 0.0) for h in HOW) / n for p in PARTS}
    by_how = {h: sum(totals.get((p, h), 0.0) for p in PARTS) / n for h in HOW}
    return {
        "total": sum(by_part.values()),
        "by_part": by_part,
        "by_how": by_how,
        "disclosure_call_requests": disclosure_calls / n,
    }


def _reply(conv: Conversation, request: Request) -> Mapping[str, Any]:
    """The message the model replied to `request` with (the one added right after it)."""
    at = sum(1 for b in request.blocks if b.kind == "message")
    return conv.rendered[at] if at < len(conv.rendered) else {}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the breakdown of the chosen strategies (and the floor), relative to eager."""
    from attention_scoping_lab.simulate.billing import build_strategies

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--price", default="anthropic", choices=sorted(PRICE_MODELS))
    parser.add_argument("--ranker", default="default")
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    price_model(args.price)
    counter = get_counter()
    count = memo_count(counter.count)
    specs = build_catalog(0, counter)
    sessions = build_sessions(0, args.sessions, args.turns)
    wanted = [n.strip() for n in args.strategies.split(",") if n.strip()]
    built = {s.name: s for s in build_strategies(specs, counter, args.ranker, None)}
    names = ["eager", *(n for n in wanted if n != "eager")]
    rows = {n: breakdown(built[n], sessions, args.price, count) for n in names}
    eager = rows["eager"]["total"]
    header = ["strategy", "total", "% eager", *PARTS, *HOW, "disclosure call requests"]
    print("\t".join(header))
    for n in names:
        r = rows[n]
        cells = [n, f"{r['total']:,.0f}", f"{100 * r['total'] / eager:.1f}"]
        cells += [f"{r['by_part'][p]:,.0f}" for p in PARTS]
        cells += [f"{r['by_how'][h]:,.0f}" for h in HOW]
        cells.append(f"{r['disclosure_call_requests']:,.0f}")
        print("\t".join(cells))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
