"""The hypothesis settings of the fuzz suites: derandomised (CI runs the same examples every
time), no deadline and no example database, the size checks of large inputs off; and the check
the file-reader fuzz tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

T = TypeVar("T")


def fuzz_settings(max_examples: int) -> settings:
    """Settings for a fuzz suite of `max_examples` examples per test."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def check_reader(
    fuzz: settings,
    files: SearchStrategy[bytes],
    path: Path,
    read: Callable[[Path], T],
    refusal: type[Exception],
    *,
    names_file: Callable[[str], bool],
    accepted: Callable[[T], None],
) -> None:
    """`read` on any bytes written to `path`: a value that passes `accepted`, or one
    `refusal` whose single-line message `names_file`, never another exception."""

    @fuzz
    @given(data=files)
    def check(data: bytes) -> None:
        path.write_bytes(data)
        try:
            value = read(path)
        except refusal as exc:
            assert names_file(str(exc)) and "\n" not in str(exc)
            return
        accepted(value)

    check()
