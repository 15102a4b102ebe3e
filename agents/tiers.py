"""The example's other tiers: always-on tools, a write tool behind approval, and the gateway.

`get_knowledge` and `logout` are visible in every scope (`always_on`); `propose_glossary_term`
is a write tool of the translation scope (`metadata={"risk": "write"}`), so
`ApprovalMiddleware` pauses the graph with a signed single-use token before it runs; in gateway
mode the three gateway tools replace the scoped ones. `approval_card` renders the interrupt for
the terminal, and `gateway_policy` lets the offline tour's script drive the gateway.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from rich.panel import Panel
from rich.text import Text

from agents import build_scopes
from attention_scoping.approval.middleware import ApprovalGate
from attention_scoping.safety.keys import SECRET_ENV
from attention_scoping.safety.tokens import TokenIssuer
from attention_scoping.scopes import Scope
from attention_scoping.testing import calls, tool_call

KNOWLEDGE = {
    "scopes": "Three scopes: math (calculate, statistics, units), translation (language facts, "
    "number formats, the glossary) and weather (Open-Meteo current weather and forecasts).",
    "privacy": "Nothing is stored between sessions; weather questions send the city name to "
    "Open-Meteo.",
    "glossary": "New glossary terms are proposed with propose_glossary_term and need a "
    "reviewer's approval before they are recorded.",
}

PROPOSALS: list[dict[str, str]] = []
"""Glossary terms proposed (and approved) in this process."""


@tool
def get_knowledge(topic: str) -> str:
    """Answer questions about this assistant itself: its scopes, privacy and the glossary.

    Args:
        topic: One of "scopes", "privacy" or "glossary" (or words close to them).
    """
    key = next((k for k in KNOWLEDGE if k in topic.lower()), None)
    if key is None:
        return f"no entry for {topic!r}; topics: {', '.join(KNOWLEDGE)}"
    return KNOWLEDGE[key]


@tool
def logout() -> str:
    """End the user's session when they say goodbye or ask to log out."""
    return "session ended; say goodbye to the user"


@tool(parse_docstring=True)
def propose_glossary_term(term: str, language: str, translation: str) -> str:
    """Record a new approved translation of a term in the project glossary (a write: a reviewer
    approves the exact call before it runs).

    Args:
        term: The English source term.
        language: Language code of the translation, e.g. "fr".
        translation: The approved translation.
    """
    PROPOSALS.append({"term": term, "language": language, "translation": translation})
    return f"recorded {term!r} -> {translation!r} ({language}) as glossary entry G-{len(PROPOSALS)}"


propose_glossary_term.metadata = {"risk": "write"}
get_knowledge.metadata = {"risk": "read"}

ALWAYS_ON: list[BaseTool] = [get_knowledge, logout]
"""Visible in every scope besides load_context."""

WRITE_TOOLS: list[BaseTool] = [propose_glossary_term]
"""Write tools: each call is approved by a human with a signed token before it runs."""


def approval_gate() -> ApprovalGate:
    """An approval gate signing with $ATTENTION_SCOPING_SECRET, or with a key made for this
    process when it is unset (tokens then verify only in this process, which is all a
    single-process example needs)."""
    secret = None if _secret_set() else secrets.token_hex(32)
    return ApprovalGate(TokenIssuer(secret), ttl=600)


def _secret_set() -> bool:
    return bool(os.environ.get(SECRET_ENV))


def approval_card(value: Mapping[str, Any], decision: str) -> Panel:
    """The approval request as a terminal card: tool, arguments, token and the decision."""
    args = json.dumps(value.get("args", {}), ensure_ascii=False, sort_keys=True)
    token = str(value.get("approval_token", ""))
    body = Text()
    body.append(f"{value.get('name')}", style="bold")
    body.append(f"  ({value.get('risk', 'write')})\n")
    body.append(f"arguments: {args}\n")
    body.append(f"token: {token[:24]}… (signed, single use, bound to these arguments)\n")
    body.append(decision, style="bold green" if decision.startswith("approved") else "bold red")
    return Panel(body, title="approval required", expand=False, style="yellow")


Policy = Callable[[list[BaseMessage], list[str]], AIMessage]


def gateway_policy(policy: Policy, needs: Mapping[str, str]) -> Policy:
    """The tour's script in gateway mode: search the catalog for the tool the scripted step
    would call, then run it through `execute_tool`, then answer from the payload's result."""

    def step(messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
        since = _since_user(messages)
        scripted = policy(_as_direct(messages), sorted(set(needs.values())))
        if not scripted.tool_calls:
            return scripted
        call = scripted.tool_calls[0]
        searched = any(
            isinstance(m, ToolMessage) and m.name == "search_tool_catalog" for m in since
        )
        if not searched:
            return calls(tool_call("search_tool_catalog", {"query": _question(messages)}))
        return calls(
            tool_call("execute_tool", {"tool_name": call["name"], "arguments": call["args"]})
        )

    return step


def _since_user(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].type == "human":
            return list(messages[i + 1 :])
    return list(messages)


def _question(messages: Sequence[BaseMessage]) -> str:
    return next((m.text for m in reversed(messages) if m.type == "human"), "")


def _as_direct(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation as the direct-call script reads it: an `execute_tool` call and its
    result become a call of the tool itself and its plain result."""
    out: list[BaseMessage] = []
    names: dict[str, str] = {}
    for m in messages:
        if isinstance(m, AIMessage) and m.tool_calls:
            direct = [c for c in m.tool_calls if c["name"] == "execute_tool"]
            if not direct:
                continue  # a search step: not a step of the direct script
            for c in direct:
                names[str(c["id"])] = str(c["args"].get("tool_name"))
            out.append(
                calls(
                    *(
                        tool_call(
                            str(c["args"]["tool_name"]),
                            dict(c["args"].get("arguments") or {}),
                            str(c["id"]),
                        )
                        for c in direct
                    )
                )
            )
        elif isinstance(m, ToolMessage):
            if m.tool_call_id not in names:
                continue
            payload = _payload(str(m.content))
            ok = payload.get("status") == "ok"
            content = payload.get("result") if ok else payload.get("message", m.content)
            out.append(
                ToolMessage(
                    str(content),
                    tool_call_id=m.tool_call_id,
                    name=names[m.tool_call_id],
                    status="success" if ok else "error",
                )
            )
        else:
            out.append(m)
    return out


def _payload(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


__all__ = [
    "ALWAYS_ON",
    "PROPOSALS",
    "WRITE_TOOLS",
    "approval_card",
    "approval_gate",
    "catalog_tools",
    "gateway_policy",
    "get_knowledge",
    "logout",
    "propose_glossary_term",
    "tiered_scopes",
]


def tiered_scopes() -> list[Scope]:
    """The example's three scopes, the translation scope with the write tool added."""
    return [
        Scope(
            s.name,
            s.description,
            tools=[*s.tool_objects, *(WRITE_TOOLS if s.name == "translation" else ())],
            prompt=s.prompt,
        )
        for s in build_scopes()
    ]


def catalog_tools() -> list[BaseTool]:
    """Every scoped tool and the write tool: the gateway's catalog in gateway mode."""
    return [t for s in tiered_scopes() for t in s.tool_objects]
