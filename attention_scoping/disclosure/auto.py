"""`Auto`: the disclosure mode chosen per request from the chat model that will answer it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlparse

from langchain.agents.middleware.types import ModelRequest

from attention_scoping.disclosure.allowed import OpenAI
from attention_scoping.disclosure.native import Anthropic
from attention_scoping.middleware import Disclosed, Disclosure, Rewrite

OPENAI_HOSTS = frozenset({"api.openai.com"})
"""Hosts whose API honours `allowed_tools` (an OpenAI-compatible server elsewhere gets rewrite)."""


def class_names(model: object) -> set[str]:
    """The class names in `model`'s MRO (a provider's chat model recognised without importing
    its package)."""
    return {klass.__name__ for klass in type(model).__mro__}


def on_openai(model: object) -> bool:
    """Whether a `ChatOpenAI` talks to OpenAI itself (no base URL, or OpenAI's host)."""
    base = getattr(model, "openai_api_base", None)
    return not base or urlparse(str(base)).hostname in OPENAI_HOSTS


@dataclass(frozen=True)
class Auto:
    """Pick the mode from `request.model` on every call: `ChatAnthropic` -> `anthropic`,
    `ChatOpenAI` on OpenAI's API -> `openai`, any other model (an OpenAI-compatible local
    server included) -> `other` (default `Rewrite`). Nothing is kept between calls, so one
    instance serves agents on different chat models at once.

    Example:
        ```python
        AttentionScopingMiddleware(scopes, disclosure=Auto())
        ```
    """

    anthropic: Disclosure = field(default_factory=Anthropic)
    openai: Disclosure = field(default_factory=OpenAI)
    other: Disclosure = field(default_factory=Rewrite)
    mode: ClassVar[str] = "auto"

    def mode_for(self, model: Any) -> Disclosure:
        """The mode a request to `model` is disclosed in."""
        names = class_names(model)
        if "ChatAnthropic" in names:
            return self.anthropic
        if "ChatOpenAI" in names and on_openai(model):
            return self.openai
        return self.other

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """`request` disclosed by the mode its model picks (its name is in `Disclosed.mode`)."""
        return self.mode_for(request.model).disclose(request, shown)
