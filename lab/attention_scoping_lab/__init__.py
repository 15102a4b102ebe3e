"""The measuring tools of attention-scoping (distribution `attention-scoping-lab`).

The `attention-scoping` command (`cli`) with `audit`, `bench`, `simulate`, `eval` and `bill`;
the provider cache and price models (`cost`), catalog and labelled-query loading (`catalog`),
the simulated servers' data and the eval suites. It depends on the runtime (`attention_scoping`),
never the other way round: token counts and the request log it reads come from
`attention_scoping.observe`.
"""
