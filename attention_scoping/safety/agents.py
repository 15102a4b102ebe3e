"""A sub-agent bound to capability manifests: it sees and can run their tools and no others."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware
from langchain_core.language_models import BaseChatModel

from attention_scoping.safety.adapters import manifest_prompt
from attention_scoping.safety.intents import IntentGuard
from attention_scoping.safety.manifests import CapabilityManifest, ManifestConfigError
from attention_scoping.safety.middleware import AccountResolver, ManifestMiddleware, default_account

__all__ = ["create_manifest_agent"]


def create_manifest_agent(
    model: str | BaseChatModel,
    manifests: Sequence[CapabilityManifest],
    *,
    guard: IntentGuard | None = None,
    system_prompt: str | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    allow: Iterable[str] = (),
    account: AccountResolver = default_account,
    **kwargs: Any,
) -> Any:
    """`create_agent` for a worker bound to `manifests`: nothing else is shown or executable.

    The system prompt starts with the manifests' namespaces, descriptions and prompts and the
    two-phase rule for writes, then your `system_prompt`. `ManifestMiddleware` is the first
    (outermost) middleware, so tools that later middleware register are hidden and refused
    too, unless named in `allow`.

    Args:
        model: Chat model or `"provider:model"` string.
        manifests: What the agent may touch.
        guard: `IntentGuard` for write tools (required when a manifest has writes).
        system_prompt: Your instructions, appended after the manifest description.
        middleware: More middleware, inside the manifest binding.
        allow: Other tool names this agent may still see and call.
        account: Who the agent's writes act for (part of every intent hash).
        **kwargs: Passed to `create_agent` (`checkpointer`, `context_schema`, `name`, ...).

    Raises:
        ManifestConfigError: no manifest, duplicate namespaces, writes without a guard, or
            `tools=` given (an agent bound to manifests takes its tools from them).
    """
    if "tools" in kwargs:
        msg = "create_manifest_agent takes its tools from the manifests; do not pass tools="
        raise ManifestConfigError(msg)
    binding = ManifestMiddleware(manifests, guard=guard, allow=allow, account=account)
    prompt = manifest_prompt(list(manifests))
    if system_prompt:
        prompt = f"{prompt}\n\n{system_prompt}"
    return create_agent(model, system_prompt=prompt, middleware=[binding, *middleware], **kwargs)
