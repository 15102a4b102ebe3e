"""The state keys `ToolAttentionMiddleware` writes, declared apart from the middleware so a
hand-built graph's state (`agent_state(ScopingState, GateState)`) holds them without the
`gate` extra."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import AgentState, PrivateStateAttr, ResponseT


class GateState(AgentState[ResponseT]):
    """State of `ToolAttentionMiddleware`: what the last model call was shown, and why."""

    gate_exposed: NotRequired[Annotated[list[str] | None, PrivateStateAttr]]
    gate_trace: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]
    gate_turn: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]
    """With `decide_per="turn"`: the user turn the held decision belongs to, and its tools."""
