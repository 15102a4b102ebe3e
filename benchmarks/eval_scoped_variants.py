"""Two scoping variants tried for small models that stop calling tools, run through `eval`.

Registers two strategies on top of `scoped-compact` and hands the rest of the command line to
`attention-scoping eval`, so every eval option works (`--distractors`, `--task`, `--json`):

- `scoped-direct`: `load_context` is left out of the call whose scope pre-selection has just
  chosen (the first call of a user turn); it is back from the turn's next call on. Tests
  whether the navigation tool in the list stops the model calling any tool.
- `scoped-neighbours`: the pre-selected scope's tools plus the `NEIGHBOURS` best-matching
  tools of the other scopes, kept for the whole user turn; calling one loads its scope. Tests
  whether seeing more tools makes the model call one.

Neither beat `scoped-compact` beyond run-to-run noise on Qwen2.5-Coder-1.5B, so neither is a
middleware option (docs/scoping.md has the figures). For example:

    python benchmarks/eval_scoped_variants.py --suite example --distractors 40 \\
        --strategies scoped-direct,scoped-neighbours,scoped-compact,eager \\
        --base-url http://127.0.0.1:8089/v1 --model qwen2.5-coder-1.5b-instruct-q4_k_m \\
        --parse-text-tool-calls
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware.types import ModelRequest, ToolCallRequest

from attention_scoping.adapters.tools import tool_name
from attention_scoping.common.messages import intent_text
from attention_scoping.scoping.catalog import LOAD_CONTEXT
from attention_scoping.scoping.gate import Adoption, adopted_scope, sibling_calls
from attention_scoping.scoping.middleware import AttentionScopingMiddleware, CallPlan
from attention_scoping.scoping.preselect import top_tools
from attention_scoping_lab.cli import main
from attention_scoping_lab.eval import register_strategy
from attention_scoping_lab.eval.strategies import StrategyOptions, create_eval_agent
from attention_scoping_lab.eval.suite import Suite

NEIGHBOURS = 5
"""Tools of other scopes offered beside the pre-selected scope's."""


def _preselected(plan: CallPlan) -> bool:
    """Whether pre-selection chose this call's scope with confidence just now."""
    return (
        plan.choice is not None
        and plan.choice.scope is not None
        and (plan.choice.scope == plan.scope)
    )


class HiddenNavigation(AttentionScopingMiddleware[Any, Any]):
    """Compact scoping without `load_context` on a call whose scope was just pre-selected."""

    def prepare_request(
        self, request: ModelRequest[Any], plan: CallPlan | None = None
    ) -> ModelRequest[Any]:
        """The scoped request, minus `load_context` when pre-selection decided this call."""
        plan = plan or self.plan(request)
        prepared = super().prepare_request(request, plan)
        if not _preselected(plan):
            return prepared
        return prepared.override(tools=[t for t in prepared.tools if tool_name(t) != LOAD_CONTEXT])


class Neighbours(AttentionScopingMiddleware[Any, Any]):
    """Compact scoping plus the best tools of other scopes for the rest of the user turn."""

    def plan(self, request: ModelRequest[Any]) -> CallPlan:
        """The usual plan; a scoped call also offers its turn's neighbour tools."""
        base = super().plan(request)
        if base.scope is None:
            return base
        visible = self.catalog.visible(base.scope)
        if _preselected(base):
            rank, docs, readable = self.start._ranking(request.tools)
            others = [d for d in docs if d.name not in visible]
            offered = top_tools(
                intent_text(request.messages),
                self.catalog,
                others,
                rank,
                NEIGHBOURS,
                allowed=readable,  # code offers only tools that read (core.blast_radius)
            )
        else:  # later calls of the turn keep the turn's set (a byte-stable request prefix)
            kept: Any = request.state.get("scope_offered") or []
            offered = [t for t in kept if isinstance(t, str) and t not in visible]
        updates = {**base.updates, "scope_offered": offered or None}
        return CallPlan(base.scope, tuple(offered), base.choice, updates, base.opener)

    def adoption(self, request: ToolCallRequest) -> Adoption | None:
        """An offered neighbour loads its scope when called, as an offered start tool does."""
        state = request.state if isinstance(request.state, dict) else {}
        call = request.tool_call
        siblings = sibling_calls(state.get("messages", []), call.get("id")) or [dict(call)]
        return adopted_scope(
            self.catalog,
            self.active_scope(state),
            call,
            siblings,
            offered=frozenset(state.get("scope_offered") or ()),
        )


def _builder(cls: type[AttentionScopingMiddleware[Any, Any]]) -> Any:
    def build(suite: Suite, model: Any, tail: Sequence[Any], options: StrategyOptions) -> Any:
        """The suite's scopes under the compact layout, through `cls`."""
        scoping = cls(list(suite.scopes or ()), tools=list(suite.tools), prompt_layout="compact")
        return create_eval_agent(model, suite.tools, suite.system_prompt, [scoping, *tail])

    return build


register_strategy(
    "scoped-direct",
    _builder(HiddenNavigation),
    "compact scopes, no load_context on a pre-selected call",
    needs_scopes=True,
)
register_strategy(
    "scoped-neighbours",
    _builder(Neighbours),
    f"compact scopes + {NEIGHBOURS} tools of other scopes per turn",
    needs_scopes=True,
)

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
