"""`GatewayRoutingMiddleware`: a catalog tool the model calls by its own name runs through the
gateway.

A model that reads the signature pool (`ToolGateway.prompt(pool=True)`) sees every tool's name
and arguments, and a small one often calls the tool itself, `summary_statistics(numbers=[...])`,
instead of `execute_tool(tool_name="summary_statistics", arguments={...})`. Without help that
call names a tool the agent does not have and fails. This middleware rewrites it, in the model's
reply, into the `execute_tool` call it stands for (same call id), so the gateway checks,
approves and runs it as usual and the history shows the model the right form. With
`parse_text_calls`, calls written as text (see `attention_scoping.textcalls`) that name a catalog
tool are converted first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import ContextT, ResponseT
from langchain_core.messages import AIMessage, BaseMessage

from attention_scoping.adapters.hygiene import INVALID_ARGUMENTS_KEY
from attention_scoping.adapters.replies import ReplyRewriteMiddleware
from attention_scoping.gateway.catalog import EXECUTE_TOOL
from attention_scoping.textcalls.middleware import convert_text_calls

if TYPE_CHECKING:
    from attention_scoping.gateway.tools import ToolGateway

__all__ = ["GatewayRoutingMiddleware", "route_calls"]


def _routes(call: Mapping[str, Any], routable: Collection[str]) -> bool:
    """A call of a routable tool with arguments that parsed (an invalid one is answered as it
    is, by name, with the structured error of `hygiene`)."""
    args = call.get("args")
    invalid = isinstance(args, Mapping) and INVALID_ARGUMENTS_KEY in args
    return call["name"] in routable and not invalid


def route_calls(
    message: BaseMessage,
    routable: Collection[str],
    *,
    also_text: Collection[str] = (),
    thread: Sequence[BaseMessage] = (),
) -> BaseMessage:
    """`message` with its calls of `routable` tools rewritten as `execute_tool` calls; with
    `also_text`, a reply that is a text call naming one of those names is converted to calls
    first (`textcalls.convert_text_calls`, judged against `thread`)."""
    if not isinstance(message, AIMessage):
        return message
    if also_text:
        converted = convert_text_calls(message, also_text, thread)
        message = converted if isinstance(converted, AIMessage) else message
    calls = message.tool_calls
    if not any(_routes(c, routable) for c in calls):
        return message
    routed = [
        {
            "name": EXECUTE_TOOL,
            "args": {"tool_name": c["name"], "arguments": dict(c.get("args") or {})},
            "id": c.get("id"),
            "type": "tool_call",
        }
        if _routes(c, routable)
        else c
        for c in calls
    ]
    metadata = {
        **message.response_metadata,
        "routed_tool_calls": sum(_routes(c, routable) for c in calls),
    }
    return message.model_copy(update={"tool_calls": routed, "response_metadata": metadata})


class GatewayRoutingMiddleware(ReplyRewriteMiddleware[ContextT, ResponseT]):
    """Run catalog tools the model calls by name through the gateway's `execute_tool`.

    Only calls made while `execute_tool` is offered are routed, and only to the gateway's
    declared reads (`ToolGateway.reads`) that are not themselves offered: a tool that may
    write runs only when the model calls `execute_tool` for it itself. The gateway's `allow`
    rule, argument check and approvals apply as for any `execute_tool` call. Put it last in
    the middleware list (innermost), so outer middleware see the routed call.

    Example:
        ```python
        from langchain.agents import create_agent
        from attention_scoping.gateway import ToolGateway
        from attention_scoping.gateway.routing import GatewayRoutingMiddleware

        gateway = ToolGateway(tools)
        agent = create_agent(
            model,
            tools=gateway.tools,
            system_prompt=f"{my_prompt}\\n\\n{gateway.prompt(pool=True)}",
            middleware=[GatewayRoutingMiddleware(gateway)],
        )
        ```
    """

    def __init__(
        self, gateway: ToolGateway, *, parse_text_calls: bool = False, name: str | None = None
    ) -> None:
        """Configure the routing.

        Args:
            gateway: The gateway whose catalog names are routed.
            parse_text_calls: Also convert tool calls written as text that name a declared-read
                catalog tool (or an offered one), as `TextToolCallMiddleware` does for offered
                tools.
            name: Middleware name, to use two instances in one agent.
        """
        super().__init__(name=name)
        self.gateway = gateway
        self.parse_text_calls = parse_text_calls

    def rewrite(
        self, message: BaseMessage, offered: set[str], thread: Sequence[BaseMessage] = ()
    ) -> BaseMessage:
        """`message` with its calls of declared-read catalog tools routed through
        `execute_tool` (only while `execute_tool` is offered)."""
        if EXECUTE_TOOL not in offered:
            return message
        routable = set(self.gateway.reads) - offered
        text = routable | offered if self.parse_text_calls else set()
        return route_calls(message, routable, also_text=text, thread=thread)
