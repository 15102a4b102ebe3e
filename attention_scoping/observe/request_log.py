"""`RequestLogMiddleware`: write every model request of an agent to a session file, so
`attention-scoping bill FILE` can price what the agent really sent under prompt caching.

Each model call appends one JSON line (`attention_scoping_lab.recorded` describes the
format): the time, the tools array as a provider receives it, the system prompt and the
messages, rendered byte-stably the way the billing renders them. Put it last in the middleware
list (innermost), so it records the tools and prompt the other middleware left. Each line is
one locked `O_APPEND` write (`attention_scoping.observe.jsonl`), so agents in several threads
or processes may share a file; a lone surrogate in the text is written as `?`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ModelRequest,
    ResponseT,
)

from attention_scoping.adapters.model_calls import ModelCallHooks
from attention_scoping.adapters.tools import to_provider_schema
from attention_scoping.observe.jsonl import append_line, encode_line
from attention_scoping.observe.render import as_provider_message

__all__ = ["RequestLogMiddleware", "request_record"]


def request_record(request: ModelRequest[Any], at: float) -> dict[str, Any]:
    """One session-file line for `request`, made at `at` (seconds)."""
    system = request.system_message.text if request.system_message is not None else ""
    return {
        "t": at,
        "tools": [to_provider_schema(t) for t in request.tools],
        "system": system,
        "messages": [as_provider_message(m) for m in request.messages],
    }


class RequestLogMiddleware(ModelCallHooks, AgentMiddleware[Any, ContextT, ResponseT]):
    """Append each model request to a session file (JSON lines).

    Example:
        ```python
        from attention_scoping.observe.request_log import RequestLogMiddleware

        agent = create_agent(model, tools=tools,
                             middleware=[scoping, RequestLogMiddleware("session.jsonl")])
        # ... run the agent, then:  attention-scoping bill session.jsonl
        ```
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], float] = time.time,
        name: str | None = None,
    ) -> None:
        """Configure the log.

        Args:
            path: The session file; created (with its folder) if missing, appended to if not.
            clock: Seconds for the `t` field (wall-clock time by default).
            name: Middleware name, to use two instances in one agent.
        """
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._name = name

    @property
    def name(self) -> str:
        """The middleware's node-name prefix."""
        return self._name or type(self).__name__

    def prepare_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """Record the request; the model gets it unchanged."""
        append_line(self.path, encode_line(request_record(request, self.clock())))
        return request
