"""Example agent: three scopes (math, translation, weather) behind AttentionScopingMiddleware.

Live against OpenRouter (OPENROUTER_API_KEY) or any OpenAI-compatible server (--base-url);
without a key it runs an offline tour: the real middleware and tools, driven by a scripted model.

    python example_agent.py                      # interactive (tour if no key is set)
    python example_agent.py --demo               # the scripted three-turn tour, offline
    python example_agent.py --once "What is 47 times 83?"
    python example_agent.py --base-url http://127.0.0.1:8080/v1 --model local
    python example_agent.py --demo --gate 1       # also gate each scope's tools by intent
    python example_agent.py --demo --tiers        # + always-on tools, a write tool behind approval
    python example_agent.py --demo --gateway      # the tools behind a ToolGateway instead
    langgraph dev                                 # the LangGraph server (see langgraph.json)
    python example_agent.py --base-url URL  # a local server (text tool calls converted)
    python example_agent.py --base-url URL --no-text-tool-calls   # leave text calls as text
    python example_agent.py --mcp mcp.json        # your MCP servers as more scopes (docs/mcp.md)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from agents import CORE_PROMPT, build_scopes
from agents.tiers import (
    ALWAYS_ON,
    approval_card,
    approval_gate,
    catalog_tools,
    gateway_policy,
    tiered_scopes,
)
from agents.tour import NEEDS, TOUR_TURNS, WRITE_TURN, tour_can_answer, tour_model, tour_policy
from attention_scoping import LOAD_CONTEXT, AttentionScopingMiddleware, Scope, ScopeConfigError
from attention_scoping.approval.middleware import WRITE_TOOLS_PROMPT, ApprovalMiddleware
from attention_scoping.common.extras import GATE_EXTRA_HINT, install_hint
from attention_scoping.common.tokens import get_counter
from attention_scoping.gateway import (
    EXECUTE_TOOL,
    GET_TOOL_SCHEMA,
    SEARCH_TOOL_CATALOG,
    GatewayRoutingMiddleware,
    ToolGateway,
)
from attention_scoping.hesitation import GatewayTools, HesitationMiddleware, Radar
from attention_scoping.hesitation.repeats import RepeatedCallMiddleware
from attention_scoping.observe.tax import tool_tokens
from attention_scoping.prompt import Layout
from attention_scoping.testing import ScriptedChatModel
from attention_scoping.textcalls import TextToolCallMiddleware

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
        help="environment variable holding the key (default: OPENROUTER_API_KEY; with "
        "--base-url, OPENAI_API_KEY, else OPENROUTER_API_KEY, else no key)",
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
    parser.add_argument(
        "--tiers",
        action="store_true",
        help="show every tier: always-on get_knowledge and logout, and a write tool "
        "(propose_glossary_term) behind a signed approval, shown as a card",
    )
    parser.add_argument(
        "--gateway",
        action="store_true",
        help="serve the tools through a ToolGateway (search, schema, execute) instead of "
        "scopes; implies --tiers",
    )
    parser.add_argument(
        "--prompt-layout",
        choices=("compact", "layered"),
        default="compact",
        help="compact (default, measured best on a small local model): the agent's own prompt "
        "alone, scopes described in load_context; layered: capability index, core and the "
        "active module in the system prompt (docs/scoping.md)",
    )
    parser.add_argument(
        "--text-tool-calls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run tool calls the model writes as text (a fenced JSON block, <tool_call> tags) "
        "when they name a tool it was offered, as local servers often return them (llama.cpp "
        "with Qwen2.5-Coder); default: on with --base-url, off for OpenRouter",
    )
    parser.add_argument(
        "--digest-turns",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show earlier turns to the model as a digest in front of the new question "
        "(TurnDigestMiddleware): a small local model then calls the tool a later question "
        "needs instead of answering from memory; default: on when text tool calls are run",
    )
    parser.add_argument(
        "--record-requests",
        metavar="FILE",
        help="append every model request to FILE (JSON lines), to price the session with "
        "'attention-scoping bill FILE' (docs/cost.md)",
    )
    parser.add_argument(
        "--mcp",
        metavar="CONFIG",
        help='an MCP client configuration ({"mcpServers": ...}): each server becomes a scope, '
        "started only when the model loads it (needs the 'mcp' extra)",
    )
    return parser.parse_args(argv)


def text_tool_calls(args: argparse.Namespace) -> bool:
    """Whether text tool calls are converted: as asked, else on for a local server
    (`--base-url`: llama.cpp, Ollama and vLLM often return a small model's call as text) and off
    for OpenRouter (providers return real tool calls; text that merely quotes one stays text)."""
    if args.text_tool_calls is not None:
        return bool(args.text_tool_calls)
    return bool(args.base_url)


def digest_turns(args: argparse.Namespace) -> bool:
    """Whether earlier turns reach the model as a digest: as asked, else with text tool calls
    (the small local model's set-up, where it was measured: docs/example-agent.md)."""
    if args.digest_turns is not None:
        return bool(args.digest_turns)
    return text_tool_calls(args)


def live_model(args: argparse.Namespace) -> BaseChatModel:
    """ChatOpenAI pointed at OpenRouter or at `--base-url`."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        msg = f"live mode needs langchain-openai: {install_hint('openai')}"
        raise SetupError(msg) from exc
    env, key = api_key(args)
    if not key and not args.base_url:
        msg = f"${env} is not set; export it, or run the offline tour with --demo"
        raise SetupError(msg)
    return ChatOpenAI(
        model=args.model,
        base_url=args.base_url or OPENROUTER_URL,
        api_key=SecretStr(key or "not-needed"),  # keyless local servers ignore the bearer
        temperature=0,
        timeout=args.timeout,
        max_retries=1,
    )


def key_variables(args: argparse.Namespace) -> tuple[str, ...]:
    """The environment variables the key is read from, in order."""
    if args.api_key_env:
        return (args.api_key_env,)
    if args.base_url:
        return ("OPENAI_API_KEY", "OPENROUTER_API_KEY")
    return ("OPENROUTER_API_KEY",)


def api_key(args: argparse.Namespace) -> tuple[str, str | None]:
    """The first set key variable and its value (else the first variable's name and None)."""
    names = key_variables(args)
    for name in names:
        if os.environ.get(name):
            return name, os.environ[name]
    return names[0], None


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
        reason = str(exc.__cause__ or exc).rstrip(".")
        return f"cannot reach {endpoint}: {reason}. Is the network or server up?"
    if isinstance(exc, openai.APIStatusError):
        return f"{endpoint} answered HTTP {exc.status_code}: {_one_line(exc.message)}"
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError) or (
        isinstance(exc, ValueError) and "Unexpected response type" in str(exc)
    ):
        return (
            f"{endpoint} did not answer like an OpenAI-compatible API (not chat-completions "
            f"JSON: {_one_line(str(exc))}). Is --base-url the API root, e.g. ending in /v1?"
        )
    return None


def _one_line(text: str, limit: int = 160) -> str:
    """`text` on one line, cut to `limit` characters (an HTML error page, say)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def usage_text(message: Any) -> str | None:
    """What a model call was billed for, from LangChain's `usage_metadata`: input tokens, the
    part read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic
    `cache_read_input_tokens`), the part written to it (Anthropic), and output tokens."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    total = int(usage.get("input_tokens", 0))
    read = int(details.get("cache_read", 0) or 0)
    written = int(details.get("cache_creation", 0) or 0)
    share = f" = {read / total:.0%}" if total else ""
    text = f"input {total:,} tokens (cached {read:,}{share}"
    text += f", cache write {written:,})" if written else ")"
    return text + f", output {int(usage.get('output_tokens', 0)):,}"


class TurnView:
    """Renders one turn: per model call the active context, visible tools and tool tokens."""

    def __init__(
        self,
        console: Console,
        tools: Sequence[BaseTool],
        gated: bool = False,
        *,
        auto_approve: bool = False,
    ) -> None:
        self.console = console
        self.gated = gated
        self.auto_approve = auto_approve
        """Approve write tools without asking (the offline tour, labelled on the card)."""
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
        chosen = event.get("opened_by") == "code"  # the selector opened it: reads only
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
        if event.get("reason") == "ungrounded":
            tag = f"answered without a tool, {tag}"
        self.console.print(Text(f"    ⋯ thinking ({tag}): {short}", style="dim italic"))

    def resume(self, interrupts: Sequence[Any]) -> Command[Any]:
        """Show each approval request as a card and answer it: the tour approves by itself
        (labelled), a terminal asks the user, anything else rejects (nobody to ask)."""
        answers: dict[str, Any] = {}
        for item in interrupts:
            value = item.value if isinstance(item.value, dict) else {}
            answer, label = self.decide(value)
            self.console.print(approval_card(value, label))
            answers[item.id] = answer
        return Command(resume=answers)

    def decide(self, value: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The resume value for one approval request and the line the card shows."""
        token = value.get("approval_token")
        if self.auto_approve:
            return {"type": "approve", "token": token}, "approved automatically (offline tour)"
        if sys.stdin.isatty():
            prompt = f"  approve {value.get('name')}? [y/N] "
            reply = self.console.input(escape(prompt)).strip().lower()  # keep [y/N] literal
            if reply in {"y", "yes"}:
                return {"type": "approve", "token": token}, "approved by you"
            return {"type": "reject", "message": "the user declined"}, "rejected by you"
        reason = "rejected: no terminal to ask for approval"
        return {"type": "reject", "message": reason}, reason

    def message(self, message: Any) -> None:
        """Tool calls, tool results (dimmed) and the final answer; per model call, its usage."""
        usage = usage_text(message) if isinstance(message, AIMessage) else None
        if usage is not None:
            self.console.print(Text(f"    $ {usage}", style="dim cyan"))
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


def run_turn(
    agent: Any, view: TurnView, question: str, config: dict[str, Any], *, echo: bool = True
) -> str | None:
    """Stream one user turn through the agent and render it; returns the active context
    (`echo=False` when the terminal already shows the line the user typed)."""
    if echo:
        view.console.print(Text(f"You: {question}", style="bold green"))
    payload: Any = {"messages": [HumanMessage(question)]}
    while payload is not None:
        interrupts = stream_once(agent, view, payload, config)
        payload = view.resume(interrupts) if interrupts else None
    active = agent.get_state(config).values.get("active_context")
    view.console.print(Text(f"  [active_context = {active or 'none'}]", style="bold magenta"))
    return active


def stream_once(agent: Any, view: TurnView, payload: Any, config: dict[str, Any]) -> list[Any]:
    """Stream one run (a user turn or a resume) and render it; returns its interrupts."""
    interrupts: list[Any] = []
    for mode, chunk in agent.stream(payload, config, stream_mode=["custom", "updates"]):
        kind = chunk.get("type") if mode == "custom" and isinstance(chunk, dict) else None
        if kind == "scope":
            view.scope(chunk)
        elif kind == "gate":
            view.gate(chunk)
        elif kind == "think":
            view.think(chunk)
        elif mode == "updates":
            interrupts.extend(chunk.get("__interrupt__", ()))
            for update in chunk.values():
                for message in (
                    (update or {}).get("messages", []) if isinstance(update, dict) else []
                ):
                    view.message(message)
    return interrupts


def mcp_scopes(config: str, taken: set[str]) -> tuple[list[Scope], Any]:
    """The scopes of the MCP servers in `config` and the middleware that connects them
    (a server that cannot be listed is left out with a logged warning)."""
    try:
        from attention_scoping.mcp import McpConfigError, McpConnectMiddleware, McpServers
        from attention_scoping.mcp.faults import McpFault

        servers = McpServers(config, reserved_names=taken)
    except ImportError as exc:
        msg = f"--mcp needs the 'mcp' extra: {install_hint('mcp')} ({exc})"
        raise SetupError(msg) from exc
    except (McpConfigError, McpFault) as exc:
        raise SetupError(str(exc)) from exc
    return servers.scopes, McpConnectMiddleware(servers)


def build_agent(
    model: BaseChatModel,
    gate_k: int | None = None,
    *,
    in_memory: bool = True,
    tiers: bool = False,
    mcp: str | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    prompt_layout: Layout = "compact",
    record_requests: str | None = None,
    text_calls: bool = False,
    digest: bool = False,
) -> tuple[Any, AttentionScopingMiddleware]:
    """The example agent: three scopes (plus one per MCP server with `mcp`), optionally a gate
    inside them, the hesitation radar, the core prompt and an in-memory checkpointer
    (middleware order: scoping, MCP connection, gate, radar).
    `checkpointer` replaces the in-memory one (`PostgresSaver`, say; docs/deploy.md);
    `in_memory=False` leaves persistence to the host (the LangGraph server brings its own);
    `tiers=True` adds the always-on tools and the write tool behind `ApprovalMiddleware`;
    `prompt_layout` is the system prompt's layout (default compact); `record_requests` appends
    every model request to that session file (`attention-scoping bill`); `text_calls=True` adds
    `TextToolCallMiddleware` innermost, so a call written as text naming a tool the model was
    offered runs (and the radar judges the converted reply); `digest=True` shows earlier turns
    to the model as a digest (`TurnDigestMiddleware`)."""
    scopes = tiered_scopes() if tiers else build_scopes()
    extra: list[Any] = []
    if mcp is not None:
        taken = {LOAD_CONTEXT} | {t for s in scopes for t in s.tools}
        more, connect = mcp_scopes(mcp, taken)
        scopes, extra = [*scopes, *more], [connect]
    try:
        always_on = ALWAYS_ON if tiers else ()
        scoping = AttentionScopingMiddleware(scopes, always_on=always_on, layout=prompt_layout)
    except ScopeConfigError as exc:
        msg = f"--mcp: {exc}"
        raise SetupError(msg) from exc
    middleware: list[Any] = [scoping, *extra]
    if gate_k is not None:
        try:
            from attention_scoping.gating import ToolAttentionMiddleware
        except ImportError as exc:
            msg = f"--gate needs the 'gate' extra: {GATE_EXTRA_HINT} ({exc})"
            raise SetupError(msg) from exc
        middleware.append(ToolAttentionMiddleware(k=gate_k, summary_pool="scope"))
    middleware += [HesitationMiddleware(), RepeatedCallMiddleware()]
    if tiers:
        middleware.append(ApprovalMiddleware(approval_gate()))  # last: refused calls never ask
    middleware.extend(digest_layer(digest))
    middleware.extend(request_log(record_requests))
    middleware.extend(text_call_layer(text_calls))
    prompt = f"{CORE_PROMPT}\n\n{WRITE_TOOLS_PROMPT}" if tiers else CORE_PROMPT
    agent = create_agent(
        model,
        system_prompt=prompt,
        middleware=middleware,
        checkpointer=checkpointer or (InMemorySaver() if in_memory else None),
    )
    return agent, scoping


def digest_layer(enabled: bool) -> list[Any]:
    """`[TurnDigestMiddleware()]` when earlier turns are shown as a digest, else nothing (after
    scoping and the radar, so it folds the request they prepared)."""
    if not enabled:
        return []
    from attention_scoping.history import TurnDigestMiddleware

    return [TurnDigestMiddleware()]


def request_log(path: str | None) -> list[Any]:
    """`[RequestLogMiddleware(path)]` when a session file is asked for, else nothing."""
    if path is None:
        return []
    from attention_scoping.observe.request_log import RequestLogMiddleware

    return [RequestLogMiddleware(path)]


def text_call_layer(enabled: bool) -> list[Any]:
    """`[TextToolCallMiddleware()]` when text tool calls are converted, else nothing (last in
    the list: innermost, it sees the tools the other middleware left visible)."""
    return [TextToolCallMiddleware()] if enabled else []


def build_gateway_agent(
    model: BaseChatModel, *, record_requests: str | None = None, text_calls: bool = False
) -> tuple[Any, list[BaseTool]]:
    """Gateway mode: every scoped tool and the write tool behind one `ToolGateway` (search,
    schema, execute; the write tool asks for approval inside execute_tool), plus the always-on
    tools; returns the agent and the tools the model is sent."""
    gateway = ToolGateway(catalog_tools(), approval=approval_gate())
    tools = [*gateway.tools, *ALWAYS_ON]
    agent = create_agent(
        model,
        tools=tools,
        system_prompt=CORE_PROMPT + "\n\n" + gateway.prompt(pool=True),
        middleware=gateway_middleware(
            gateway, record_requests=record_requests, text_calls=text_calls
        ),
        checkpointer=InMemorySaver(),
    )
    return agent, tools


def gateway_middleware(
    gateway: ToolGateway, *, record_requests: str | None = None, text_calls: bool = False
) -> list[Any]:
    """The gateway agent's middleware: the radar, the repeat guard (told which catalog tools
    read, as they run inside `execute_tool`), the routing, which also converts text calls when
    `text_calls` (the one layer that does: catalog names and offered ones), then the request
    log."""
    radar = Radar(gateway=GatewayTools(GET_TOOL_SCHEMA, EXECUTE_TOOL, SEARCH_TOOL_CATALOG))
    return [
        HesitationMiddleware(radar=radar),
        RepeatedCallMiddleware(reads=gateway.reads, execute_tool=EXECUTE_TOOL),
        GatewayRoutingMiddleware(gateway, parse_text_calls=text_calls),
        *request_log(record_requests),
    ]


GATEWAY_SENT = ("search_tool_catalog", "get_tool_schema", "execute_tool", "get_knowledge", "logout")
"""The tools the model is sent in gateway mode."""


def offline_model(args: argparse.Namespace) -> BaseChatModel:
    """The offline tour's scripted model (in gateway mode, driving the gateway's tools)."""
    if args.gateway:
        return ScriptedChatModel(policy=gateway_policy(tour_policy, NEEDS), label="demo tour")
    return tour_model()


def build_for(
    args: argparse.Namespace, model: BaseChatModel, console: Console, *, auto_approve: bool
) -> tuple[Any, TurnView]:
    """The agent the options ask for and its terminal view."""
    check_options(args)
    if args.gateway:
        if args.gate is not None:
            msg = "--gate and --gateway are two ways to narrow tools: pick one"
            raise SetupError(msg)
        if args.mcp is not None:
            msg = "--mcp adds servers as scopes; it does not combine with --gateway"
            raise SetupError(msg)
        agent, sent = build_gateway_agent(
            model, record_requests=args.record_requests, text_calls=text_tool_calls(args)
        )
        shown = [*catalog_tools(), *sent]
        return agent, TurnView(console, shown, auto_approve=auto_approve)
    agent, scoping = build_agent(
        model,
        args.gate,
        tiers=args.tiers,
        mcp=args.mcp,
        prompt_layout=args.prompt_layout,
        record_requests=args.record_requests,
        text_calls=text_tool_calls(args),
        digest=digest_turns(args),
    )
    view = TurnView(console, scoping.tools, gated=args.gate is not None, auto_approve=auto_approve)
    return agent, view


def check_options(args: argparse.Namespace) -> None:
    """Refuse a `--gate` below 1 and a `--record-requests` file that cannot be written where
    it is named (no folder is created that the user did not name).

    Raises:
        SetupError: one line naming the option and the value.
    """
    if args.gate is not None and args.gate < 1:
        msg = f"--gate K must be at least 1 (the tools shown with full schemas), not {args.gate}"
        raise SetupError(msg)
    if args.record_requests is None:
        return
    target = Path(args.record_requests)
    where = f"--record-requests {args.record_requests}"
    if target.is_dir():
        msg = f"{where}: is a folder, expected a file name"
        raise SetupError(msg)
    folder = target.parent
    trail = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    if trail.exists() and not trail.is_dir():
        msg = f"{where}: {trail} is not a folder"
        raise SetupError(msg)
    if not folder.exists():
        msg = f"{where}: the folder {folder} does not exist"
        raise SetupError(msg)
    if not os.access(folder, os.W_OK | os.X_OK):
        msg = f"{where}: cannot write in {folder} (permission denied)"
        raise SetupError(msg)


def make_graph(config: RunnableConfig | None = None) -> Any:
    """The example agent for the LangGraph server (`langgraph dev`, LangGraph Studio; named in
    langgraph.json): a live model when $OPENROUTER_API_KEY is set, else the offline tour's
    scripted model. The server brings the checkpointer (in memory, or PostgreSQL)."""
    args = parse_args([])
    model = live_model(args) if api_key(args)[1] else tour_model()
    return build_agent(model, in_memory=False)[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tour, one question, or an interactive chat; returns the exit code."""
    args = parse_args(argv)
    console = Console()
    key_env, key = api_key(args)
    demo = args.demo or (not args.base_url and not key)
    endpoint = args.base_url or OPENROUTER_URL
    if demo and args.once and not args.demo and not tour_can_answer(args.once):
        print_error(
            console,
            f"${key_env} is not set, so only the offline tour can run, and it plays just its "
            "three turns (arithmetic, translating the answer, the weather). Set the key, "
            "point --base-url at a server, or run --demo.",
        )
        return EXIT_USAGE
    try:
        model = offline_model(args) if demo else live_model(args)
        agent, view = build_for(args, model, console, auto_approve=demo)
    except SetupError as exc:
        print_error(console, str(exc))
        return EXIT_USAGE
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
            f"{len(set(view.tools) - {LOAD_CONTEXT})} tools, {view.all_tokens:,} tool-schema "
            "tokens per call if all "
            f"were sent ({view.counter.label}); model: "
            + ("scripted tour" if demo else f"{args.model} at {endpoint}")
            + ("" if demo or not key else f" (key from ${key_env})"),
            style="dim",
        )
    )
    if args.gateway:
        sent = [n for n in view.tools if n in GATEWAY_SENT]
        console.print(
            Text(
                f"gateway mode: the model is sent {', '.join(sent)}: "
                f"{view.tokens_for(sent):,} tool-schema tokens per call",
                style="dim",
            )
        )
    turns = [*TOUR_TURNS, WRITE_TURN] if args.tiers or args.gateway else list(TOUR_TURNS)
    questions = [args.once] if args.once else (turns if demo else None)
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
                run_turn(agent, view, question, config, echo=not sys.stdin.isatty())
    except Exception as exc:
        explanation = explain_api_error(exc, endpoint)
        if explanation is None:
            raise
        print_error(console, explanation)
        return EXIT_USAGE


def print_error(console: Console, message: str) -> None:
    """One `error: ...` line, never wrapped (a log or a test reads it whole)."""
    console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)


if __name__ == "__main__":
    sys.exit(main())
