"""Example agent: three scopes (math, translation, weather) behind AttentionScopingMiddleware.

Live against OpenRouter (OPENROUTER_API_KEY) or any OpenAI-compatible server (--base-url);
without a key it runs an offline tour: the real middleware and tools, driven by a scripted model.

    python example_agent.py                      # interactive (tour if no key is set)
    python example_agent.py --demo               # the scripted three-turn tour, offline
    python example_agent.py --once "What is 47 times 83?"
    python example_agent.py --base-url http://127.0.0.1:8080/v1 --model local
    python example_agent.py --demo --gate 1       # also gate each scope's tools by intent
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from agents import CORE_PROMPT, build_scopes
from agents.tour import TOUR_TURNS, tour_model
from attention_scoping import LOAD_CONTEXT, AttentionScopingMiddleware
from attention_scoping.core.tokens import get_counter
from attention_scoping.hesitation.middleware import HesitationMiddleware
from attention_scoping.measure.tax import tool_tokens

OPENROUTER_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "openai/gpt-4o-mini"
EXIT_USAGE = 2


class SetupError(Exception):
    """A problem the user can fix (missing key, unreachable endpoint); printed without traceback."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Attention-scoping example agent (math, translation, weather)."
    )
    parser.add_argument("--demo", action="store_true", help="run the offline scripted tour")
    parser.add_argument("--once", metavar="QUESTION", help="answer one question and exit")
    parser.add_argument(
        "--model",
        default=os.environ.get("OPENROUTER_MODEL", DEFAULT_MODEL),
        help=f"model id (default: $OPENROUTER_MODEL or {DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--base-url",
        help="any OpenAI-compatible endpoint (llama.cpp, Ollama, vLLM) instead of OpenRouter",
    )
    parser.add_argument(
        "--api-key-env",
        default=None,
        help="environment variable holding the key (default: OPENROUTER_API_KEY, or "
        "OPENAI_API_KEY with --base-url)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="model call timeout (s)")
    parser.add_argument(
        "--gate",
        type=int,
        metavar="K",
        nargs="?",
        const=2,
        default=None,
        help="also gate tools by intent inside each scope: full schemas for the top K "
        "(default 2); the others are loaded on first use (needs the 'gate' extra)",
    )
    return parser.parse_args(argv)


def live_model(args: argparse.Namespace) -> BaseChatModel:
    """ChatOpenAI pointed at OpenRouter or at `--base-url`."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        msg = "live mode needs langchain-openai: pip install -e '.[openai]'"
        raise SetupError(msg) from exc
    env = args.api_key_env or ("OPENAI_API_KEY" if args.base_url else "OPENROUTER_API_KEY")
    key = os.environ.get(env)
    if not key and not args.base_url:
        msg = f"${env} is not set; export it, or run the offline tour with --demo"
        raise SetupError(msg)
    return ChatOpenAI(
        model=args.model,
        base_url=args.base_url or OPENROUTER_URL,
        api_key=SecretStr(key or "not-needed"),  # local servers usually ignore the key
        temperature=0,
        timeout=args.timeout,
        max_retries=1,
    )


def explain_api_error(exc: Exception, endpoint: str) -> str | None:
    """A one-line explanation of a provider error, or None when it is not one we know."""
    try:
        import openai
    except ImportError:
        return None
    if isinstance(exc, openai.AuthenticationError):
        return f"{endpoint} rejected the API key (HTTP 401). Check the key and try again."
    if isinstance(exc, openai.PermissionDeniedError):
        return f"{endpoint} refused the request (HTTP 403): {exc.message}"
    if isinstance(exc, openai.NotFoundError):
        return f"{endpoint} does not know this model or path (HTTP 404): {exc.message}"
    if isinstance(exc, openai.RateLimitError):
        return f"{endpoint} is rate-limiting or out of credit (HTTP 429): {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return f"{endpoint} did not answer in time; try --timeout or another model."
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot reach {endpoint}: {exc.__cause__ or exc}. Is the network or server up?"
    if isinstance(exc, openai.APIStatusError):
        return f"{endpoint} answered HTTP {exc.status_code}: {exc.message}"
    return None


class TurnView:
    """Renders one turn: per model call the active context, visible tools and tool tokens."""

    def __init__(self, console: Console, tools: Sequence[BaseTool], gated: bool = False) -> None:
        self.console = console
        self.gated = gated
        self._context: str | None = None
        self._note = ""
        self.tools = {t.name: t for t in tools}
        self.counter = get_counter()
        # The baseline is an unscoped agent: every tool, and no load_context.
        everything = [t for name, t in self.tools.items() if name != LOAD_CONTEXT]
        self.all_tokens = tool_tokens(everything, self.counter)
        self._cache: dict[tuple[str, ...], int] = {}

    def tokens_for(self, names: Sequence[str]) -> int:
        """Tool-schema tokens of the named tools, as sent."""
        key = tuple(names)
        if key not in self._cache:
            sent = [self.tools[n] for n in names if n in self.tools]
            self._cache[key] = tool_tokens(sent, self.counter)
        return self._cache[key]

    def scope(self, event: dict[str, Any]) -> None:
        """One line per model call: context, tools, tokens sent versus all tools (with a gate,
        the line waits for the gate's event, which says what was finally sent)."""
        self._context = event["active_context"]
        chosen = (event.get("preselect") or {}).get("reason") == "confident"
        self._note = "  (pre-selected from the message)" if chosen else ""
        if not self.gated:
            self.call_line(event["active_context"], event["tools"], self._note)

    def call_line(self, context: str | None, names: Sequence[str], note: str = "") -> None:
        """The per-call line: context, the tools the model got, their schema tokens."""
        sent = self.tokens_for(names)
        share = sent / self.all_tokens if self.all_tokens else 0.0
        line = Text("  ▸ model call  ", style="bold cyan")
        line.append(f"context: {context or 'none'}", style="bold")
        line.append(f"  tools: {', '.join(names)}", style="cyan")
        line.append(
            f"  tool schemas: {sent:,} of {self.all_tokens:,} tokens ({share:.0%})",
            style="magenta",
        )
        if note:
            line.append(note, style="cyan")
        self.console.print(line)

    def gate(self, event: dict[str, Any]) -> None:
        """The per-call line after the gate: the tools the model finally got."""
        hidden = event["candidates"] - len(event["shown"])
        pool = f" + summary pool {event['pool_tokens']} tokens" if event["pool_tokens"] else ""
        note = f"  (gate held back {hidden} of {event['candidates']}{pool})" if hidden else ""
        self.call_line(self._context, event["shown"], self._note + note)

    def think(self, event: dict[str, Any]) -> None:
        """A hidden stall, dimmed, with what the runtime did about it."""
        text = " ".join(str(event["content"]).split())
        short = text if len(text) <= 200 else text[:197] + "…"
        tag = f"{event['action']} {event['round']}/{event['max_nudges']}"
        self.console.print(Text(f"    ⋯ thinking ({tag}): {short}", style="dim italic"))

    def message(self, message: Any) -> None:
        """Tool calls, tool results (dimmed) and the final answer."""
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                args = ", ".join(f"{k}={v!r}" for k, v in call["args"].items())
                self.console.print(Text(f"    → {call['name']}({args})", style="yellow"))
        elif isinstance(message, ToolMessage):
            style = "red" if message.status == "error" else "dim"
            content = str(message.content)
            short = content if len(content) <= 220 else content[:217] + "…"
            self.console.print(Text(f"    ← {message.name}: {short}", style=style))
        elif isinstance(message, AIMessage):
            self.console.print(Panel(message.text or "(empty answer)", title="Agent", expand=False))


def run_turn(agent: Any, view: TurnView, question: str, config: dict[str, Any]) -> str | None:
    """Stream one user turn through the agent and render it; returns the active context."""
    view.console.print(Text(f"You: {question}", style="bold green"))
    for mode, chunk in agent.stream(
        {"messages": [HumanMessage(question)]}, config, stream_mode=["custom", "updates"]
    ):
        kind = chunk.get("type") if mode == "custom" and isinstance(chunk, dict) else None
        if kind == "scope":
            view.scope(chunk)
        elif kind == "gate":
            view.gate(chunk)
        elif kind == "think":
            view.think(chunk)
        elif mode == "updates":
            for update in chunk.values():
                for message in (
                    (update or {}).get("messages", []) if isinstance(update, dict) else []
                ):
                    view.message(message)
    active = agent.get_state(config).values.get("active_context")
    view.console.print(Text(f"  [active_context = {active or 'none'}]", style="bold magenta"))
    return active


def build_agent(
    model: BaseChatModel, gate_k: int | None = None
) -> tuple[Any, AttentionScopingMiddleware]:
    """The example agent: three scopes, optionally a gate inside them, the hesitation radar,
    the core prompt and an in-memory checkpointer (middleware order: scoping, gate, radar)."""
    scoping = AttentionScopingMiddleware(build_scopes())
    middleware: list[Any] = [scoping]
    if gate_k is not None:
        try:
            from attention_scoping.gating import ToolAttentionMiddleware
        except ImportError as exc:
            msg = f"--gate needs the 'gate' extra: pip install -e '.[gate]' ({exc})"
            raise SetupError(msg) from exc
        middleware.append(ToolAttentionMiddleware(k=gate_k, summary_pool="scope"))
    middleware.append(HesitationMiddleware())
    agent = create_agent(
        model, system_prompt=CORE_PROMPT, middleware=middleware, checkpointer=InMemorySaver()
    )
    return agent, scoping


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tour, one question, or an interactive chat; returns the exit code."""
    args = parse_args(argv)
    console = Console()
    demo = args.demo or (
        not args.base_url and not os.environ.get(args.api_key_env or "OPENROUTER_API_KEY")
    )
    endpoint = args.base_url or OPENROUTER_URL
    try:
        model = tour_model() if demo else live_model(args)
        agent, scoping = build_agent(model, args.gate)
    except SetupError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    view = TurnView(console, scoping.tools, gated=args.gate is not None)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    if demo:
        console.print(
            Panel(
                "OFFLINE TOUR: a scripted model stands in for the LLM (no API key set or "
                "--demo). The middleware, prompts and tools are the real ones; the weather "
                "tool really calls Open-Meteo and reports clearly when the network is "
                "unreachable. Set OPENROUTER_API_KEY to talk to a real model.",
                title="attention-scoping demo",
                style="yellow",
            )
        )
    console.print(
        Text(
            f"{len(view.tools) - 1} tools, {view.all_tokens:,} tool-schema tokens per call if all "
            f"were sent ({view.counter.label}); model: "
            + ("scripted tour" if demo else f"{args.model} at {endpoint}"),
            style="dim",
        )
    )
    questions = [args.once] if args.once else (list(TOUR_TURNS) if demo else None)
    try:
        if questions is not None:
            for question in questions:
                run_turn(agent, view, question, config)
            return 0
        while True:
            try:
                question = console.input("[bold green]You:[/bold green] ").strip()
            except (EOFError, KeyboardInterrupt):
                return 0
            if question.lower() in {"exit", "quit", ":q"}:
                return 0
            if question:
                run_turn(agent, view, question, config)
    except Exception as exc:
        explanation = explain_api_error(exc, endpoint)
        if explanation is None:
            raise
        console.print(f"[red]error:[/red] {escape(explanation)}")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
