"""Running `example_agent.py` the way its tests do: one question against the scripted OpenAI
server, or any command line, each giving back the exit code and what it printed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import example_agent
from tests.openai_stub import OpenAIStub, ScriptEntry

QUESTION = "Calculate 47 times 83."
"""A question the default selector opens math for ("calculate" names its tool), so a model
may call `calculate` at once."""


def ask_once(
    capsys: pytest.CaptureFixture[str],
    script: Sequence[ScriptEntry],
    *flags: str,
    question: str = QUESTION,
    **stub_options: Any,
) -> tuple[int, str, OpenAIStub]:
    """`--once question` against a stub serving `script`: the exit code, the printed output
    and the (stopped) stub with its records."""
    with OpenAIStub(script, **stub_options) as stub:
        code = example_agent.main(["--once", question, "--base-url", stub.base_url, *flags])
    return code, capsys.readouterr().out, stub


def run_example(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """The example's `main(argv)`: the exit code and the printed output."""
    code = example_agent.main(list(argv))
    return code, capsys.readouterr().out
