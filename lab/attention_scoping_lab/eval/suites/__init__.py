"""The shipped task suites (`example` and its held-out half `example-heldout`; the tasks the
default is chosen on, `defaults-tuning` and `defaults-report`; `simulated`, `catalog`) and the
helpers to build one."""

from attention_scoping_lab.eval.suites.catalog import catalog_suite
from attention_scoping_lab.eval.suites.example import example_suite
from attention_scoping_lab.eval.suites.simulated import simulated_suite
from attention_scoping_lab.eval.suites.spec_tools import spec_tool, spec_tools

SUITES = (
    "example",
    "example-heldout",
    "defaults-tuning",
    "defaults-report",
    "simulated",
    "catalog",
)
"""Names accepted by `attention-scoping eval --suite`."""

__all__ = ["SUITES", "catalog_suite", "example_suite", "simulated_suite", "spec_tool", "spec_tools"]
