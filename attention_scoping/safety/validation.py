"""JSON-Schema validation of tool arguments, reported as problems that name the field.

A model repairs a call best when told exactly which field is wrong and how, so each problem
carries the field name, its path inside the arguments (`labels[0]`) and a one-line message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator

from attention_scoping.safety.errors import ManifestConfigError

__all__ = ["ArgumentProblem", "check_arguments", "compile_schema"]

_JSON_TYPES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


@dataclass(frozen=True)
class ArgumentProblem:
    """One way the arguments break the schema."""

    field: str | None
    """The property concerned (the missing or unexpected one for those errors); None = root."""
    path: str
    """Where it sits in the arguments, e.g. `labels[0]` or `author.email`; empty for the root."""
    message: str
    """What is wrong, in one line."""
    rule: str
    """The JSON-Schema keyword that failed (`required`, `type`, `enum`, ...)."""

    def as_dict(self) -> dict[str, Any]:
        """The problem as JSON-ready data."""
        return {"field": self.field, "path": self.path, "message": self.message, "rule": self.rule}


def compile_schema(schema: Mapping[str, Any], *, where: str = "schema") -> Validator:
    """A validator for `schema` (its `$schema` draft, 2020-12 by default), checked now.

    Raises:
        ManifestConfigError: the schema itself is invalid, or does not describe an object.
    """
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        msg = f"{where} is not a valid JSON schema: {exc.message}"
        raise ManifestConfigError(msg) from exc
    if schema.get("type", "object") != "object":
        msg = f'{where} must describe an object ("type": "object"), not {schema.get("type")!r}'
        raise ManifestConfigError(msg)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _path(parts: Sequence[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(base: str, name: str) -> str:
    return f"{base}.{name}" if base else name


def _kind(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(error: ValidationError) -> ArgumentProblem:
    base = _path(list(error.absolute_path))
    leaf = next((p for p in reversed(error.absolute_path) if isinstance(p, str)), None)
    rule = str(error.validator)
    instance = error.instance
    if rule == "required" and isinstance(instance, Mapping):
        missing = [n for n in error.validator_value if n not in instance]
        name = missing[0] if missing else None
        if name is not None:
            return ArgumentProblem(
                name, _join(base, name), f"missing required field '{_join(base, name)}'", rule
            )
    if rule == "additionalProperties" and isinstance(instance, Mapping):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in instance if k not in allowed)
        if extra:
            names = ", ".join(f"'{k}'" for k in extra)
            valid = ", ".join(sorted(allowed)) or "none"
            return ArgumentProblem(
                extra[0],
                _join(base, extra[0]),
                f"unexpected field {names} (allowed: {valid})",
                rule,
            )
    where = f"'{base}'" if base else "the arguments"
    if rule == "type":
        expected = error.validator_value
        wanted = " or ".join(expected) if isinstance(expected, list) else str(expected)
        message = f"{where} must be {wanted}, got {_kind(instance)} {_show(instance)}"
    elif rule == "enum":
        choices = ", ".join(_show(v) for v in error.validator_value)
        message = f"{where} must be one of {choices}, got {_show(instance)}"
    elif rule == "const":
        message = f"{where} must be {_show(error.validator_value)}, got {_show(instance)}"
    else:
        message = f"{where}: {error.message}"
    return ArgumentProblem(leaf, base, message, rule)


def check_arguments(
    validator: Validator, arguments: Any, *, limit: int = 5
) -> list[ArgumentProblem]:
    """Problems of `arguments` against the schema, most relevant first; empty when valid."""
    errors = list(validator.iter_errors(arguments))
    if not errors:
        return []
    first = best_match(errors)
    rest = sorted(
        (e for e in errors if e is not first),
        key=lambda e: (len(e.absolute_path), _path(list(e.absolute_path))),
    )
    return [_problem(e) for e in [first, *rest][:limit]]
