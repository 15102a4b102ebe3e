"""The system prompt's layouts: capability index, core, and one switchable scope module.

- `"compact"` (the default): your system prompt alone, byte-stable. `load_context` describes the
  scopes in its schema and returns each scope's module in its result.
- `"layered"`: the capability index (one line per scope), our navigation rules and your prompt,
  then the active scope's module: the prompt changes when the scope does.
- `"stable"`: index, rules and your prompt, never changing; modules travel in `load_context`
  results (a provider's prompt cache keeps the whole system prompt).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from attention_scoping.errors import ScopeConfigError
from attention_scoping.scopes import LOAD_CONTEXT, ScopeCatalog

Layout = Literal["compact", "layered", "stable"]
LAYOUTS: tuple[Layout, ...] = ("compact", "layered", "stable")

NAVIGATION_RULES = f"""\
# Core
Your tools are grouped into the contexts listed above; only the active context's tools are \
loaded. When a request needs a tool of another context, call `{LOAD_CONTEXT}` with that \
context's name yourself, then use its tools: do not ask the user, and do not mention contexts \
unless asked. Use only tools you were given in this call, with arguments from their schemas; \
never invent a tool or an argument. If a tool result carries an error and a `next_step`, \
follow the `next_step`. When no tool is needed, answer directly."""
"""Our part of the core layer in the layered and stable layouts."""

INDEX_HEADER = f"""\
# Capabilities
This agent can work in these contexts. Call `{LOAD_CONTEXT}(name)` to switch:"""

NO_CONTEXT_MODULE = f"""\
# Active context: none
No context is loaded yet. If the request needs tools, call `{LOAD_CONTEXT}` with the matching \
context first; otherwise answer directly."""


@dataclass(frozen=True)
class PromptLayers:
    """The three layers of a system prompt, kept apart for inspection and tests."""

    index: str
    core: str
    module: str

    def render(self) -> str:
        """The system prompt: index, core, module, in this fixed order."""
        return "\n\n".join(part for part in (self.index, self.core, self.module) if part)


def capability_index(catalog: ScopeCatalog) -> str:
    """One line per scope (its description), in configuration order."""
    return "\n".join([INDEX_HEADER] + [f"- {n}: {catalog.describe(n)}" for n in catalog.names])


def module_layer(catalog: ScopeCatalog, scope: str | None) -> str:
    """The active scope's prompt module under a fixed heading (its description without one)."""
    if scope is None:
        return NO_CONTEXT_MODULE
    body = catalog.scopes[scope].prompt or catalog.describe(scope)
    return f"# Active context: {scope}\n{body}"


def build_layers(
    catalog: ScopeCatalog, scope: str | None, layout: Layout, user_prompt: str | None
) -> PromptLayers:
    """The layers for `scope` under `layout`, your prompt kept whole."""
    user = (user_prompt or "").strip()
    if layout == "compact":
        return PromptLayers("", user, "")
    core = "\n\n".join(p for p in (NAVIGATION_RULES, user) if p)
    module = module_layer(catalog, scope if layout == "layered" else catalog.default_scope)
    return PromptLayers(capability_index(catalog), core, module)


def modules_in_results(layout: Layout) -> bool:
    """Whether `load_context` results carry the scope's module (every layout but layered)."""
    return layout != "layered"


def read_prompt(path: str | Path) -> str:
    """One prompt module (UTF-8 text or markdown), stripped; a path relative to the working
    folder."""
    return Path(path).read_text(encoding="utf-8").strip()


class PromptDirNotFound(ScopeConfigError, FileNotFoundError):
    """`load_prompt_dir` was given a path that is not a folder (catchable as either)."""


def load_prompt_dir(
    directory: str | Path, suffixes: tuple[str, ...] = (".md", ".txt")
) -> dict[str, str]:
    """Every prompt file of `directory` as `{stem: text}` (`prompts/math.md` -> `"math"`).

    Raises:
        PromptDirNotFound: `directory` is not a folder (a relative path is relative to the
            working folder); a `ScopeConfigError` and a `FileNotFoundError`.
    """
    root = Path(directory)
    if not root.is_dir():
        msg = f"prompt directory not found: {root} (relative to {Path.cwd()})"
        raise PromptDirNotFound(msg)
    return {p.stem: read_prompt(p) for p in sorted(root.iterdir()) if p.suffix in suffixes}
