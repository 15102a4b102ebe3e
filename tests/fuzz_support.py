"""The hypothesis settings of the fuzz suites: derandomised (CI runs the same examples every
time), no deadline and no example database, the size checks of large inputs off."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def fuzz_settings(max_examples: int) -> settings:
    """Settings for a fuzz suite of `max_examples` examples per test."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
