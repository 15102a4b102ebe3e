"""Earlier turns as a short digest (pure, no LangChain): what a small model reads of them.

A small local model (Qwen2.5-Coder-1.5B on llama.cpp, measured in docs/example-agent.md) that
sees a finished turn in full (question, tool call, tool result, answer) answers the next
question the same way it ended the last one: from memory, without a tool, even when the new
question needs another tool and the runtime note names it. Shown the earlier turns as a digest
in front of the new question (each question and the answer given), it calls the tool.
`digest_turns` writes that digest; tool calls, tool results and runtime notes of earlier turns
are left out (their answers carry what the user was told). The state is never changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_scoping.core.limits import clip
from attention_scoping.core.messages import MessageLike, current_turn, is_user_turn, text_of

__all__ = [
    "ANSWER_PREFIX",
    "DIGEST_HEADER",
    "DIGEST_MAX_CHARS",
    "NOW_HEADER",
    "USER_PREFIX",
    "digest_turns",
    "earlier_lines",
]

DIGEST_HEADER = "[Earlier in this conversation]"
NOW_HEADER = "[Now]"
USER_PREFIX = "User: "
ANSWER_PREFIX = "You answered: "
DIGEST_MAX_CHARS = 600
"""Characters kept of each earlier question or answer (its head; the cut is marked)."""


def _answer(message: MessageLike) -> str:
    """The text of a model message that answers (no tool calls), else ""."""
    if message.type != "ai" or getattr(message, "tool_calls", None):
        return ""
    return text_of(message).strip()


def earlier_lines(
    messages: Sequence[MessageLike], limit: int = DIGEST_MAX_CHARS, start: int | None = None
) -> list[str]:
    """One line per earlier question and per answer, before the current user turn (`start`,
    its index when the caller has it already)."""
    if start is None:
        start, _ = current_turn(messages)
    lines: list[str] = []
    for message in messages[: max(start, 0)]:
        if is_user_turn(message):
            lines.append(USER_PREFIX + clip(text_of(message).strip(), limit))
        elif answer := _answer(message):
            lines.append(ANSWER_PREFIX + clip(answer, limit))
    return lines


def digest_turns(lines: Sequence[str], question: str) -> str:
    """The current question with the earlier turns' digest before it ("" lines: unchanged)."""
    if not lines:
        return question
    return "\n".join([DIGEST_HEADER, *lines, "", NOW_HEADER, question])
