"""LangChain adapters for manifests: their tools as `BaseTool`s, a manifest as a `Scope`.

Every tool built here is classified (`attention_scoping.risk`): a read tool carries
`risk="read"`, so code may open and name it; a write tool carries `risk="write"` with
`requires_approval=False` (its guard is the manifest's two-phase confirmation, not a human
approval), so code never opens it and the repeat guard counts its calls as writes.

A read tool built here validates its arguments with `jsonschema` and runs its handler; any
mistake comes back as a `ToolMessage` with `status="error"` and a JSON body naming the field.
A write tool built here refuses to run on its own: writes run only through
`ManifestMiddleware(guard=...)`, which adds the two-phase confirmation.
"""

from __future__ import annotations

import inspect
import json
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from attention_scoping.common.errors import render_payload
from attention_scoping.safety import payloads
from attention_scoping.safety.errors import ArgumentError, UnknownToolError, WriteNotGuardedError
from attention_scoping.safety.manifests import Capability, CapabilityManifest
from attention_scoping.scopes import Scope

__all__ = [
    "capability_from_tool",
    "manifest_prompt",
    "manifest_scope",
    "manifest_tools",
    "render_result",
]

_CACHE: weakref.WeakKeyDictionary[CapabilityManifest, list[BaseTool]] = weakref.WeakKeyDictionary()

_CODE_PROPERTY = {
    "type": "string",
    "description": (
        "Leave out on the first call: the tool then answers with a preview and a code. To "
        "apply the previewed change, call again with the same arguments and this code."
    ),
}


def render_result(result: Any) -> str:
    """A handler's result as tool-message text (strings as they are, the rest as JSON)."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def shown_parameters(spec: Capability) -> dict[str, Any]:
    """The schema the model sees: a write tool also takes the optional `confirmation_code`."""
    schema = json.loads(json.dumps(dict(spec.parameters)))
    if spec.write:
        schema.setdefault("properties", {})[payloads.CONFIRMATION_FIELD] = _CODE_PROPERTY
    return schema


def _refusal(body: Mapping[str, Any]) -> ToolException:
    return ToolException(render_payload(dict(body)))


@contextmanager
def _refused(name: str) -> Iterator[None]:
    """Turn the manifest's refusals of a call to `name` into `ToolException`s with a payload."""
    try:
        yield
    except ArgumentError as exc:
        raise _refusal(payloads.invalid_arguments(exc)) from exc
    except UnknownToolError as exc:
        raise _refusal(payloads.unknown_tool(exc)) from exc
    except WriteNotGuardedError as exc:
        raise _refusal(payloads.write_not_guarded(name)) from exc


def _metadata(manifest: CapabilityManifest, spec: Capability) -> dict[str, Any]:
    """A manifest tool's metadata: its namespace and its declared risk (see the module doc)."""
    if spec.write:
        return {
            "manifest": manifest.namespace,
            "write": True,
            "risk": "write",
            "requires_approval": False,
        }
    return {"manifest": manifest.namespace, "write": False, "risk": "read"}


def _build(manifest: CapabilityManifest, spec: Capability) -> BaseTool:
    name = manifest.qualify(spec.name)

    def run(**arguments: Any) -> str:
        with _refused(name):
            result = manifest.execute(name, arguments)
        return render_result(result)

    async def arun(**arguments: Any) -> str:
        with _refused(name):
            result = await manifest.aexecute(name, arguments)
        return render_result(result)

    is_async = inspect.iscoroutinefunction(spec.handler)
    return StructuredTool(
        name=name,
        description=spec.description,
        args_schema=shown_parameters(spec),
        func=None if is_async else run,
        coroutine=arun,
        handle_tool_error=True,
        metadata=_metadata(manifest, spec),
    )


def manifest_tools(manifest: CapabilityManifest) -> list[BaseTool]:
    """The manifest's tools as LangChain tools (built once per manifest, then shared)."""
    tools = _CACHE.get(manifest)
    if tools is None:
        tools = [_build(manifest, spec) for spec in manifest.specs.values()]
        _CACHE[manifest] = tools
    return list(tools)


def manifest_scope(manifest: CapabilityManifest) -> Scope:
    """The manifest as a core `Scope` named after its namespace, declaring its read tools
    reads (`reads=`): a selector may open the scope and show those; its write tools load only
    through the model's own `load_context`."""
    tools = manifest_tools(manifest)
    return Scope(
        manifest.namespace,
        manifest.description,
        tools=tools,
        prompt=manifest.prompt,
        reads=[t.name for t in tools if not (t.metadata or {}).get("write")],
    )


def manifest_prompt(manifests: Sequence[CapabilityManifest]) -> str:
    """System-prompt text for an agent bound to `manifests`: what it may touch, and how."""
    lines = ["# Capabilities", "You act only through these namespaces:"]
    for manifest in manifests:
        writes = ", ".join(manifest.write_names) or "none"
        about = manifest.description or "no description"
        lines.append(f"- {manifest.namespace}: {about} (write tools: {writes})")
    if any(m.write_names for m in manifests):
        lines += [
            "",
            "Write tools work in two steps. The first call returns a preview and a "
            f"{payloads.CONFIRMATION_FIELD}; nothing has changed yet. If the preview matches "
            "the request, call the same tool again with the same arguments plus that code. "
            "Never repeat a change that was executed, and never retry one whose outcome is "
            "unknown.",
        ]
    for manifest in manifests:
        if manifest.prompt:
            lines += ["", f"## {manifest.namespace}", manifest.prompt]
    return "\n".join(lines)


def capability_from_tool(
    tool: BaseTool, *, name: str | None = None, write: bool = False, **hooks: Any
) -> Capability:
    """Wrap an existing LangChain tool as a `Capability` (its argument schema becomes the contract).

    `hooks` are the other `Capability` fields (`target`, `preflight`, `reconcile`, `affected`,
    `transport_errors`). Tools that need injected arguments (`ToolRuntime`, state) cannot be
    wrapped: a manifest handler receives only the model's arguments.
    """
    parameters = dict(convert_to_openai_tool(tool)["function"].get("parameters") or {})
    parameters.setdefault("type", "object")

    def handler(**arguments: Any) -> Any:
        return tool.invoke(arguments)

    return Capability(
        name or tool.name,
        tool.description,
        parameters,
        handler,
        write=write,
        **hooks,
    )
