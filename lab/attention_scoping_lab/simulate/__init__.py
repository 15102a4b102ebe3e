"""The paper's simulated benchmark: 120 tools over six MCP-like servers with its token profile,
500 seeded tasks, and the tools tax of eager, scoped, gated and gateway agents
(`attention-scoping simulate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping_lab.simulate.catalog import build_catalog
    from attention_scoping_lab.simulate.report import render
    from attention_scoping_lab.simulate.run import (
        SimulationResult,
        StrategyFigures,
        export,
        run_simulation,
        write_json,
    )
    from attention_scoping_lab.simulate.tasks import Task, Turn, build_tasks

_EXPORTS = {
    "build_catalog": "catalog",
    "build_tasks": "tasks",
    "export": "run",
    "render": "report",
    "run_simulation": "run",
    "SimulationResult": "run",
    "StrategyFigures": "run",
    "Task": "tasks",
    "Turn": "tasks",
    "write_json": "run",
}

__all__ = [
    "SimulationResult",
    "StrategyFigures",
    "Task",
    "Turn",
    "build_catalog",
    "build_tasks",
    "export",
    "render",
    "run_simulation",
    "write_json",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
