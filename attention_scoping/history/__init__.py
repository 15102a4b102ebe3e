"""What the model reads of earlier turns: a digest of them in front of the new question
(`TurnDigestMiddleware`), for small local models that otherwise answer a later question from
memory. The graph state keeps the whole conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.history.middleware import TurnDigestMiddleware, digest_request_messages

_EXPORTS = {"TurnDigestMiddleware": "middleware", "digest_request_messages": "middleware"}

__all__ = ["TurnDigestMiddleware", "digest_request_messages"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
