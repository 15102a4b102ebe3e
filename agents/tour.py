"""The offline tour: a scripted stand-in for the LLM that drives the real middleware and tools.

It plays three scripted turns (47 x 83, "translate that to French", weather in Paris) by
reading the conversation the way a model would: if the tool it needs is not visible it calls
`load_context`, then the tool, then answers from the tool result. It is a script, not a model,
and says so; anything outside the three turns gets an honest "scripted tour" reply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from attention_scoping.common.messages import current_turn
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call

TOUR_TURNS = (
    "What is 47 times 83?",
    "Translate that answer to French",
    "What's the weather in Paris?",
)
"""The three user turns of the tour."""

_OPS = {
    "times": "*",
    "x": "*",
    "*": "*",
    "×": "*",
    "multiplied by": "*",
    "plus": "+",
    "+": "+",
    "minus": "-",
    "-": "-",
    "divided by": "/",
    "/": "/",
}
_ARITHMETIC = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*"
    r"(multiplied by|divided by|times|plus|minus|[x*×+\-/])"
    r"\s*(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_LANGUAGES = {"french": "fr", "german": "de", "spanish": "es", "italian": "it", "english": "en"}
_NUMBER = re.compile(r"=\s*(-?\d[\d.,]*)")

NEEDS = {
    "math": "calculate",
    "translation": "format_number",
    "weather": "get_current_weather",
    "glossary": "propose_glossary_term",
}
"""The tool each tour intent needs, and so the scope the model must load first."""

SCOPE_OF = {"glossary": "translation"}
"""Intents whose scope is named differently (the others are their scope's name)."""

WRITE_TURN = "Add 'cloud' to the French glossary as 'nuage'"
"""The tour's extra turn with --tiers: a write tool behind approval."""

_QUOTED = re.compile(r"'([^']+)'")


def _intent(question: str) -> str | None:
    q = question.lower()
    if "glossary" in q and len(_QUOTED.findall(question)) >= 2:
        return "glossary"
    if "weather" in q or "forecast" in q or "temperature" in q:
        return "weather"
    if "translat" in q or any(lang in q for lang in _LANGUAGES):
        return "translation"
    if _ARITHMETIC.search(question):
        return "math"
    return None


def tour_can_answer(question: str) -> bool:
    """Whether the scripted tour has a turn for `question` (else it can only say so)."""
    return _intent(question) is not None


def _turn(messages: Sequence[BaseMessage]) -> tuple[str, list[BaseMessage], list[BaseMessage]]:
    """The last user question, the messages before it and the messages since (runtime notes,
    such as the hesitation middleware's hint, are not the user's question)."""
    i, _ = current_turn(messages)
    if i < 0:
        return "", [], list(messages)
    return messages[i].text, list(messages[:i]), list(messages[i + 1 :])


def _arguments(intent: str, question: str, history: Sequence[BaseMessage]) -> dict[str, object]:
    if intent == "math":
        match = _ARITHMETIC.search(question)
        assert match is not None
        left, op, right = match.groups()
        return {"expression": f"{left} {_OPS[op.lower()]} {right}"}
    if intent == "glossary":
        term, translation = _QUOTED.findall(question)[:2]
        language = next(
            (code for name, code in _LANGUAGES.items() if name in question.lower()), "fr"
        )
        return {"term": term, "language": language, "translation": translation}
    if intent == "translation":
        previous = next(
            (m.text for m in reversed(history) if isinstance(m, AIMessage) and not m.tool_calls),
            "",
        )
        numbers = _NUMBER.findall(previous)
        value = float(numbers[-1].replace(",", "")) if numbers else 0.0
        language = next(
            (code for name, code in _LANGUAGES.items() if name in question.lower()), "fr"
        )
        return {"value": value, "language": language}
    city = re.search(r"\bin ([A-Z][\w' -]*?)(?:[?.!]|$)", question)
    return {"city": city.group(1).strip() if city else "Paris"}


def _answer(intent: str, args: dict[str, object], result: ToolMessage) -> str:
    content = str(result.content)
    if result.status == "error":
        return f"I could not complete that: {content}"
    if intent == "math":
        expression = str(args["expression"]).replace("*", "×")
        return f"{expression} = {content}"
    if intent == "glossary":
        return f"Done: {content}."
    if intent == "translation":
        if args["language"] == "fr":
            return f"En français : 47 × 83 = {content}. (Nombre formaté à la française.)"
        return f"Formatted for {args['language']}: {content}"
    return f"Weather report: {content}"


def tour_policy(messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
    """Decide the next scripted step from the conversation and the tools visible now."""
    question, history, since = _turn(messages)
    intent = _intent(question)
    if intent is None:
        return say(
            "(scripted tour) I can only play the tour's three turns: arithmetic, translating "
            "the answer, and the weather. Set OPENROUTER_API_KEY to talk to a real model."
        )
    needed = NEEDS[intent]
    results = {m.name: m for m in since if isinstance(m, ToolMessage)}
    tries = sum(1 for m in since if isinstance(m, ToolMessage) and m.name == needed)
    switch = results.get("load_context")
    if needed not in tool_names and (switch is None or switch.status == "error"):
        if switch is not None:
            return say(f"I could not switch context: {switch.content}")
        return calls(tool_call("load_context", {"name": SCOPE_OF.get(intent, intent)}))
    args = _arguments(intent, question, history)
    last = results.get(needed)
    # With a gate, the first call of a tool whose schema was held back is refused and the
    # schema is loaded for the next step: call it again (once).
    held_back = last is not None and "tool_not_available" in str(last.content)
    if last is None or (last.status == "error" and held_back and tries < 2):
        return calls(tool_call(needed, args))
    return say(_answer(intent, args, last))


def tour_model() -> ScriptedChatModel:
    """The scripted model of the offline tour."""
    return ScriptedChatModel(policy=tour_policy, label="demo tour")
