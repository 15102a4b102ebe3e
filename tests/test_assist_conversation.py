"""`assist.asks_about_conversation`: a message that refers back to the conversation and brings
no new value is about the conversation (no hint, no ungrounded nudge); anything new makes it a
request again."""

from __future__ import annotations

import pytest

from attention_scoping.hesitation.assist import (
    asks_about_conversation,
    needs_tool,
    new_values,
    refers_back,
    tool_words,
)

EARLIER = "Convert 12 km to miles.\n12 km is 7.46 miles.\nAnd the weather in Lyon? It is 14 °C."


@pytest.mark.parametrize(
    "message",
    [
        "How many miles did you say that was?",
        "Sorry, which city did I ask about?",
        "What was the temperature again?",
        "Remind me of the distance, please.",
        "You said 7.46, right? Was that miles?",
        "I asked about Lyon, didn't I?",
    ],
)
def test_a_back_reference_without_new_values_is_about_the_conversation(message: str) -> None:
    assert asks_about_conversation(message, EARLIER)


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("Do that again for 30 km.", "30"),
        ("Did you check the weather in Nantes too?", "Nantes"),
        ("Repeat it for 'Grenoble', please.", "Grenoble"),
    ],
)
def test_a_new_number_name_or_quoted_text_makes_it_a_request(message: str, value: str) -> None:
    assert refers_back(message)
    assert value in new_values(message, EARLIER)
    assert not asks_about_conversation(message, EARLIER)


def test_without_a_back_reference_or_an_earlier_turn_it_is_a_request() -> None:
    assert not asks_about_conversation("What about the forecast for tomorrow?", EARLIER)
    assert not asks_about_conversation("What did you say the weather is in Lyon?", "")


def test_apostrophes_and_the_first_word_are_not_values() -> None:
    assert new_values("Great. What's the result again? I'd like it.", EARLIER) == []


def test_needs_tool_is_false_for_a_question_about_the_conversation() -> None:
    words = [tool_words("convert_units", "Convert a quantity between units, e.g. km to miles")]
    message = "How many miles did you say that was?"
    assert needs_tool(message, words, 0.9)
    assert not needs_tool(message, words, 0.9, earlier=EARLIER)
