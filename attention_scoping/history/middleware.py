"""`TurnDigestMiddleware`: earlier turns shown to the model as a digest, for small local models."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, ContextT, ModelRequest, ResponseT
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage

from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.common.messages import current_turn, text_of
from attention_scoping.disclosure.in_history import history_mode
from attention_scoping.hesitation.errors import KitConfigError, check_at_least
from attention_scoping.history.digest import DIGEST_MAX_CHARS, digest_turns, earlier_lines

__all__ = ["TurnDigestMiddleware", "digest_request_messages"]


def digest_request_messages(
    messages: list[AnyMessage], limit: int = DIGEST_MAX_CHARS
) -> list[AnyMessage]:
    """`messages` with the turns before the current one folded into its user message as a
    digest (`history.digest`); unchanged (the same list) on the first turn. System messages at
    the head stay where they are; the current turn's messages after its user message too."""
    start, _ = current_turn(messages)
    lines = earlier_lines(messages, limit, start)
    if start < 0 or not lines:
        return messages
    head = [m for m in messages[:start] if isinstance(m, SystemMessage)]
    user = messages[start]
    text = digest_turns(lines, text_of(user))
    if isinstance(user.content, list):  # keep images and other blocks after the text
        others = [b for b in user.content if not (isinstance(b, dict) and b.get("type") == "text")]
        content: Any = [{"type": "text", "text": text}, *others]
    else:
        content = text
    folded = HumanMessage(content=content, id=user.id, additional_kwargs=user.additional_kwargs)
    return [*head, folded, *messages[start + 1 :]]


class TurnDigestMiddleware(ModelCallHooks, AgentMiddleware[Any, ContextT, ResponseT]):
    """Show earlier turns to the model as a digest in front of the new question (opt-in).

    For small local models that answer a later question from memory after a finished turn:
    each model call sees the earlier questions and the answers given (not their tool calls and
    results) folded into the current user message, as quoted data: nothing an earlier answer
    quoted can pose as the user or the present request. Only the request changes: the graph
    state and its checkpoints keep the whole conversation. Measured on Qwen2.5-Coder-1.5B (see
    docs/example-agent.md); a large model does not need it, and a provider's prompt cache does
    not reuse a prefix this rewrites, so leave it off there and with provider-native disclosure
    (`disclosure="anthropic"`/`"openai"`), whose disclosed tools live in earlier tool results.
    Put it after the scoping and hesitation middlewares, so it folds what they prepared.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.history import TurnDigestMiddleware

        agent = create_agent(local_model, tools=tools, middleware=[TurnDigestMiddleware()])
        ```
    """

    def __init__(self, *, max_chars: int = DIGEST_MAX_CHARS) -> None:
        """`max_chars`: characters kept of each earlier question or answer (at least 1)."""
        super().__init__()
        check_at_least("max_chars", max_chars, 1)
        self.max_chars = max_chars

    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the earlier turns folded into the current user message; a
        `KitConfigError` (an `AttentionScopingError` and a `ValueError`) when the request
        discloses tools through the history (a native `disclosure=` mode), since the digest
        would drop those disclosures."""
        messages = list(request.messages)
        mode = history_mode(request.tools, messages)
        if mode is not None:
            msg = (
                f"TurnDigestMiddleware cannot run with disclosure={mode!r}: that mode discloses "
                "tools in earlier tool results, which the digest leaves out. Remove the digest, "
                "or use disclosure='rewrite' (small local models)"
            )
            raise KitConfigError(msg)
        folded = digest_request_messages(messages, self.max_chars)
        return request if folded is messages else request.override(messages=folded)
