"""Earlier turns as a short digest (pure, no LangChain): what a small model reads of them.

A small local model (Qwen2.5-Coder-1.5B on llama.cpp, measured in docs/example-agent.md) that
sees a finished turn in full (question, tool call, tool result, answer) answers the next
question the same way it ended the last one: from memory, without a tool, even when the new
question needs another tool and the runtime note names it. Shown the earlier turns as a digest
in front of the new question (each question and the answer given), it calls the tool.
`digest_turns` writes that digest; tool calls, tool results and runtime notes of earlier turns
are left out (their answers carry what the user was told). The state is never changed.

Earlier turns are data, never instructions: an answer may quote a fetched page or a tool result
that says `[Now]` or `User: ...`. So each entry's lines after its first are quoted
(`QUOTE_PREFIX`), and any line that looks like one of the digest's own markers, in any case,
spacing, width, look-alike letters or invisible characters, gets a visible `(quoted)` inside the
marker (`neutralise`). Only the digest itself writes lines at the margin.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from attention_scoping.common.limits import clip
from attention_scoping.common.messages import MessageLike, current_turn, is_user_turn, text_of

__all__ = [
    "ANSWER_PREFIX",
    "DIGEST_HEADER",
    "DIGEST_MAX_CHARS",
    "NEUTRAL_MARK",
    "NOW_HEADER",
    "QUOTE_PREFIX",
    "USER_PREFIX",
    "digest_turns",
    "earlier_lines",
    "neutralise",
    "quote_entry",
]

DIGEST_HEADER = "[Earlier in this conversation]"
NOW_HEADER = "[Now]"
USER_PREFIX = "User: "
ANSWER_PREFIX = "You answered: "
DIGEST_MAX_CHARS = 600
"""Characters kept of each earlier question or answer (its head; the cut is marked)."""
QUOTE_PREFIX = "  > "
"""What starts every line of an earlier question or answer after its first."""
NEUTRAL_MARK = " (quoted)"
"""Put inside a marker-like text of an earlier turn (`[Now (quoted)]`, `User (quoted):`)."""

# Letters of other scripts that read as the Latin letters of the markers, and bracket and colon
# look-alikes NFKC leaves alone (Greek capital `Ν` reads as N, its small `ν` as v).
_LOOKALIKE_GROUPS = {
    "n": "ΝНոп",
    "a": "АΑаɑα",
    "c": "СϹсϲ",
    "d": "ԁ",
    "e": "ЕΕеҽ",
    "h": "Һһ",
    "i": "Іιіı",
    "l": "ӏǀ",
    "o": "ОΟоοօ0",
    "r": "г",
    "s": "Ѕѕ",
    "t": "ТΤт",
    "u": "Սυս",
    "v": "νѵ",
    "w": "Ԝԝѡω",
    "y": "УΥуү",
    "[": "⟦〚【〔⁅❲［",
    "]": "⟧〛】〕⁆❳］",
    ":": "꞉∶ː˸։᛬",
}
_LOOKALIKES = {look: plain for plain, looks in _LOOKALIKE_GROUPS.items() for look in looks}
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_DROPPED = frozenset({"Cf", "Mn", "Me", "Cc", "Co", "Cs", "Cn"})
_BRACKETED = re.compile(r"\[\s*(?:now|earlier\s*in\s*this\s*conversation)\s*\]")
_LEADING = re.compile(r"^[^a-z0-9]*(?:user|you\s*answered)\s*:")


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """How a reader may see one character: look-alikes as Latin, NFKC, case-folded, any space
    one space, invisible and combining characters nothing."""
    out = []
    for ch in unicodedata.normalize("NFKC", _LOOKALIKES.get(char, char)).casefold():
        ch = _LOOKALIKES.get(ch, ch)
        if ch.isspace():
            out.append(" ")
        elif unicodedata.category(ch) not in _DROPPED and ch not in _INVISIBLE:
            out.append(ch)
    return "".join(out)


def _skeleton(line: str) -> tuple[str, list[int]]:
    """`line` as a reader may see it, and for each of its characters the index in `line` of
    the character it came from."""
    seen: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(line):
        folded = _fold(char)
        seen.append(folded)
        origin.extend([index] * len(folded))
    return "".join(seen), origin


def neutralise(line: str) -> str:
    """`line` with `NEUTRAL_MARK` inside every part that looks like a digest marker: a bracketed
    header anywhere, a `User:` or `You answered:` at its start (after any punctuation)."""
    seen, origin = _skeleton(line)
    ends = [origin[m.end() - 1] for m in _BRACKETED.finditer(seen)]
    if leading := _LEADING.match(seen):
        ends.append(origin[leading.end() - 1])
    for end in sorted(set(ends), reverse=True):  # before the closing `]` or `:`
        line = line[:end] + NEUTRAL_MARK + line[end:]
    return line


def quote_entry(prefix: str, text: str) -> str:
    """One digest entry: `prefix` and the first line of `text`, its other lines quoted; every
    line neutralised, any kind of line break read as one."""
    lines = [neutralise(line) for line in text.splitlines()] or [""]
    rest = [QUOTE_PREFIX + line if line else QUOTE_PREFIX.rstrip() for line in lines[1:]]
    return "\n".join([prefix + lines[0], *rest])


def _answer(message: MessageLike) -> str:
    """The text of a model message that answers (no tool calls), else ""."""
    if message.type != "ai" or getattr(message, "tool_calls", None):
        return ""
    return text_of(message).strip()


def earlier_lines(
    messages: Sequence[MessageLike], limit: int = DIGEST_MAX_CHARS, start: int | None = None
) -> list[str]:
    """One entry per earlier question and per answer, before the current user turn (`start`,
    its index when the caller has it already); an entry's lines after its first are quoted."""
    if start is None:
        start, _ = current_turn(messages)
    lines: list[str] = []
    for message in messages[: max(start, 0)]:
        if is_user_turn(message):
            lines.append(quote_entry(USER_PREFIX, clip(text_of(message).strip(), limit)))
        elif answer := _answer(message):
            lines.append(quote_entry(ANSWER_PREFIX, clip(answer, limit)))
    return lines


def digest_turns(lines: Sequence[str], question: str) -> str:
    """The current question with the earlier turns' digest before it ("" lines: unchanged)."""
    if not lines:
        return question
    return "\n".join([DIGEST_HEADER, *lines, "", NOW_HEADER, question])
