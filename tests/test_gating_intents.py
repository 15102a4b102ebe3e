"""Splitting a request into the parts that may each need a tool."""

from __future__ import annotations

from attention_scoping.gating.intents import MAX_PARTS, split_intents


def test_sentences_and_sequencing_words_split_a_request() -> None:
    assert split_intents("Book a flight to Rome. Then send the itinerary to Ana.") == [
        "Book a flight to Rome.",
        "Then send the itinerary to Ana.",
    ]
    assert split_intents("Find the report, and then email it to the whole team") == [
        "Find the report",
        "email it to the whole team",
    ]
    assert split_intents("list open tickets; close the stale ones quickly") == [
        "list open tickets",
        "close the stale ones quickly",
    ]


def test_short_pieces_join_their_neighbour_and_one_part_stays_whole() -> None:
    assert split_intents("Thanks! Please refund order 17 today.") == [
        "Thanks! Please refund order 17 today."
    ]
    one = "Get temperature and humidity forecast for Boston and Rome for next 10 days."
    assert split_intents(one) == [one]
    assert split_intents("hi") == ["hi"]


def test_long_messages_are_capped() -> None:
    text = " ".join(f"Please do task number {i} now." for i in range(12))
    parts = split_intents(text)
    assert len(parts) == MAX_PARTS
    assert parts[-1].endswith("task number 11 now.")
