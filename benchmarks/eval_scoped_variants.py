"""A scoping variant tried for small models that stop calling tools, run through `eval`.

Registers one strategy on top of `scoped-compact` and hands the rest of the command line to
`attention-scoping eval`, so every eval option works (`--distractors`, `--task`, `--json`):

- `scoped-direct`: `load_context` is left out of the request on the call whose scope the
  selector has just opened (the first call of a user turn); it is back from the turn's next
  call on. Tests whether the navigation tool in the list stops the model calling any tool.
  Built on the core's public API alone: a `Disclosure` that sends fewer tools than the reply
  may call (never more), so the gate's record is unchanged.

It did not beat `scoped-compact` beyond run-to-run noise on Qwen2.5-Coder-1.5B, so it is not a
middleware option (docs/scoping.md has the figures). The other variant measured there,
`scoped-neighbours` (other scopes' best tools offered for the turn, a called one loading its
scope), relied on the old middleware's adoption of offered tools, which the core no longer
has, and is gone. For example:

    python benchmarks/eval_scoped_variants.py --suite example --distractors 40 \\
        --strategies scoped-direct,scoped-compact,eager \\
        --base-url http://127.0.0.1:8089/v1 --model qwen2.5-coder-1.5b-instruct-q4_k_m \\
        --parse-text-tool-calls
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from langchain.agents.middleware.types import ModelRequest

from attention_scoping.load_context import OPENED_KEY
from attention_scoping.messages import current_turn, turn_starts
from attention_scoping.middleware import Disclosed, Rewrite
from attention_scoping.scopes import LOAD_CONTEXT, STATE_KEY
from attention_scoping_lab.cli import main
from attention_scoping_lab.eval import register_strategy
from attention_scoping_lab.eval.strategies import scoped_builder


def selected_now(state: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Whether the selector (code) opened the active scope at this, the turn's first, call."""
    opened = state.get(OPENED_KEY)
    return (
        turn_starts(messages)
        and isinstance(opened, Mapping)
        and opened.get("by") == "code"
        and opened.get("scope") == state.get(STATE_KEY)
        and opened.get("turn") == current_turn(messages)[1]
    )


class HiddenNavigation(Rewrite):
    """The default disclosure, minus `load_context` on a call whose scope was just selected."""

    def disclose(self, request: ModelRequest[Any], shown: Sequence[str]) -> Disclosed:
        """Only the callable tools; `load_context` left out when the selector decided now."""
        sent = super().disclose(request, shown)
        if not selected_now(request.state, request.messages):
            return sent
        tools = [t for t in sent.request.tools if isinstance(t, dict) or t.name != LOAD_CONTEXT]
        return Disclosed(sent.request.override(tools=tools), "direct")


register_strategy(
    "scoped-direct",
    scoped_builder(layout="compact", disclosure=HiddenNavigation()),
    "compact scopes, no load_context on a call the selector just opened",
    needs_scopes=True,
)

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
