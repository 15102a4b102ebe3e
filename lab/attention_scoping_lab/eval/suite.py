"""A task suite: the tools an agent gets, how they group into scopes, and the tasks.

`Suite` is what every strategy is built from, so a user's own suite (their tools, their tasks)
runs through the same strategies and metrics as the shipped ones:

```python
from attention_scoping_lab.eval import Suite, load_tasks, run_eval

suite = Suite("mine", tools=my_tools, tasks=load_tasks("my_tasks.json"), scopes=my_scopes)
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attention_scoping_lab.eval.tasks import EvalTask

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from attention_scoping.scopes import Scope

ANSWER_RULE = (
    "Call a tool for every number, reading or term you report, then answer in one short "
    "sentence from the tool results; never repeat a call whose result you already have."
)
"""One line every suite prompt ends with: without it small models repeat their last call."""


@dataclass
class Suite:
    """Tools, optional scopes and tasks; `environment` wraps a run (e.g. an offline fake API).

    Attributes:
        name: Suite name, shown in reports and results files.
        tools: Every tool the tasks may need (LangChain tools; they really run).
        tasks: The tasks, in order.
        scopes: The tools grouped into `Scope`s; None when the suite has no grouping (the
            scoped strategies are then skipped with a reason).
        system_prompt: The agent's own prompt (strategies add their layers around it).
        environment: A context manager factory entered once around the whole run.
        notes: What a reader should know about the suite (shown under the table).
    """

    name: str
    tools: Sequence[BaseTool]
    tasks: Sequence[EvalTask]
    scopes: Sequence[Scope] | None = None
    system_prompt: str = ANSWER_RULE
    environment: Callable[[], AbstractContextManager[Any]] = field(default=nullcontext)
    notes: str = ""

    def tool_names(self) -> list[str]:
        """Names of the suite's tools, in order."""
        return [t.name for t in self.tools]

    def select(self, task_ids: Sequence[str] | None = None, limit: int | None = None) -> Suite:
        """The same suite restricted to some task ids and/or the first `limit` tasks."""
        tasks = list(self.tasks)
        if task_ids:
            wanted = set(task_ids)
            unknown = wanted - {t.id for t in tasks}
            if unknown:
                msg = f"suite {self.name!r} has no task {sorted(unknown)[0]!r}"
                raise ValueError(msg)
            tasks = [t for t in tasks if t.id in wanted]
        if limit is not None:
            tasks = tasks[:limit]
        return Suite(
            self.name,
            self.tools,
            tasks,
            self.scopes,
            self.system_prompt,
            self.environment,
            self.notes,
        )
