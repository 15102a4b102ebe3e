"""Capability manifests: a namespace owning tools with JSON schemas and a read/write flag.

A manifest is one domain of authority (`repo`, `billing`, `deploy`). Its tools are exposed as
`<namespace>__<tool>`: the double underscore is the one separator every major provider accepts
(OpenAI, Anthropic, Bedrock and Mistral allow only letters, digits, `_` and `-`, Gemini also
wants a leading letter, all cap names at 64 characters), so `repo:comment` or `repo.comment`
would be rejected by some. Names are checked when the manifest is built, arguments are checked
against the tool's JSON schema before its handler runs, and write tools never run from here:
they go through the two-phase `IntentGuard`.

Framework-free: the LangChain adapters live in `attention_scoping.safety.adapters`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attention_scoping.common.errors import ErrorCode
from attention_scoping.common.text import did_you_mean_hint
from attention_scoping.safety.aio import call_async
from attention_scoping.safety.errors import (
    ArgumentError,
    ManifestConfigError,
    UnknownToolError,
    WriteNotGuardedError,
)
from attention_scoping.safety.validation import check_arguments, compile_schema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from attention_scoping.safety.intents import IntentRecord, Reconciliation

__all__ = [
    "MAX_NAME_LENGTH",
    "PROVIDER_SAFE_NAME",
    "SEPARATOR",
    "ArgumentError",
    "Capability",
    "CapabilityManifest",
    "ManifestConfigError",
    "ManifestRegistry",
    "UnknownToolError",
    "WriteNotGuardedError",
    "split_name",
]

SEPARATOR = "__"
"""Joins namespace and tool: `repo__comment`."""

MAX_NAME_LENGTH = 64
"""Longest tool name every major provider accepts."""

PROVIDER_SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
"""A tool name valid for OpenAI, Anthropic, Gemini, Bedrock and Mistral alike."""

_NAMESPACE = re.compile(r"^[A-Za-z](?:[A-Za-z0-9-]|_(?!_))*$")
_LOCAL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def split_name(name: str) -> tuple[str, str] | None:
    """`("repo", "comment")` for `"repo__comment"`, None when `name` is not namespaced."""
    namespace, sep, local = name.partition(SEPARATOR)
    return (namespace, local) if sep and namespace and local else None


def _check_new(
    item: object, kind: type[Any], key: str, seen: Collection[str], where: str, twice: str
) -> None:
    """Raise `ManifestConfigError` unless `item` is a `kind` whose `key` is not in `seen`
    (`where` names the container, `twice` what two items would share)."""
    if not isinstance(item, kind):
        msg = f"{where}: expected a {kind.__name__}, got {type(item).__name__}"
        raise ManifestConfigError(msg)
    value = getattr(item, key)
    if value in seen:
        msg = f"{where} has two {twice} {value!r}"
        raise ManifestConfigError(msg)


@dataclass(frozen=True)
class Capability:
    """One tool of a manifest: its contract, its handler and, for writes, its safety hooks.

    Handlers and hooks take the validated arguments as keyword arguments; any of them may be
    `async def`.
    """

    name: str
    """Name inside the namespace (`comment`); the model sees `<namespace>__<name>`."""
    description: str
    """What the tool does, as the model reads it."""
    parameters: Mapping[str, Any]
    """JSON schema of the arguments (an object schema)."""
    handler: Callable[..., Any]
    """Does the work: `handler(**arguments) -> result` (JSON-serializable preferred)."""
    write: bool = False
    """True when the tool changes the world: it then runs only through two-phase confirmation."""
    target: str | Callable[..., str] | None = None
    """For writes: the resource acted on, an argument name or `fn(**arguments) -> str`."""
    preflight: (
        Callable[..., Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None] | None
    ) = None
    """For writes: the dry run, `fn(**arguments) -> preview`; raise `PreflightError` to refuse."""
    reconcile: Callable[[IntentRecord], Reconciliation | bool | Awaitable[Any] | None] | None = None
    """For writes: after a transport timeout, find out whether the change was applied."""
    affected: Callable[[Mapping[str, Any], Any], Iterable[str]] | None = None
    """For writes: resource ids a result touched, `fn(arguments, result)`, for receipts."""
    transport_errors: tuple[type[BaseException], ...] = ()
    """Extra exception types meaning "the outcome is unknown" (e.g. `httpx.TimeoutException`)."""
    validator: Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the name and compile the schema now, so mistakes surface at import time."""
        if not isinstance(self.name, str) or not _LOCAL.match(self.name):
            msg = (
                f"invalid tool name {self.name!r}: use letters, digits, '_' or '-', starting with "
                "a letter or digit"
            )
            raise ManifestConfigError(msg)
        if not callable(self.handler):
            msg = f"tool {self.name!r}: handler must be callable, got {self.handler!r}"
            raise ManifestConfigError(msg)
        try:
            validator = compile_schema(self.parameters, where=f"tool {self.name!r} parameters")
        except ValueError as exc:
            raise ManifestConfigError(str(exc)) from exc
        object.__setattr__(self, "validator", validator)
        if self.write and isinstance(self.target, str):
            props = self.parameters.get("properties", {})
            if self.target not in props:
                msg = (
                    f"tool {self.name!r}: target field {self.target!r} is not a parameter "
                    f"(parameters: {', '.join(sorted(props)) or 'none'})"
                )
                raise ManifestConfigError(msg)

    def target_of(self, arguments: Mapping[str, Any]) -> str:
        """The resource this call acts on (empty when the tool declares none)."""
        if self.target is None:
            return ""
        if isinstance(self.target, str):
            value = arguments.get(self.target)
            return "" if value is None else str(value)
        return str(self.target(**arguments))


class CapabilityManifest:
    """A namespace and the tools it owns.

    Example:
        ```python
        repo = CapabilityManifest(
            "repo",
            [
                Capability("get_issue", "Read one issue.", GET_SCHEMA, tracker.get_issue),
                Capability("comment", "Comment on an issue.", COMMENT_SCHEMA, tracker.comment,
                         write=True, target="issue", preflight=tracker.preview_comment,
                         reconcile=tracker.find_comment),
            ],
            description="the issue tracker of the acme/web repository",
        )
        repo.qualified_names  # ('repo__get_issue', 'repo__comment')
        ```

    Raises:
        ManifestConfigError: a bad namespace, a tool name that is too long once namespaced,
            a duplicate tool, or an invalid schema.
    """

    def __init__(
        self,
        namespace: str,
        tools: Iterable[Capability],
        *,
        description: str = "",
        prompt: str = "",
    ) -> None:
        """Validate the namespace and every tool's full name."""
        if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
            msg = (
                f"invalid namespace {namespace!r}: start with a letter, then letters, digits, "
                f"'-' or single '_' (never {SEPARATOR!r}, the separator)"
            )
            raise ManifestConfigError(msg)
        if namespace.endswith("_"):
            msg = f"invalid namespace {namespace!r}: it must not end with '_'"
            raise ManifestConfigError(msg)
        self.namespace = namespace
        self.description = " ".join(description.split())
        self.prompt = prompt.strip()
        self.specs: dict[str, Capability] = {}
        for spec in tools:
            _check_new(
                spec, Capability, "name", self.specs, f"manifest {namespace!r}", "tools named"
            )
            full = self.qualify(spec.name)
            if len(full) > MAX_NAME_LENGTH or not PROVIDER_SAFE_NAME.match(full):
                msg = (
                    f"tool name {full!r} is {len(full)} characters; providers accept at most "
                    f"{MAX_NAME_LENGTH}: shorten the namespace or the tool name"
                )
                raise ManifestConfigError(msg)
            self.specs[spec.name] = spec
        if not self.specs:
            msg = f"manifest {namespace!r} has no tools"
            raise ManifestConfigError(msg)

    def __repr__(self) -> str:
        return f"CapabilityManifest({self.namespace!r}, tools={list(self.specs)})"

    def qualify(self, local: str) -> str:
        """The provider-facing name of tool `local`: `<namespace>__<local>`."""
        return f"{self.namespace}{SEPARATOR}{local}"

    @property
    def qualified_names(self) -> tuple[str, ...]:
        """Provider-facing names of all tools, in declaration order."""
        return tuple(self.qualify(n) for n in self.specs)

    @property
    def write_names(self) -> tuple[str, ...]:
        """Provider-facing names of the write tools."""
        return tuple(self.qualify(n) for n, s in self.specs.items() if s.write)

    def owns(self, name: str) -> bool:
        """Whether `name` is one of this manifest's provider-facing names."""
        parts = split_name(name)
        return parts is not None and parts[0] == self.namespace and parts[1] in self.specs

    def spec(self, name: str) -> Capability:
        """The spec of the provider-facing `name`.

        Raises:
            UnknownToolError: the namespace or the tool is not this manifest's.
        """
        parts = split_name(name)
        if parts is None or parts[0] != self.namespace:
            msg = f"{name!r} is not a tool of namespace {self.namespace!r}"
            raise UnknownToolError(name, ErrorCode.UNKNOWN_NAMESPACE, msg, self.qualified_names)
        if parts[1] not in self.specs:
            hint = did_you_mean_hint(name, self.qualified_names)
            msg = f"namespace {self.namespace!r} has no tool {parts[1]!r}{hint}"
            raise UnknownToolError(name, ErrorCode.UNKNOWN_TOOL, msg, self.qualified_names)
        return self.specs[parts[1]]

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """The arguments as a dict once they satisfy the tool's schema.

        Raises:
            UnknownToolError: `name` is not this manifest's.
            ArgumentError: the arguments break the schema (each problem names its field).
        """
        spec = self.spec(name)
        problems = check_arguments(spec.validator, arguments)
        if problems:
            raise ArgumentError(name, problems)
        return dict(arguments)

    def execute(self, name: str, arguments: Any) -> Any:
        """Validate, then run a read tool's handler.

        Raises:
            UnknownToolError, ArgumentError: before anything runs.
            WriteNotGuardedError: `name` is a write tool (run it through an `IntentGuard`).
        """
        args = self._prepare(name, arguments)
        result = self.specs[split_name(name)[1]].handler(**args)  # type: ignore[index]
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if close is not None:
                close()
            msg = f"{name} has an async handler; call aexecute()"
            raise TypeError(msg)
        return result

    async def aexecute(self, name: str, arguments: Any) -> Any:
        """Async `execute`: awaits async handlers, runs sync ones in a worker thread."""
        args = self._prepare(name, arguments)
        handler = self.specs[split_name(name)[1]].handler  # type: ignore[index]
        return await call_async(handler, **args)

    def _prepare(self, name: str, arguments: Any) -> dict[str, Any]:
        args = self.validate(name, arguments)
        if self.spec(name).write:
            msg = (
                f"{name} changes the world and runs only through two-phase confirmation "
                "(IntentGuard / ManifestMiddleware(guard=...)), never directly"
            )
            raise WriteNotGuardedError(msg)
        return args


class ManifestRegistry:
    """Several manifests with distinct namespaces: resolve any provider-facing tool name."""

    def __init__(self, manifests: Iterable[CapabilityManifest]) -> None:
        """Index the manifests by namespace.

        Raises:
            ManifestConfigError: no manifest, or two with one namespace.
        """
        self.manifests: dict[str, CapabilityManifest] = {}
        where, twice = "the registry", "manifests with the namespace"
        for manifest in manifests:
            _check_new(manifest, CapabilityManifest, "namespace", self.manifests, where, twice)
            self.manifests[manifest.namespace] = manifest
        if not self.manifests:
            msg = "at least one manifest is required"
            raise ManifestConfigError(msg)

    @property
    def names(self) -> tuple[str, ...]:
        """Every provider-facing tool name, manifest by manifest."""
        return tuple(n for m in self.manifests.values() for n in m.qualified_names)

    def owns(self, name: str) -> bool:
        """Whether some manifest owns `name`."""
        parts = split_name(name)
        return (
            parts is not None and parts[0] in self.manifests and self.manifests[parts[0]].owns(name)
        )

    def resolve(self, name: str) -> tuple[CapabilityManifest, Capability]:
        """The manifest and spec of `name`.

        Raises:
            UnknownToolError: reason `unknown_namespace` (with the bound namespaces) or
                `unknown_tool` (with that namespace's tools and a "did you mean" hint).
        """
        parts = split_name(name)
        namespace = parts[0] if parts else None
        if namespace is None or namespace not in self.manifests:
            known = ", ".join(repr(n) for n in self.manifests)
            what = f"namespace {namespace!r}" if namespace else f"a namespace in {name!r}"
            hint = did_you_mean_hint(name, self.names)
            msg = f"there is no {what}; bound namespaces: {known}{hint}"
            raise UnknownToolError(name, ErrorCode.UNKNOWN_NAMESPACE, msg, self.names)
        manifest = self.manifests[namespace]
        return manifest, manifest.spec(name)
