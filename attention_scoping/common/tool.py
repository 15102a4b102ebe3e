"""The one tool record of the package: `ToolSpec`, and the rules every layer reads off it.

Framework-free: catalogs, the gate, the gateway, the radar and the measurements all describe a tool
with a `ToolSpec`; LangChain tools are converted once, in `attention_scoping.adapters.tools`. Two
rules live here and nowhere else: which parameters only the user can give (`critical_parameters`)
and which tools need a human approval before they run (`approval_required`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from attention_scoping.common.options import check_choice
from attention_scoping.common.signature import call_signature, signature_is_complete
from attention_scoping.risk import declared_read, declared_write

SUMMARY_MAX_CHARS = 200
"""One-line summaries are cut here (about 40-60 tokens), so a pool of summaries stays cheap."""

Risk = Literal["read", "write"]
"""A tool either only reads (`read`) or changes something (`write`)."""

RISKS: tuple[Risk, ...] = ("read", "write")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def summarize(text: str, max_chars: int = SUMMARY_MAX_CHARS) -> str:
    """First sentence of `text` on one line, cut at `max_chars` (summaries stay short)."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(first) <= max_chars:
        return first
    cut = first[: max_chars - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


# -- the approval rule -------------------------------------------------------------------------


def summary_lines(header: str, lines: Sequence[tuple[str, str]]) -> str:
    """A tool index: `header`, then one `- name: summary` line per tool in the given (stable)
    order; empty without tools. The gate's summary pool and the gateway's prompt use it."""
    if not lines:
        return ""
    return "\n".join(
        [header, *(f"- {name}: {summary}" if summary else f"- {name}" for name, summary in lines)]
    )


def approval_rule(risk: str | None, requires_approval: bool | None = None) -> bool:
    """Whether a call must be approved by a human: an explicit `requires_approval` wins, else a
    write tool needs approval and a read tool does not. The package's one approval rule
    (`metadata_risk` says what writes; `core.blast_radius` who may open it)."""
    if requires_approval is not None:
        return bool(requires_approval)
    return risk == "write"


MUTATION_KEYS = ("mutation", "mutates")
"""Metadata flags a capability manifest (or a user) may set on a tool that changes state."""


def metadata_risk(metadata: Mapping[str, Any] | None) -> Risk:
    """The risk a tool's metadata declares, failing closed: `read` only when someone declared
    it (`risk="read"`, MCP `readOnlyHint: true`) and nothing declares a write
    (`attention_scoping.risk.declared_read`); everything else, no metadata included, `write`."""
    return "read" if declared_read(metadata or {}) else "write"


def approval_required(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a human approves each call: an explicit `requires_approval` wins, else only a
    declared write (`{"risk": "write"}`, a mutation flag, MCP `destructiveHint: true` or
    `readOnlyHint: false`; `attention_scoping.risk.declared_write`). A tool nobody classified
    may write, so code never opens it, but it is not sent to a human."""
    if not isinstance(metadata, Mapping):
        return False
    explicit = metadata.get("requires_approval")
    return declared_write(metadata) if explicit is None else bool(explicit)


def check_risk(risk: object, *, tool: str = "") -> Risk:
    """`risk` as a `Risk` (None means `read`), or a `ValueError` naming the valid values."""
    if risk is None:
        return "read"
    check_choice(f"tool {tool!r}: risk" if tool else "risk", risk, RISKS)
    return cast("Risk", risk)


# -- critical parameters -----------------------------------------------------------------------


def nullable(schema: Mapping[str, Any]) -> bool:
    """Whether a parameter schema accepts `null` (so the model can always fill it itself)."""
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return isinstance(options, list) and any(
        isinstance(o, Mapping) and o.get("type") == "null" for o in options
    )


def is_critical(
    name: str,
    schema: object,
    *,
    required: Collection[str],
    defaults: Mapping[str, Any] | Collection[str] = (),
) -> bool:
    """A critical parameter is one only the user can give: required, without a schema default
    or a suggested one (`defaults`), and not nullable."""
    if name not in required or name in defaults:
        return False
    spec = schema if isinstance(schema, Mapping) else {}
    return "default" not in spec and not nullable(spec)


def critical_parameters(
    parameters: Mapping[str, Any], defaults: Mapping[str, Any] | Collection[str] = ()
) -> list[str]:
    """The critical parameters (see `is_critical`) of a JSON object schema, in schema order
    (required names the schema does not describe come last)."""
    props = parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    raw = parameters.get("required")
    required = [str(r) for r in raw] if isinstance(raw, list) else []
    names = list(props) + [r for r in required if r not in props]
    return [
        str(n)
        for n in names
        if is_critical(str(n), props.get(n), required=required, defaults=defaults)
    ]


# -- the record --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what the model would be sent, where it came from, and how it may be run.

    Example:
        ```python
        spec = ToolSpec("refund", "refund", "Refund an order.", schema,
                        risk="write", defaults={"reason": "customer request"})
        spec.requires_approval   # True: a write tool
        spec.critical()          # ["order_id"]: required, no default, not nullable
        ```

    Raises:
        ValueError: an unknown `risk`, or `defaults` naming parameters the schema lacks.
    """

    id: str
    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False, compare=False)
    server: str | None = None
    preconditions: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    """Declarative preconditions on agent state (`{"authenticated": True}`), if any."""
    risk: Risk = "read"
    approval: bool | None = None
    """An explicit approval setting; None: writes need approval (`approval_rule`)."""
    defaults: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """Suggested values for parameters the user does not give (beyond the schema defaults)."""

    def __post_init__(self) -> None:
        """Validate the risk and the suggested defaults (configuration errors fail here)."""
        check_risk(self.risk, tool=self.name)
        if self.defaults:
            unknown = sorted(set(self.defaults) - set(self.properties))
            if unknown:
                valid = ", ".join(sorted(self.properties)) or "none"
                msg = (
                    f"tool {self.name!r}: defaults for unknown parameters {unknown}; valid: {valid}"
                )
                raise ValueError(msg)

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> ToolSpec:
        """A spec from a tool dict of any common shape: `{"name", "parameters"}` (plus optional
        `description`, `risk`, `requires_approval`, `defaults`, as `get_tool_schema` discloses),
        an OpenAI-style `{"type": "function", "function": {...}}`, or an Anthropic-style
        `{"name", "input_schema"}`. Lenient: unknown risks read as `read`, defaults for
        parameters the schema lacks are dropped."""
        fn = schema.get("function")
        body: Mapping[str, Any] = fn if isinstance(fn, Mapping) else schema
        name = str(body.get("name", ""))
        params = body.get("parameters", body.get("input_schema"))
        if not isinstance(params, Mapping):
            params = body if "properties" in body else {"type": "object", "properties": {}}
        props = params.get("properties")
        hints = body.get("defaults")
        defaults = (
            {k: v for k, v in hints.items() if isinstance(props, Mapping) and k in props}
            if isinstance(hints, Mapping)
            else {}
        )
        risk = body.get("risk")
        explicit = body.get("requires_approval")
        return cls(
            id=name,
            name=name,
            description=str(body.get("description") or ""),
            parameters=dict(params),
            risk="write" if risk == "write" else "read",
            approval=None if explicit is None else bool(explicit),
            defaults=defaults,
        )

    @property
    def summary(self) -> str:
        """One-line summary (first sentence of the description)."""
        return summarize(self.description)

    @property
    def is_write(self) -> bool:
        """Whether the tool changes something (`risk == "write"`)."""
        return self.risk == "write"

    @property
    def requires_approval(self) -> bool:
        """Whether a call must be approved by a human first (`approval_rule`)."""
        return approval_rule(self.risk, self.approval)

    @property
    def properties(self) -> Mapping[str, Any]:
        """The schema's top-level properties."""
        props = self.parameters.get("properties")
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> list[str]:
        """Required parameters, in schema order."""
        raw = self.parameters.get("required")
        names = set(raw) if isinstance(raw, list) else set()
        return [p for p in self.properties if p in names]

    def parameter_names(self) -> list[str]:
        """Top-level parameter names of the schema, in order."""
        return list(self.properties)

    def suggested_defaults(self) -> dict[str, Any]:
        """Defaults for parameters: the suggested ones first, then the schema's own."""
        out: dict[str, Any] = {}
        for pname, spec in self.properties.items():
            if pname in self.defaults:
                out[pname] = self.defaults[pname]
            elif isinstance(spec, Mapping) and "default" in spec:
                out[pname] = spec["default"]
        return out

    def critical(self) -> list[str]:
        """Parameters only the user can give (`critical_parameters`)."""
        return critical_parameters(self.parameters, self.defaults)

    def signature(self) -> str:
        """The call on one line with its required arguments (`core.signature.call_signature`):
        `create_issue(repo, title, labels: [str], …)`."""
        return call_signature(self.name, self.parameters)

    @property
    def signature_complete(self) -> bool:
        """Whether `signature()` alone is enough to fill every required argument."""
        return signature_is_complete(self.parameters)

    def provider_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function definition (what a provider is sent)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


RankTools = Callable[[str, Sequence[ToolSpec]], list[tuple[str, float]]]
"""`(query, tools) -> [(tool name, score)]`, best first: how the gateway's search and scope
pre-selection rank tools (the gate's `CatalogRanker` is one)."""
