"""`execute_tool`'s two halves: check a call (name, permission, size, schema), then run it.

The check is pure; running needs the LangChain tool and lets LangGraph's interrupts (an approval
waiting for a human) pass through. Every other outcome is a payload, never an exception: a tool
whose exception cannot even be turned into text included, and an `execute_tool` call missing a
required part (`execute_call_refusal`, instead of LangChain's generic validation message).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphBubbleUp
from pydantic import ValidationError

from attention_scoping.common.errors import ErrorCode, Payload, render_payload
from attention_scoping.common.failures import exception_text
from attention_scoping.common.limits import JsonLimits, json_result, load_json_text, measure
from attention_scoping.common.text import did_you_mean
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gateway.catalog import EXECUTE_TOOL, SEARCH_TOOL_CATALOG, Catalog
from attention_scoping.gateway.payloads import (
    clip,
    failure_payload,
    invalid_arguments_payload,
    problem,
    result_too_large_payload,
    success_payload,
    unknown_tool_payload,
)
from attention_scoping.safety.validation import check_arguments, compile_schema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from langchain_core.tools import BaseTool

__all__ = [
    "EXECUTE_PARAMETERS",
    "Admitted",
    "ArgumentChecker",
    "Checked",
    "arun_tool",
    "execute_call_refusal",
    "run_tool",
]

logger = logging.getLogger(__name__)


EXECUTE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {"type": "string", "description": "Exact name of the tool to run."},
        "arguments": {
            "type": "object",
            "description": "The tool's arguments, as its schema describes them.",
        },
    },
    "required": ["tool_name", "arguments"],
}
"""`execute_tool`'s own parameters, as the model is shown them."""


def _call_problems(error: ValidationError) -> tuple[list[dict[str, Any]], Any]:
    """The problems of a refused `execute_tool` call and the tool name it gave, if any."""
    problems: list[dict[str, Any]] = []
    given: Any = None
    for item in error.errors():
        field = str(item.get("loc", ("",))[0]) if item.get("loc") else ""
        received = item.get("input")
        if isinstance(received, dict) and isinstance(received.get("tool_name"), str):
            given = received["tool_name"]
        what = "is missing" if item.get("type") == "missing" else "is not valid"
        detail = EXECUTE_PARAMETERS["properties"].get(field, {}).get("description", "")
        message = f"{field or 'the call'} {what}. {detail}".strip()
        problems.append(problem(message, "required", field))
    return problems, given


def execute_call_refusal(error: Exception) -> str:
    """Our answer (rendered JSON) to an `execute_tool` call refused before it reached the
    gateway (a required argument missing): what is wrong, `execute_tool`'s own parameters and
    the exact next call, instead of LangChain's generic validation message."""
    problems, given = (
        _call_problems(error)
        if isinstance(error, ValidationError)
        else ([problem(exception_text(error), "type")], None)
    )
    if isinstance(given, str) and given:
        step = (
            f"Call {EXECUTE_TOOL}(tool_name={clip(given)!r}, arguments={{...}}) with the "
            "arguments as one JSON object ({} when the tool takes none)."
        )
    else:
        step = (
            f"Call {EXECUTE_TOOL}(tool_name=..., arguments={{...}}) with a tool's exact name; "
            f"find it with {SEARCH_TOOL_CATALOG}(query=...)."
        )
    return render_payload(
        {
            "error": ErrorCode.INVALID_ARGUMENTS,
            "tool": EXECUTE_TOOL,
            "message": f"{EXECUTE_TOOL} was not run: its call is missing a required part.",
            "problems": problems or [problem("the call is not valid", "type")],
            "parameters": EXECUTE_PARAMETERS,
            "next_step": step,
        }
    )


@dataclass(frozen=True)
class Checked:
    """A call that passed the gateway's checks: the tool and the validated arguments."""

    spec: ToolSpec
    arguments: dict[str, Any]

    @property
    def entry(self) -> ToolSpec:
        """The checked tool (the name older code reads)."""
        return self.spec


Parsed = tuple[Mapping[str, Any], None] | tuple[None, dict[str, Any]]


def _parse(arguments: Any, limits: JsonLimits) -> Parsed:
    """`(arguments as a mapping, None)`, or `(None, the problem)` saying why they are not one."""
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}, None
        try:
            value, exceeded = load_json_text(arguments, limits)
        except ValueError:
            message = "arguments must be a JSON object, got a string that is not JSON"
            return None, problem(message, "type")
        if exceeded is not None:
            return None, problem(f"the arguments are too large: {exceeded.message}", exceeded.rule)
        arguments = value
    if arguments is None:
        return {}, None
    if not isinstance(arguments, Mapping):
        return None, problem(
            f"arguments must be a JSON object, got {type(arguments).__name__}", "type"
        )
    exceeded = measure(arguments, limits)
    if exceeded is not None:
        return None, problem(f"the arguments are too large: {exceeded.message}", exceeded.rule)
    return arguments, None


class ArgumentChecker:
    """Checks calls against the catalog: the tool exists and is allowed, the arguments are a
    JSON object within the size limits, match the schema and name no unknown parameter."""

    def __init__(
        self, catalog: Catalog, *, limits: JsonLimits, reject_unknown_arguments: bool = True
    ) -> None:
        """Compile every tool's schema now (a broken schema fails at construction).

        Raises:
            ValueError: a tool's parameters are not a valid JSON object schema.
        """
        self.catalog = catalog
        self.limits = limits
        self.reject_unknown_arguments = reject_unknown_arguments
        self._validators: dict[str, Validator] = {
            name: compile_schema(spec.parameters, where=f"schema of {name!r}")
            for name, spec in catalog.specs.items()
        }

    def _unknown(self, tool_name: object, state: Mapping[str, Any] | None) -> Payload | None:
        """The refusal of a call this caller may not run (`unknown_tool`, `unauthorized`)."""
        allowed = self.catalog.allowed(state)
        if tool_name in self.catalog and tool_name in allowed:
            return None
        return Payload(
            unknown_tool_payload(
                tool_name, known=tool_name in self.catalog, hint=did_you_mean(tool_name, allowed)
            )
        )

    def _extra(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        extra = sorted(str(k) for k in set(arguments) - set(spec.properties))
        if not extra:
            return None
        valid = ", ".join(spec.properties) or "none"
        names = ", ".join(repr(k) for k in extra)
        return problem(
            f"unknown argument {names} (valid: {valid})", "additionalProperties", extra[0]
        )

    def check(
        self, tool_name: object, arguments: Any, *, state: Mapping[str, Any] | None = None
    ) -> Checked | Payload:
        """The checked call, or an error payload with a `next_step` (nothing ran)."""
        refused = self._unknown(tool_name, state)
        if refused is not None:
            return refused
        spec = self.catalog.specs[str(tool_name)]
        parsed, bad = _parse(arguments, self.limits)
        if parsed is None:
            return invalid_arguments_payload(spec, [bad or problem("invalid arguments", "type")])
        problems = [p.as_dict() for p in check_arguments(self._validators[spec.name], parsed)]
        if self.reject_unknown_arguments and not any(
            p["rule"] == "additionalProperties" for p in problems
        ):
            extra = self._extra(spec, parsed)
            if extra is not None:
                problems.append(extra)
        if problems:
            return invalid_arguments_payload(spec, problems)
        return Checked(spec, dict(parsed))


def _finish(call: Admitted, result: Any, limits: JsonLimits) -> Payload:
    value, exceeded, preview = json_result(result, limits)
    if exceeded is not None:
        logger.info(
            "gateway tool %s returned a result over the limits: %s", call.spec.name, exceeded
        )
        return result_too_large_payload(call.spec, exceeded, call.approval, preview)
    return success_payload(call.spec, value, call.approval)


def _failed(spec: ToolSpec, exc: Exception) -> Payload:
    """The failure payload of a tool that raised; a LangGraph interrupt is raised on."""
    if isinstance(exc, GraphBubbleUp):
        raise exc
    logger.info("gateway tool %s failed: %s", spec.name, exception_text(exc))
    return failure_payload(spec, exc)


@dataclass(frozen=True)
class Admitted:
    """A checked call cleared to run: the tool, its spec, the arguments to run it with and, for
    a write tool, the approval receipt (None otherwise)."""

    tool: BaseTool
    spec: ToolSpec
    arguments: dict[str, Any]
    approval: Mapping[str, Any] | None = None


def run_tool(call: Admitted, limits: JsonLimits) -> Payload:
    """Run an admitted call: the success, failure or oversized-result payload."""
    try:
        result = call.tool.invoke(call.arguments)
    except Exception as exc:
        return _failed(call.spec, exc)
    return _finish(call, result, limits)


async def arun_tool(call: Admitted, limits: JsonLimits) -> Payload:
    """Async form of `run_tool` (async tools are awaited)."""
    try:
        result = await call.tool.ainvoke(call.arguments)
    except Exception as exc:
        return _failed(call.spec, exc)
    return _finish(call, result, limits)
