"""Three-layer system prompt: capability index, always-on core, one switchable scope module."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from attention_scoping.scoping.catalog import LOAD_CONTEXT, ScopeCatalog

DEFAULT_CORE = f"""\
# Core
Your tools are grouped into the contexts listed above; only the active context's tools are \
loaded. When a request needs a tool of another context, call `{LOAD_CONTEXT}` with that \
context's name yourself, then use its tools: do not ask the user, and do not mention contexts \
unless asked. Use only tools you were given in this call, with arguments from their schemas; \
never invent a tool or an argument. If a tool result carries an error and a `next_step`, \
follow the `next_step`. When no tool is needed, answer directly."""
"""The framework's part of the core layer: how to navigate between contexts."""

INDEX_HEADER = f"""\
# Capabilities
This agent can work in these contexts. Call `{LOAD_CONTEXT}(name)` to switch:"""
"""First lines of the capability index; one line per scope follows."""

NO_CONTEXT_MODULE = f"""\
# Active context: none
No context is loaded yet. If the request needs tools, call `{LOAD_CONTEXT}` with the matching \
context first; otherwise answer directly."""
"""Module layer when no scope is active and there is no default scope."""


PromptLayout = Literal["layered", "compact"]
"""How the system prompt is laid out: `"layered"` (capability index, framework core, your prompt,
the active scope's module) or `"compact"` (your prompt alone; the scopes are described in the
`load_context` tool and modules travel in its results), for small models that stop calling tools
under long prompts."""


@dataclass(frozen=True)
class PromptLayers:
    """The three layers of a system prompt, kept apart for inspection and tests."""

    index: str
    core: str
    module: str

    def render(self) -> str:
        """The system prompt text: index, core, module, in this fixed order (cache-friendly)."""
        return "\n\n".join(part for part in (self.index, self.core, self.module) if part)

    @property
    def stable_prefix(self) -> str:
        """The part that does not change when the scope switches (what a prompt cache keeps)."""
        return "\n\n".join(part for part in (self.index, self.core) if part)


def capability_index(catalog: ScopeCatalog, header: str = INDEX_HEADER) -> str:
    """One line per scope, from the scope descriptions, in configuration order (a scope
    without one lists its tools that read; `ScopeCatalog.line`)."""
    lines = [header] + [f"- {name}: {catalog.line(name)}" for name in catalog.names]
    return "\n".join(lines)


def core_layer(framework_core: str, user_prompt: str | None) -> str:
    """The always-on core: our navigation rules, then the user's own system prompt (kept whole)."""
    parts = [p.strip() for p in (framework_core, user_prompt or "") if p and p.strip()]
    return "\n\n".join(parts)


def module_layer(catalog: ScopeCatalog, scope: str | None) -> str:
    """The switchable layer: the active scope's prompt module under a fixed heading."""
    if scope is None:
        return NO_CONTEXT_MODULE
    body = catalog.scopes[scope].prompt or catalog.line(scope)
    return f"# Active context: {scope}\n{body}"


def build_layers(
    catalog: ScopeCatalog,
    scope: str | None,
    *,
    index: str,
    framework_core: str = DEFAULT_CORE,
    user_prompt: str | None = None,
    layout: PromptLayout = "layered",
) -> PromptLayers:
    """Assemble the three layers for a resolved `scope` (index is precomputed: it never changes).
    The compact layout keeps only the core (`index` is not used): `framework_core`, which it
    leaves empty unless you set one, then your prompt."""
    if layout == "compact":
        return PromptLayers(index="", core=core_layer(framework_core, user_prompt), module="")
    return PromptLayers(
        index=index,
        core=core_layer(framework_core, user_prompt),
        module=module_layer(catalog, scope),
    )


def read_prompt(path: str | Path) -> str:
    """Read one prompt module (UTF-8 text or markdown), stripped."""
    return Path(path).read_text(encoding="utf-8").strip()


def load_prompt_dir(
    directory: str | Path, suffixes: tuple[str, ...] = (".md", ".txt")
) -> dict[str, str]:
    """Read every prompt file of `directory` into `{stem: text}` (e.g. `prompts/math.md` -> "math").

    Raises:
        FileNotFoundError: `directory` does not exist.
    """
    root = Path(directory)
    if not root.is_dir():
        msg = f"prompt directory not found: {root}"
        raise FileNotFoundError(msg)
    return {p.stem: read_prompt(p) for p in sorted(root.iterdir()) if p.suffix in suffixes}
