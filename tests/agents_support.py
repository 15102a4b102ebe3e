"""What the tests of the shipped agent scopes (`agents/`) share: calling one tool as the agent
would, and the exports every scope module must have."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool


def call_tool(tools: Sequence[BaseTool], tool_name: str, args: dict[str, object]) -> ToolMessage:
    """Invoke the tool called `tool_name` with a tool call, as the agent loop does, and return
    its ToolMessage (a tool error comes back as one with status "error")."""
    tool = next(t for t in tools if t.name == tool_name)
    message = tool.invoke({"type": "tool_call", "name": tool_name, "args": args, "id": "1"})
    assert isinstance(message, ToolMessage)
    return message


def tool_error(tools: Sequence[BaseTool], tool_name: str, args: dict[str, object]) -> str:
    """Call the tool as `call_tool` does, where the test expects it to fail: the error text
    the model reads (the call must come back with status "error")."""
    message = call_tool(tools, tool_name, args)
    assert message.status == "error", message.content
    return str(message.content)


def assert_scope_exports(scope: ModuleType, names: list[str]) -> None:
    """A scope module exports TOOLS named `names` in order, each turning errors into messages,
    and a one-line DESCRIPTION."""
    assert [t.name for t in scope.TOOLS] == names
    assert all(t.handle_tool_error is True for t in scope.TOOLS)
    assert isinstance(scope.DESCRIPTION, str)
    assert "\n" not in scope.DESCRIPTION
