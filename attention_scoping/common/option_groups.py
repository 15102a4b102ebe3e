"""Keyword options grouped into small frozen dataclasses: presets, and the
shim that maps a release's old keyword arguments into their groups with one DeprecationWarning.

Framework-free; each middleware's `options` module defines its groups on top of this.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any, TypeVar

from attention_scoping.common.options import check_choice

G = TypeVar("G")

DEPRECATED_PREFIX = "Deprecated keyword option"
"""How every deprecation message of an old keyword option starts (a filter can match it)."""

REPR_LIMIT = 60
"""Longest value shown in a deprecation message's new spelling."""


def resolve_group(
    label: str,
    value: G | str,
    group: type[G],
    presets: Mapping[str, G],
    error: type[ValueError] = ValueError,
) -> G:
    """The group `value` names: itself, or the preset of that name; else `error` naming the
    presets and the group class."""
    if isinstance(value, group):
        return value
    if isinstance(value, str) and value in presets:
        return presets[value]
    valid = [f"'{name}'" for name in presets] + [f"a {group.__name__}(...)"]
    listed = valid[0] if len(valid) == 1 else f"{', '.join(valid[:-1])} or {valid[-1]}"
    msg = f"{label} must be {listed}, not {value!r}"
    raise error(msg)


@dataclasses.dataclass(frozen=True)
class Moved:
    """Where an old keyword option lives now: the constructor's `group` argument and its
    `field` (the group's dataclass type is `kind`)."""

    group: str
    field: str
    kind: type[Any]


def moved_into(group: str, kind: type[Any], same: str = "", **renamed: str) -> dict[str, Moved]:
    """The `Moved` entries of old keywords that became fields of `group` (dataclass `kind`):
    the names in `same` (separated by spaces) keep their name; `renamed` maps an old keyword
    to its field."""
    fields = {**{name: name for name in same.split()}, **renamed}
    return {old: Moved(group, field, kind) for old, field in fields.items()}


def regroup(
    owner: str,
    deprecated: Mapping[str, Any],
    moved: Mapping[str, Moved],
    *,
    error: type[ValueError] = ValueError,
    stacklevel: int = 3,
) -> dict[str, dict[str, Any]]:
    """Map old keyword arguments to `{group argument: {field: value}}`; one DeprecationWarning
    names the new spelling. An argument that never existed raises `TypeError` as Python does; a
    value outside its group's `CHOICES` raises `error` under the old name."""
    for name, value in deprecated.items():
        if name not in moved:
            msg = f"{owner}.__init__() got an unexpected keyword argument {name!r}"
            raise TypeError(msg)
        choices = getattr(moved[name].kind, "CHOICES", {}).get(moved[name].field)
        if choices is not None:
            check_choice(name, value, choices, error)
    grouped: dict[str, dict[str, Any]] = {}
    for name, value in deprecated.items():
        grouped.setdefault(moved[name].group, {})[moved[name].field] = value
    if grouped:
        kinds = {m.group: m.kind.__name__ for m in moved.values()}
        spelling = ", ".join(
            f"{group}={kinds[group]}({_fields(fields)})" for group, fields in grouped.items()
        )
        old = ", ".join(deprecated)
        s = "s" if len(deprecated) > 1 else ""
        msg = (
            f"{DEPRECATED_PREFIX}{s} of {owner}: {old}; pass {spelling} instead "
            f"(the old name{s} will be removed in the next release)"
        )
        warnings.warn(msg, DeprecationWarning, stacklevel=stacklevel)
    return grouped


def with_fields(group: G, fields: Mapping[str, Any] | None) -> G:
    """`group` with `fields` replaced (validated again by the group's `__post_init__`)."""
    return dataclasses.replace(group, **fields) if fields else group  # type: ignore[type-var]


def resolve_moved(
    label: str,
    value: G | str,
    group: type[G],
    presets: Mapping[str, G],
    moved: Mapping[str, Mapping[str, Any]],
    error: type[ValueError] = ValueError,
) -> G:
    """`resolve_group`, then the old keyword options `regroup` moved into `label` applied."""
    return with_fields(resolve_group(label, value, group, presets, error), moved.get(label))


def _fields(fields: Mapping[str, Any]) -> str:
    parts = []
    for name, value in fields.items():
        shown = repr(value)
        if len(shown) > REPR_LIMIT:
            shown = "..."
        parts.append(f"{name}={shown}")
    return ", ".join(parts)
