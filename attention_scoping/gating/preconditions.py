"""Tool preconditions on agent state: a callable, or a declarative `{"key": value}` mapping.

A tool whose precondition fails is hidden from the model and refused if called anyway, with the
unmet condition named (e.g. "requires state authenticated == True (is False)").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from attention_scoping.common.failures import exception_line
from attention_scoping.gating.errors import PreconditionTypeError

Precondition: TypeAlias = Callable[[Mapping[str, Any]], bool] | Mapping[str, Any]
"""`callable(state) -> bool`, or `{"authenticated": True, "user.role": "admin"}`: every key
(dots walk into nested mappings) must equal its value in state, type included (`1` and `1.0`
do not satisfy `True`)."""

_MISSING = object()


def _lookup(state: Mapping[str, Any], path: str) -> Any:
    value: Any = state
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def strictly_equal(actual: Any, expected: Any) -> bool:
    """Equality of JSON values that respects their kinds: `True` matches only `True` (not `1`
    or `1.0`), a string only a string; numbers compare by value (`1 == 1.0`)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and actual == expected
    if isinstance(expected, str):
        return isinstance(actual, str) and actual == expected
    if isinstance(expected, Mapping):
        return (
            isinstance(actual, Mapping)
            and set(actual) == set(expected)
            and all(strictly_equal(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(strictly_equal(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(type(actual) is type(expected) and actual == expected)


def unmet(precondition: Precondition | None, state: Mapping[str, Any]) -> str | None:
    """None when `precondition` holds in `state`, else a sentence naming what is unmet."""
    if precondition is None:
        return None
    if isinstance(precondition, Mapping):
        for path, expected in precondition.items():
            actual = _lookup(state, str(path))
            if actual is _MISSING:
                return f"requires state {path} == {expected!r} (it is not set)"
            if not strictly_equal(actual, expected):
                return f"requires state {path} == {expected!r} (it is {actual!r})"
        return None
    try:
        ok = bool(precondition(state))
    except Exception as exc:  # a broken check must hide the tool, not crash the agent
        return f"precondition {_label(precondition)} raised {exception_line(exc)}"
    return None if ok else f"precondition {_label(precondition)} is not met"


def _label(check: Callable[..., Any]) -> str:
    doc = (getattr(check, "__doc__", None) or "").strip().splitlines()
    name = getattr(check, "__name__", type(check).__name__)
    if name == "<lambda>" and doc:
        return repr(doc[0])
    return repr(name) + (f" ({doc[0]})" if doc else "")


def validate(preconditions: Mapping[str, Precondition]) -> dict[str, Precondition]:
    """Check the shape of a `{tool name: precondition}` map at construction.

    Raises:
        PreconditionTypeError: (a TypeError) a precondition that is neither callable nor a mapping.
    """
    out: dict[str, Precondition] = {}
    for name, check in preconditions.items():
        if not (callable(check) or isinstance(check, Mapping)):
            msg = (
                f"precondition of {name!r} must be a callable(state) -> bool or a mapping, "
                f"not {type(check).__name__}"
            )
            raise PreconditionTypeError(msg)
        out[str(name)] = check
    return out
