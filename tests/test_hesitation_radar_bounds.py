"""The hesitation radar's cost is linear in the reply and bounded by a window, and a field list
the user asked for ("what does a transfer need?") is an answer, not a stall."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from attention_scoping.hesitation import radar as radar_module
from attention_scoping.hesitation.radar import (
    MESSAGE_WINDOW,
    REQUEST_WINDOW,
    WINDOW_GAP,
    detect_hesitation,
    text_window,
)
from tests.radar_schemas import DEPLOY, EVENT, REMINDER, TABLE, TRANSFER

# -- bounded, linear work ---------------------------------------------------------------------

LOOPS = [
    "Please provide the title and schedule_time. ",
    "- title: string (required)\n",
    "a",
    "Deployment complete. ",
    "x or y or ",
    "- a: (",
    "title, message, schedule_time, ",
    "What title should I use? ",
    "Scheduling the reminder now ",
    "title\n",
    "title: ",
    "I'll schedule it now. Would you like me to proceed? The title is `x`. ",
]
"""Units a model looping to its output cap repeats (one long word, one long line, many lines,
many questions, many field names, an unclosed parenthesis...)."""


def _looping(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _lines_run(check: Callable[[], Any]) -> int:
    """Lines of the hesitation package executed by `check` (a deterministic count of work)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if "hesitation" not in frame.f_code.co_filename:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        check()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("unit", LOOPS)
def test_the_check_is_linear_in_the_reply(unit: str) -> None:
    """Within the window, 4x the text costs at most about 4x the lines run (the old sentence
    lookup and clause scan were quadratic)."""

    def check(size: int) -> Callable[[], Any]:
        return lambda: detect_hesitation(_looping(unit, size), [REMINDER], request="go")

    work = [_lines_run(check(n)) for n in (1_500, 6_000)]
    assert work[1] <= 4.5 * work[0] + 2_000, work


@pytest.mark.parametrize("unit", LOOPS[:6])
def test_a_256_kb_reply_costs_what_its_window_costs(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 256 KB reply and a 64 KB one are read through the same window: the same lines run, and
    no reading ever sees more than the window."""
    seen: list[int] = []
    reading = radar_module.MessageReading

    def spy(text: str, *args: Any) -> Any:
        seen.append(len(text))
        return reading(text, *args)

    monkeypatch.setattr(radar_module, "MessageReading", spy)
    big, small = _looping(unit, 256 * 1024), _looping(unit, 64 * 1024)
    request = _looping("remind me to merge PR 482 ", 256 * 1024)
    work_big = _lines_run(lambda: detect_hesitation(big, [REMINDER], request=request))
    work_small = _lines_run(lambda: detect_hesitation(small, [REMINDER], request=request))
    assert abs(work_big - work_small) <= 50, (work_big, work_small)
    assert max(seen) <= sum(MESSAGE_WINDOW) + len(WINDOW_GAP)
    assert detect_hesitation(big, [REMINDER]) == detect_hesitation(
        text_window(big, MESSAGE_WINDOW), [REMINDER]
    )


def test_the_window_keeps_the_head_and_the_tail() -> None:
    text = "Here are the results. " + "x" * 50_000 + " Would you like me to proceed?"
    kept = text_window(text, MESSAGE_WINDOW)
    assert kept.startswith("Here are the results.") and kept.endswith("proceed?")
    assert len(kept) == sum(MESSAGE_WINDOW) + len(WINDOW_GAP)
    assert text_window("short", REQUEST_WINDOW) == "short"
    verdict = detect_hesitation(
        "Please provide the title and message. " * 2_000 + "Would you like me to proceed?",
        [REMINDER],
    )
    assert verdict and "confirmation" in verdict.signals  # the closing question is read


# -- a field list the user asked for -----------------------------------------------------------

REMINDER_LIST = (
    "- title (required): what the reminder is about\n- message (required): the text you get\n"
    "- schedule_time: when, default +30m\n- folder: the folder to put it in\n"
    "- notify_email: also send an email"
)
TRANSFER_LIST = (
    "1. from_account: the source account ID (required)\n2. to_account: the destination "
    "account ID (required)\n3. amount: how much (required)\n4. currency: defaults to USD\n"
    "5. memo: an optional note"
)
TABLE_LIST = (
    "You'll need:\n- restaurant_id\n- date (YYYY-MM-DD)\n- time (HH:MM, 24h)\n- party_size\n"
    "- seating: indoor or outdoor (default indoor)"
)
EVENT_LIST = (
    "**title** — the event name\n**start_time** — ISO 8601 start\n**location** — optional\n"
    "**reminder_minutes** — defaults to 15"
)
DEPLOY_LIST = (
    "A deploy takes: service, environment (staging or production), image_tag, replicas "
    "(default 2) and strategy (default rolling). Send me those and I'll run it."
)

ASKED_FOR_THE_LIST = [
    ("What goes into a transfer request?", TRANSFER_LIST, TRANSFER),
    ("Before we set up the event, what details will you need from me?", EVENT_LIST, EVENT),
    ("I want to deploy later; tell me what you'd need to know first.", DEPLOY_LIST, DEPLOY),
    ("Can you enumerate the fields of a payment transfer?", TRANSFER_LIST, TRANSFER),
    ("Remind me what a calendar event is made of.", EVENT_LIST, EVENT),
    ("What must I provide for a deploy?", DEPLOY_LIST, DEPLOY),
    ("Which of the reservation fields are mandatory?", TABLE_LIST, TABLE),
    ("What are the inputs to create_payment_transfer?", TRANSFER_LIST, TRANSFER),
    ("Break down what I have to fill in for a new event.", EVENT_LIST, EVENT),
    ("Outline the settings a deployment accepts.", DEPLOY_LIST, DEPLOY),
    ("Which details should I collect from the guest for the reservation?", TABLE_LIST, TABLE),
    ("How is a calendar event structured here?", EVENT_LIST, EVENT),
    ("Tell me the required and optional values for a deploy.", DEPLOY_LIST, DEPLOY),
    ("Quick question: for a reservation, what am I expected to supply?", TABLE_LIST, TABLE),
    ("what do reminders consist of", REMINDER_LIST, REMINDER),
    ("Before I hand this to ops: which values are required to deploy?", DEPLOY_LIST, DEPLOY),
    ("How many fields does a booking have, and which are optional?", TABLE_LIST, TABLE),
    ("what has to be filled in to ship a service?", DEPLOY_LIST, DEPLOY),
    ("Give me a rundown of what a table booking takes.", TABLE_LIST, TABLE),
    ("Which details are necessary for sending money between accounts?", TRANSFER_LIST, TRANSFER),
]
"""Requests that ask what a tool needs, in many shapes (a question, an ask to list, outline or
break down; about fields, inputs, details, what is required, what it takes or is made of), each
answered with a field list. Without the request, every one of these lists is a stall."""


@pytest.mark.parametrize(("request_text", "listing", "schema"), ASKED_FOR_THE_LIST)
def test_a_field_list_the_user_asked_for_is_not_a_stall(
    request_text: str, listing: str, schema: dict[str, Any]
) -> None:
    assert detect_hesitation(listing, [schema])  # unprompted: a field list
    verdict = detect_hesitation(listing, [schema], request=request_text)
    assert not verdict, verdict.reasons
    assert {"user_asked_for_fields", "user_asked_about_tool"} & set(verdict.signals)


ASKED_FOR_THE_ACTION = [
    (
        "Can you book Luigi's for 4 at 7pm tomorrow? We need outdoor seating.",
        TABLE_LIST + "\n\nShall I go ahead?",
        TABLE,
    ),
    (
        "Please move 200 USD from acct-1 to acct-2; it has to arrive today.",
        TRANSFER_LIST + "\n\nCan you confirm?",
        TRANSFER,
    ),
    (
        "Set up the event 'Standup' at 9am tomorrow, location required: room 4.",
        EVENT_LIST + "\n\nIs that correct?",
        EVENT,
    ),
    ("Deploy api to staging with tag v2; what else do you need?", DEPLOY_LIST, DEPLOY),
    ("Book a table at Luigi's for 4 tomorrow at 7pm.", TABLE_LIST + "\n\nShall I book it?", TABLE),
    ("Remind me what to bring, and schedule it for 5pm.", REMINDER_LIST + "\n\nOK?", REMINDER),
]
"""Requests for the action, some of them with a question or words about what is needed: the
field list back is still a stall."""


@pytest.mark.parametrize(("request_text", "listing", "schema"), ASKED_FOR_THE_ACTION)
def test_a_field_list_after_a_request_for_the_action_is_still_a_stall(
    request_text: str, listing: str, schema: dict[str, Any]
) -> None:
    verdict = detect_hesitation(listing, [schema], request=request_text)
    assert verdict and "user_asked_for_fields" not in verdict.signals, verdict.reasons
