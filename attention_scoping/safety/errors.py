"""The errors of capability manifests, apart from the manifests so adapters and payloads can
catch them without importing the manifest classes (which would make an import cycle)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attention_scoping.errors import AttentionScopingError

if TYPE_CHECKING:
    from attention_scoping.safety.validation import ArgumentProblem


class ManifestConfigError(AttentionScopingError, ValueError):
    """A manifest is built wrongly: bad name, bad schema, duplicate tool or namespace."""


class UnknownToolError(AttentionScopingError, LookupError):
    """A call names a namespace or tool that the bound manifests do not own."""

    def __init__(self, name: str, reason: str, message: str, available: Sequence[str]) -> None:
        """Keep the requested name, the reason (`unknown_namespace`/`unknown_tool`), the list."""
        super().__init__(message)
        self.name = name
        self.reason = reason
        self.available = list(available)


class ArgumentError(AttentionScopingError, ValueError):
    """Arguments break the tool's JSON schema; `problems` names each field concerned."""

    def __init__(self, tool: str, problems: Sequence[ArgumentProblem]) -> None:
        """Keep the tool name and the problems (most relevant first)."""
        self.tool = tool
        self.problems = list(problems)
        head = self.problems[0]
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        super().__init__(f"{tool}: {head.message}{more}")


class WriteNotGuardedError(AttentionScopingError, PermissionError):
    """A write tool was asked to run directly; writes only run through an `IntentGuard`."""
