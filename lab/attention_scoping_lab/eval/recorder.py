"""`EvalRecorder`: the innermost middleware of every eval agent.

It sees each model call exactly as sent (after scoping, gating, the gateway), so it records the
offered tools, the reply's tool calls, usage and wall time; retries transient endpoint errors;
optionally converts tool calls written as text; and ends a task early when its step budget is
spent or, for single-call tasks, once the model has chosen a tool.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic

from jsonschema import Draft202012Validator
from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_config
from langgraph.types import Command
from typing_extensions import override

from attention_scoping.adapters import hooks
from attention_scoping.textcalls.middleware import (
    convert_text_calls,
    message_text,
    offered_tool_names,
)
from attention_scoping.textcalls.parse import find_text_calls
from attention_scoping_lab.eval.retry import RetryPolicy
from attention_scoping_lab.eval.tasks import ToolCallMade
from attention_scoping_lab.eval.transcript import ModelCall, Transcript

NAVIGATION_TOOLS = frozenset({"load_context", "search_tool_catalog", "get_tool_schema"})
"""Tools that find or reveal other tools: not a choice of domain tool."""
EXECUTE_TOOL = "execute_tool"
STOP_SINGLE = "(eval: single-call task, stopped after the model chose a tool)"
STOP_STEPS = "(eval: step budget spent)"
LAST_TEXT_CHARS = 300


def unwrap(name: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The domain tool and arguments of a call (a gateway `execute_tool` call is unwrapped)."""
    if name != EXECUTE_TOOL:
        return name, dict(args)
    inner = args.get("arguments")
    if isinstance(inner, str):
        try:
            inner = json.loads(inner)
        except json.JSONDecodeError:
            inner = {}
    return str(args.get("tool_name", "")), dict(inner) if isinstance(inner, Mapping) else {}


def _usage(message: BaseMessage) -> tuple[int, int, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    details = usage.get("input_token_details") or {}
    return (
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        int(details.get("cache_read") or 0),
    )


def callable_names(request: ModelRequest[Any]) -> set[str]:
    """The tools the model can call on this request: every tool sent, but under
    `disclosure="anthropic"` a deferred tool only once a `tool_reference` in the history has
    expanded it (what the provider shows the model)."""
    from attention_scoping.disclosure.anthropic import AnthropicDisclosure, deferred

    tools = list(request.tools)
    names = offered_tool_names([t for t in tools if not deferred(t)])
    later = offered_tool_names([t for t in tools if deferred(t)])
    if later:
        names |= later & AnthropicDisclosure().disclosed(request.messages)
    return names


class EvalRecorder(AgentMiddleware[Any, ContextT, ResponseT]):
    """Records every model and tool call of the eval's tasks into their `Transcript`s.

    Tasks run on separate LangGraph threads; the recorder finds a task's transcript by the
    `thread_id` of the run, so one agent (and one recorder) serves concurrent tasks.
    """

    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        *,
        parse_text_calls: bool = False,
        retry: RetryPolicy | None = None,
        max_steps: int = 8,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """Configure the recorder.

        Args:
            schemas: JSON schema of every domain tool of the suite, by name (unknown names are
                hallucinations; arguments are checked against these).
            parse_text_calls: Convert text tool calls naming an offered tool into real ones.
            retry: Retry policy for transient endpoint errors.
            max_steps: Model calls per task before the recorder ends it.
            clock: Time source (seconds).
        """
        super().__init__()
        self.validators = {name: Draft202012Validator(dict(s)) for name, s in schemas.items()}
        self.parse_text_calls = parse_text_calls
        self.retry = retry or RetryPolicy()
        self.max_steps = max_steps
        self.clock = clock
        self._transcripts: dict[str, Transcript] = {}
        self._lock = threading.Lock()

    # -- task bookkeeping -----------------------------------------------------------------

    def register(self, thread_id: str, transcript: Transcript) -> None:
        """Route the calls of LangGraph thread `thread_id` to `transcript`."""
        with self._lock:
            self._transcripts[thread_id] = transcript

    def release(self, thread_id: str) -> None:
        """Forget a finished task's thread."""
        with self._lock:
            self._transcripts.pop(thread_id, None)

    def _current(self) -> Transcript | None:
        try:
            thread_id = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:
            return None
        with self._lock:
            return self._transcripts.get(str(thread_id))

    # -- model calls ----------------------------------------------------------------------

    def _short_circuit(self, transcript: Transcript | None) -> ModelResponse[Any] | None:
        if transcript is None:
            return None
        if transcript.task.single_call and transcript.has_domain_call():
            return ModelResponse(result=[AIMessage(content=STOP_SINGLE)])
        if len(transcript.calls) >= self.max_steps:
            return ModelResponse(result=[AIMessage(content=STOP_STEPS)])
        return None

    def _record(
        self,
        transcript: Transcript | None,
        request: ModelRequest[ContextT],
        response: ModelResponse[ResponseT],
        seconds: float,
        retries: int,
    ) -> ModelResponse[ResponseT]:
        offered = callable_names(request)
        result: list[BaseMessage] = list(response.result)
        found = converted = 0
        for i, message in enumerate(result):
            if not isinstance(message, AIMessage):
                continue
            if message.tool_calls:  # text calls converted further in (e.g. by gateway routing)
                inner = message.response_metadata.get("text_tool_calls")
                inner = inner if isinstance(inner, int) else 0
                found += inner
                converted += inner
                continue
            found += len(find_text_calls(message_text(message)))
            if self.parse_text_calls:
                result[i] = convert_text_calls(message, offered, request.messages)
                converted += len(getattr(result[i], "tool_calls", []) or [])
        if converted or any(a is not b for a, b in zip(result, response.result, strict=True)):
            response = ModelResponse(
                result=result, structured_response=response.structured_response
            )
        last = next((m for m in reversed(result) if isinstance(m, AIMessage)), None)
        if transcript is not None and last is not None:
            self._note_calls(transcript, last)
            transcript.last_text = message_text(last)[:LAST_TEXT_CHARS]
            tokens = _usage(last)
            transcript.add_call(
                ModelCall(
                    seconds=seconds,
                    input_tokens=tokens[0],
                    output_tokens=tokens[1],
                    cached_tokens=tokens[2],
                    offered=tuple(sorted(offered)),
                    called=tuple(c["name"] for c in last.tool_calls),
                    text_calls=found,
                    converted=converted,
                    retries=retries,
                )
            )
        return response

    def _note_calls(self, transcript: Transcript, message: AIMessage) -> None:
        for call in message.tool_calls:
            if call["name"] in NAVIGATION_TOOLS:
                continue
            name, args = unwrap(call["name"], call.get("args") or {})
            validator = self.validators.get(name)
            valid = None if validator is None else validator.is_valid(args)
            transcript.note_choice(
                name, known=validator is not None, valid=valid, call_id=call.get("id")
            )

    def _begin(self, request: ModelRequest[ContextT]) -> _ModelCall[ContextT]:
        """The prepare step both model hooks share: this thread's transcript, and the reply
        that ends the task early (single call done, or out of steps), if any."""
        transcript = self._current()
        return _ModelCall(self, transcript, request, self._short_circuit(transcript))

    @override
    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.ModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Call the model (with retries) and record the call."""
        call = self._begin(request)
        if call.stop is not None:
            return call.stop
        response, retries = self.retry.call(lambda: call.attempt(handler))
        return call.finish(response, retries)

    @override
    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: hooks.AsyncModelHandler[ContextT, ResponseT]
    ) -> ModelResponse[ResponseT]:
        """Async form of `wrap_model_call`."""
        call = self._begin(request)
        if call.stop is not None:
            return call.stop
        response, retries = await self.retry.acall(lambda: call.aattempt(handler))
        return call.finish(response, retries)

    # -- tool calls -----------------------------------------------------------------------

    def _record_tool(self, request: ToolCallRequest, result: ToolMessage | Command[Any]) -> None:
        transcript = self._current()
        call = request.tool_call
        if transcript is None or call["name"] in NAVIGATION_TOOLS:
            return
        if not isinstance(result, ToolMessage):
            return
        name, args = unwrap(call["name"], call.get("args") or {})
        content = result.content if isinstance(result.content, str) else str(result.content)
        ok = result.status != "error"
        if call["name"] == EXECUTE_TOOL:
            ok = ok and _gateway_ok(content)
        transcript.add_tool(ToolCallMade(name, args, ok, content), call.get("id"))

    @override
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.ToolHandler
    ) -> hooks.ToolResult:
        """Run the tool and record what it returned."""
        result = handler(request)
        self._record_tool(request, result)
        return result

    @override
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: hooks.AsyncToolHandler
    ) -> hooks.ToolResult:
        """Async form of `wrap_tool_call`."""
        result = await handler(request)
        self._record_tool(request, result)
        return result


def _gateway_ok(content: str) -> bool:
    try:
        payload = json.loads(content)
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and payload.get("status") == "ok"


def schemas_of(tools: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """JSON schema of each LangChain tool's arguments, by tool name."""
    from attention_scoping.adapters.tools import to_provider_schema

    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        fn = to_provider_schema(tool)["function"]
        out[fn["name"]] = dict(fn.get("parameters") or {"type": "object"})
    return out


class _ModelCall(Generic[ContextT]):
    """One model call of a recorded run: its early stop, if any, and when its last attempt
    started (the recorded time leaves out failed attempts and the waits between them)."""

    def __init__(
        self,
        recorder: EvalRecorder[ContextT, Any],
        transcript: Transcript | None,
        request: ModelRequest[ContextT],
        stop: ModelResponse[Any] | None,
    ) -> None:
        self.recorder = recorder
        self.transcript = transcript
        self.request = request
        self.stop = stop
        self.started = 0.0

    def attempt(
        self, handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]]
    ) -> ModelResponse[ResponseT]:
        """One try of the model call."""
        self.started = self.recorder.clock()
        return handler(self.request)

    async def aattempt(
        self, handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]]
    ) -> ModelResponse[ResponseT]:
        """One try of the model call (async)."""
        self.started = self.recorder.clock()
        return await handler(self.request)

    def finish(self, response: ModelResponse[ResponseT], retries: int) -> ModelResponse[ResponseT]:
        """The finish step both hooks share: record the call and return the response."""
        seconds = self.recorder.clock() - self.started
        return self.recorder._record(self.transcript, self.request, response, seconds, retries)
