"""Scripted chat model for offline tests and demos: emits real `tool_calls`, records every call."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Step = AIMessage | Callable[[list[BaseMessage], list[str]], AIMessage]
"""A scripted reply: a fixed message, or a function of (messages, visible tool names)."""

_ids = itertools.count(1)


def tool_call(
    name: str, args: dict[str, Any] | None = None, id: str | None = None
) -> dict[str, Any]:
    """One tool call dict as models emit them."""
    return {"name": name, "args": args or {}, "id": id or f"call_{next(_ids)}", "type": "tool_call"}


def calls(*items: dict[str, Any], content: str = "") -> AIMessage:
    """An AIMessage carrying the given tool calls (several = parallel calls in one step)."""
    return AIMessage(content=content, tool_calls=list(items))


def say(text: str) -> AIMessage:
    """An AIMessage with text and no tool call (a final answer)."""
    return AIMessage(content=text)


class ScriptedChatModel(BaseChatModel):
    """A chat model that replays a script and records what each call was shown.

    Each entry of `script` is an `AIMessage` or a callable `(messages, tool_names) -> AIMessage`.
    `recorded` holds, per call, the tool names and schemas the model was bound with, the system
    prompt and the messages, so tests can assert what the model saw.

    Example:
        ```python
        model = ScriptedChatModel(script=[calls(tool_call("load_context", {"name": "math"})),
                                          say("done")])
        agent = create_agent(model, middleware=[scoping])
        agent.invoke({"messages": [("user", "hi")]})
        assert model.recorded[0]["tools"] == ["load_context"]
        ```
    """

    script: list[Any] = Field(default_factory=list)
    """Replies in order: `AIMessage`s or callables `(messages, tool_names) -> AIMessage`."""
    policy: Any = None
    """A callable `(messages, tool_names) -> AIMessage` used once the script is exhausted."""
    recorded: list[dict[str, Any]] = Field(default_factory=list)
    """Per call: `tools` (names), `schemas`, `system` (prompt text) and `messages`."""
    label: str = "scripted"
    """Name used in errors (e.g. 'demo tour')."""

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools as a provider would receive them (OpenAI function-calling dicts)."""
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        schemas = kwargs.get("tools") or []
        names = [s["function"]["name"] for s in schemas if "function" in s]
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), None)
        self.recorded.append(
            {"tools": names, "schemas": schemas, "system": system, "messages": list(messages)}
        )
        index = len(self.recorded) - 1
        if index < len(self.script):
            step = self.script[index]
        elif self.policy is not None:
            step = self.policy
        else:
            msg = (
                f"{self.label} model: script has {len(self.script)} replies, call {index + 1} asked"
            )
            raise IndexError(msg)
        reply = step(list(messages), names) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])
