"""The methods `bench` compares: the shipped gate, its encoders, BM25 and ablations.

Every method is the package's `ToolAttentionMiddleware` (its decision and its summary pool),
configured differently; nothing here re-implements ranking. Methods that differ only in what
is disclosed (`no-lazy-loading`, `catalog-pool`) reuse the default gate's decisions and price
the disclosure with the gate's own pool text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from attention_scoping.common.tool import ToolSpec

if TYPE_CHECKING:
    from attention_scoping.gating import ToolAttentionMiddleware
    from attention_scoping.gating.cache import VectorCache

Disclosure = Literal["shipped", "summaries", "catalog-pool"]
"""What a call carries for a decision.

- `shipped`: full schemas of the shown tools plus the gate's summary pool as configured
  (`auto`: the candidates' pool when it fits the pool budget, else nothing).
- `summaries`: one-line summaries of the shown tools, no schema (phase 2 removed: the paper's
  "without lazy loading" ablation).
- `catalog-pool`: full schemas of the shown tools plus a summary pool of every tool (the
  paper's two-phase recipe, `summary_pool="catalog"`).
"""


@dataclass(frozen=True)
class MethodSpec:
    """One configuration of the gate to benchmark."""

    name: str
    description: str
    ranker: str = "default"
    threshold: float | None = None
    """Gate threshold; None keeps the shipped default."""
    detect_names: bool = True
    preconditions: bool = True
    disclosure: Disclosure = "shipped"
    multi_intent: bool = True
    """Hybrid rankers: also rank each part of a multi-part request."""
    calibrated: bool = True
    """Hybrid rankers: scale scores by the request's best raw cosine (and use threshold 0.5)."""

    @property
    def decision_key(self) -> tuple[Any, ...]:
        """Methods with equal keys make identical decisions and share one gate run."""
        return (
            self.ranker,
            self.threshold,
            self.detect_names,
            self.preconditions,
            self.multi_intent,
            self.calibrated,
        )


METHODS: dict[str, MethodSpec] = {
    m.name: m
    for m in (
        MethodSpec("default", "the shipped gate: MiniLM + BM25 hybrid, shipped k/threshold/pool"),
        MethodSpec("dense", "MiniLM int8 ONNX alone (no BM25)", ranker="dense"),
        MethodSpec("bm25", "BM25 alone (no model)", ranker="bm25"),
        MethodSpec("hashing", "hybrid over a model-free hashing encoder", ranker="hashing"),
        MethodSpec(
            "no-multi-intent",
            "default ranking the whole request only (no per-part retrieval)",
            multi_intent=False,
        ),
        MethodSpec(
            "no-calibration",
            "default with scores relative to the best tool and threshold 0",
            calibrated=False,
        ),
        MethodSpec(
            "previous-default",
            "the earlier shipped gate: whole request only, relative scores, threshold 0",
            multi_intent=False,
            calibrated=False,
        ),
        MethodSpec(
            "no-name-detection",
            "default without promoting tools the user names",
            detect_names=False,
        ),
        MethodSpec(
            "no-preconditions",
            "default with tool preconditions ignored",
            preconditions=False,
        ),
        MethodSpec(
            "no-lazy-loading",
            "default's selection sent as one-line summaries only (no schemas)",
            disclosure="summaries",
        ),
        MethodSpec(
            "catalog-pool",
            "default + a summary pool of every tool (the paper's recipe)",
            disclosure="catalog-pool",
        ),
    )
}
"""Built-in methods by name (the order is the report's order)."""

DEFAULT_METHODS = tuple(METHODS)
"""Methods run when `--methods` is not given."""


def threshold_method(threshold: float) -> MethodSpec:
    """The default gate at another threshold (for choosing the default by measurement)."""
    return MethodSpec(
        f"default@threshold={threshold:g}",
        f"the default gate with threshold {threshold:g}",
        threshold=threshold,
    )


def resolve_methods(names: Iterable[str], thresholds: Iterable[float] = ()) -> list[MethodSpec]:
    """Method specs for `names` (built-in names) plus one per extra threshold.

    Raises:
        ValueError: an unknown method name, naming the valid ones.
    """
    out: list[MethodSpec] = []
    for name in names:
        if name not in METHODS:
            msg = f"unknown method {name!r}; valid: {', '.join(METHODS)}"
            raise ValueError(msg)
        out.append(METHODS[name])
    out.extend(threshold_method(t) for t in thresholds)
    return out


def build_gate(
    method: MethodSpec,
    specs: Sequence[ToolSpec],
    k: int,
    cache: VectorCache | None = None,
    *,
    ranker: Any = None,
) -> ToolAttentionMiddleware:
    """The package's gate configured as `method` (not yet fitted); `ranker`, when given, is
    the ranker object to use (benchmarks share one per ranker name across methods).

    Raises:
        ImportError / EncoderUnavailableError: the method's encoder is not installed.
    """
    from attention_scoping.gating import Promotion, ToolAttentionMiddleware

    kwargs: dict[str, Any] = {
        "ranker": method.ranker if ranker is None else ranker,
        "k": k,
        "promotion": Promotion(threshold=method.threshold, detect_names=method.detect_names),
        "cache": cache,
        "emit_events": False,
    }
    if method.preconditions:
        kwargs["preconditions"] = preconditions_of(specs)
    return ToolAttentionMiddleware(**kwargs)


def preconditions_of(specs: Sequence[ToolSpec]) -> dict[str, Mapping[str, Any]]:
    """`{tool id: declarative precondition}` of the specs that declare one (the gate indexes a
    catalog by id)."""
    return {s.id: s.preconditions for s in specs if s.preconditions}
