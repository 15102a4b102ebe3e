"""Split a request into the parts that may each need a tool (multi-intent retrieval).

One query vector cannot stand for "find the SLA, back up my data, then update the shipment":
its nearest tools serve the average of three requests. The gate ranks each part on its own as
well as the whole request, and merges the per-part rankings fairly (see `ranking.HybridRanker`).

The split is generic English structure, nothing learned from data: sentence ends, semicolons,
line breaks, list markers, and sequencing connectives ("then", "after that", "finally").
"""

from __future__ import annotations

import re

MAX_PARTS = 6
"""At most this many parts are ranked (a long message is cut into its first parts + the rest)."""

MIN_WORDS = 3
"""A part shorter than this joins the next one (a 'Thanks.' or 'Hi!' carries no request)."""

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|[;\n]+|\s+(?=\(?\d+[.)]\s)")
_CONNECTIVE = re.compile(
    r",?\s+(?:and\s+)?(?:then|after\s+that|afterwards|finally|lastly|additionally)\b[,:]?\s+",
    re.IGNORECASE,
)


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def split_intents(text: str, *, max_parts: int = MAX_PARTS) -> list[str]:
    """The parts of `text` that may each ask for something, in order (at least one part).

    Example:
        ```python
        split_intents("Book a flight to Rome. Then send the itinerary to Ana.")
        # ['Book a flight to Rome.', 'send the itinerary to Ana.']
        ```
    """
    pieces: list[str] = []
    for sentence in _SENTENCE.split(text):
        pieces.extend(p for p in _CONNECTIVE.split(sentence) if p and p.strip())
    parts: list[str] = []
    carry = ""
    for piece in pieces:
        piece = f"{carry} {piece.strip()}".strip() if carry else piece.strip()
        if _words(piece) < MIN_WORDS:
            carry = piece
            continue
        carry = ""
        parts.append(piece)
    if carry:
        if parts:
            parts[-1] = f"{parts[-1]} {carry}"
        else:
            parts.append(carry)
    if len(parts) > max_parts:
        parts = [*parts[: max_parts - 1], " ".join(parts[max_parts - 1 :])]
    return parts or [text]
