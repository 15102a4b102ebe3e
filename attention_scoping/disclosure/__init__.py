"""Provider-native disclosure: how the callable tools reach the provider (`disclosure=`).

Every mode implements the core's `attention_scoping.middleware.Disclosure` protocol,
`disclose(request, shown) -> Disclosed(request, mode)`. The scoping middleware decides what the
reply may call (`shown`) and records exactly that on the reply; a mode only decides what is
*sent*. It may send more tools than `shown` (deferred, or outside `allowed_tools`), never make
more callable: the core's gate reads the record alone. A mode holds configuration only, so one
instance serves many threads and chat models at once.

- `Anthropic` (`ChatAnthropic`): every tool in one fixed order, all `defer_loading` but
  `load_context`; `shown` disclosed by `tool_reference` blocks written into the request's
  history, recomputed from the replies' records, so tools array, system prompt and every
  earlier message are byte-identical from call to call (the prompt cache keeps its prefix).
- `OpenAI` (`ChatOpenAI` on OpenAI's API, Chat Completions or Responses): every tool in one
  fixed order, `shown` in `tool_choice={"type": "allowed_tools", ...}`.
- `Auto`: one of them per request from `request.model` (any other model: the core's `Rewrite`,
  which sends only `shown`).

What LangChain ships, and what this adds. `langchain.agents.middleware.ProviderToolSearchMiddleware`
marks chosen tools `extras["defer_loading"] = True` and appends the provider's *server-side*
search tool (Anthropic `tool_search_tool_bm25_20251119`, OpenAI `tool_search`); the model then
finds deferred tools itself with the provider's BM25 search. It has no notion of a scope, of
what the model may call, or of the order tools are sent in. What issue 27 measured and this
package keeps: (1) the byte-stable prefix: a fixed order and a fixed loaded set, the scope's
tools disclosed at the tail (LangChain's deferral alone leaves the array in registration order
and the loaded set changing with whatever one marks); (2) the scope itself, not a BM25 search,
choosing what is disclosed. The same `extras["defer_loading"]` field is used, so both stack:
`middleware=[AttentionScopingMiddleware(..., disclosure=Auto()), ProviderToolSearchMiddleware()]`
adds the provider's search over the tools this mode deferred (LangChain's middleware runs
inside ours and sees them marked); what the search finds is still refused unless `shown`.
Issue 27's *ranked* scope disclosure (the request's `k` best tools of a scope disclosed, the rest
behind a client-side search tool) is not carried over: it needs a callable search tool that the
core's gate would refuse, and it measured worse than rewrite on the one real model it was run
on (33 % against 61 % success). See docs/disclosure.md.
"""

from __future__ import annotations

from attention_scoping.disclosure.allowed import OpenAI, allowed_choice, allowed_names
from attention_scoping.disclosure.auto import Auto
from attention_scoping.disclosure.choice import stable_order
from attention_scoping.disclosure.native import (
    Anthropic,
    DisclosureError,
    deferred,
    references,
    with_references,
)

__all__ = [
    "Anthropic",
    "Auto",
    "DisclosureError",
    "OpenAI",
    "allowed_choice",
    "allowed_names",
    "deferred",
    "references",
    "stable_order",
    "with_references",
]
