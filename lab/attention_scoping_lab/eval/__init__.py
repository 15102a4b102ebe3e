"""`attention-scoping eval`: task success of real models under each way of exposing tools.

The small Python API, for your own tools and tasks:

```python
from attention_scoping_lab.eval import EvalOptions, Suite, load_tasks, run_eval
from attention_scoping_lab.eval.endpoint import chat_model, resolve_endpoint

suite = Suite("mine", tools=my_tools, tasks=load_tasks("tasks.json"), scopes=my_scopes)
model = chat_model(resolve_endpoint("http://127.0.0.1:8089/v1"), "local")
result = run_eval(suite, ["eager", "scoped"], model, EvalOptions(model_name="local"))
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping_lab.eval.pricing import CallPricer, TokenPrices
    from attention_scoping_lab.eval.results import EvalResult, StrategyFigures, TaskResult
    from attention_scoping_lab.eval.runner import EvalOptions, run_eval
    from attention_scoping_lab.eval.strategies import (
        DEFAULT_STRATEGIES,
        STRATEGIES,
        StrategyOptions,
        register_strategy,
    )
    from attention_scoping_lab.eval.suite import Suite
    from attention_scoping_lab.eval.tasks import (
        EvalTask,
        Expect,
        TaskFileError,
        ToolCallMade,
        Verdict,
        judge,
        load_tasks,
        verdict,
    )

_EXPORTS = {
    "CallPricer": "pricing",
    "DEFAULT_STRATEGIES": "strategies",
    "EvalOptions": "runner",
    "EvalResult": "results",
    "EvalTask": "tasks",
    "Expect": "tasks",
    "STRATEGIES": "strategies",
    "StrategyFigures": "results",
    "StrategyOptions": "strategies",
    "Suite": "suite",
    "TaskFileError": "tasks",
    "TaskResult": "results",
    "TokenPrices": "pricing",
    "ToolCallMade": "tasks",
    "Verdict": "tasks",
    "judge": "tasks",
    "load_tasks": "tasks",
    "verdict": "tasks",
    "register_strategy": "strategies",
    "run_eval": "runner",
}

__all__ = [
    "DEFAULT_STRATEGIES",
    "STRATEGIES",
    "CallPricer",
    "EvalOptions",
    "EvalResult",
    "EvalTask",
    "Expect",
    "StrategyFigures",
    "StrategyOptions",
    "Suite",
    "TaskFileError",
    "TaskResult",
    "TokenPrices",
    "ToolCallMade",
    "Verdict",
    "judge",
    "load_tasks",
    "register_strategy",
    "run_eval",
    "verdict",
]

_exported, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> object:
    """A public name; `PriceModel`, `CallPricer`'s name before 0.2, warns (in `pricing`)."""
    if name == "PriceModel":
        from attention_scoping_lab.eval import pricing

        return getattr(pricing, name)
    return _exported(name)
