"""Tool calls written as text: find them (`parse`) and turn offered ones into real calls
(`TextToolCallMiddleware`), for small local models whose server does not parse their calls."""

from attention_scoping.textcalls.parse import TextCall, find_text_calls, offered_calls, strip_calls

__all__ = [
    "TextCall",
    "TextToolCallMiddleware",
    "convert_text_calls",
    "find_text_calls",
    "offered_calls",
    "strip_calls",
]


def __getattr__(name: str) -> object:
    """The middleware imports LangChain: load it only when asked for."""
    if name in ("TextToolCallMiddleware", "convert_text_calls"):
        from attention_scoping.textcalls import middleware

        return getattr(middleware, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
