"""Token counts of what a model call carries: the tools array and the system prompt (the tools tax).

Counts use a real BPE tokenizer offline (`bpe-openai`, which ships OpenAI's encodings; `tiktoken`
if its encodings are cached). Without either, a character estimate is used and labelled as such.
The tools array is serialized as OpenAI-style function definitions, the way providers receive it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from attention_scoping.adapters.tools import ToolLike, to_provider_schema
from attention_scoping.common.tokens import (
    TokenCounter,
    get_counter,
)

if TYPE_CHECKING:
    from attention_scoping.prompt import PromptLayers


def tools_json(tools: Iterable[ToolLike | dict[str, Any]]) -> str:
    """The tools array as providers receive it (OpenAI function-calling JSON)."""
    return json.dumps([to_provider_schema(t) for t in tools], ensure_ascii=False)


def tool_tokens(
    tools: Iterable[ToolLike | dict[str, Any]], counter: TokenCounter | None = None
) -> int:
    """Tokens of the tools array sent with one model call."""
    schemas = list(tools)
    if not schemas:
        return 0
    return (counter or get_counter()).count(tools_json(schemas))


def per_tool_tokens(
    tools: Iterable[ToolLike | dict[str, Any]], counter: TokenCounter | None = None
) -> dict[str, int]:
    """Tokens of each tool's definition alone, by tool name."""
    c = counter or get_counter()
    out: dict[str, int] = {}
    for tool in tools:
        schema = to_provider_schema(tool)
        name = schema.get("function", schema).get("name", "?")
        out[name] = c.count(json.dumps(schema, ensure_ascii=False))
    return out


# -- what one model call carries besides the tools array ---------------------------------------


def layer_tokens(layers: PromptLayers, counter: TokenCounter | None = None) -> dict[str, int]:
    """Tokens of each prompt layer (`index`, `core`, `module`), of the rendered prompt
    (`total`) and of its part that stays identical when the scope switches (`stable`: the
    index and the core, which come first).

    `layers` is a core `PromptLayers` (`attention_scoping.prompt.build_layers`).
    """
    c = counter or get_counter()
    stable = "\n\n".join(part for part in (layers.index, layers.core) if part)
    return {
        "index": c.count(layers.index),
        "core": c.count(layers.core),
        "module": c.count(layers.module),
        "stable": c.count(stable),
        "total": c.count(layers.render()),
    }


def summary_pool_tokens(
    lines: Sequence[tuple[str, str]], counter: TokenCounter | None = None
) -> int:
    """Tokens of the gate's summary pool over `(name, one-line summary)` pairs, in the exact
    text `ToolAttentionMiddleware` puts in the prompt (header included)."""
    from attention_scoping.gating.disclosure import pool_text  # numpy-free, but in `gating`

    return (counter or get_counter()).count(pool_text(lines))


def shared_prefix_tokens(first: str, second: str, counter: TokenCounter | None = None) -> int:
    """Tokens of the longest common prefix of two prompts: the part a provider's prompt cache
    can reuse from one call to the next (counted on the shared characters)."""
    size = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        size += 1
    return (counter or get_counter()).count(first[:size])
