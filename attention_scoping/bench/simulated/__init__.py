"""The paper's simulated benchmark: 120 tools over six MCP-like servers with its token profile,
500 seeded tasks, and the tools tax of eager, scoped, gated and gateway agents
(`attention-scoping simulate`)."""

from attention_scoping.bench.simulated.catalog import build_catalog
from attention_scoping.bench.simulated.report import render
from attention_scoping.bench.simulated.run import (
    SimulationResult,
    StrategyFigures,
    export,
    run_simulation,
    write_json,
)
from attention_scoping.bench.simulated.tasks import Task, Turn, build_tasks

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
