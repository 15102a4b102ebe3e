"""The example agent's three scopes (math, translation, weather) and its core prompt."""

from __future__ import annotations

from pathlib import Path

from agents import math, translation, weather
from attention_scoping import Scope, load_prompt_dir, read_prompt

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
"""Prompt modules: core.md plus one file per scope."""

CORE_PROMPT = read_prompt(PROMPTS_DIR / "core.md")
"""The example agent's own system prompt (kept inside the core layer by the middleware)."""


def build_scopes(prompts_dir: Path = PROMPTS_DIR) -> list[Scope]:
    """The three scopes with their tools, descriptions and prompt modules."""
    modules = load_prompt_dir(prompts_dir)
    return [
        Scope(name, module.DESCRIPTION, tools=module.TOOLS, prompt=modules[name])
        for name, module in (("math", math), ("translation", translation), ("weather", weather))
    ]
