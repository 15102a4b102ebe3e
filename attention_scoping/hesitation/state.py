"""The state key the hesitation middleware writes (both forms), declared apart from the
middleware so a graph's state (`middleware.HesitationGraphState`, or
`attention_scoping.graph.agent_state(...)`) can take it without importing the middleware."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import AgentState, PrivateStateAttr, ResponseT

STATE_KEY = "hesitation"
"""Private state key: `{"turn": <key of the user's turn>, "nudges": <count>}` (the node form
adds `"bound"`: the tools bound to the last model call)."""


class HesitationState(AgentState[ResponseT]):
    """Agent state with the private nudge counter of the current user turn."""

    hesitation: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]
