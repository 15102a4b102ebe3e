"""Tool Attention gating: intent ranking, preconditions, two-phase schema disclosure, a hard gate.

An add-on over the core (`attention_scoping.middleware` and its public modules). Names here
load on first use, so importing the package costs nothing; `encoders`, `cache` and `ranking`
need numpy (the `gate` extra adds the default MiniLM ONNX encoder). `selectors.EncoderSelector`
is the core's scope selector on the same encoder.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_scoping.gating.catalog_ranker import CatalogRanker, default_ranker
    from attention_scoping.gating.encoders import (
        Encoder,
        EncoderUnavailableError,
        HashingEncoder,
        LangChainEncoder,
        MiniLMOnnxEncoder,
        SentenceTransformerEncoder,
    )
    from attention_scoping.gating.errors import GateConfigError
    from attention_scoping.gating.gate import Decision, Verdict
    from attention_scoping.gating.middleware import ToolAttentionMiddleware, explain
    from attention_scoping.gating.options import Promotion, SummaryPool
    from attention_scoping.gating.ranking import (
        BM25Ranker,
        DenseRanker,
        HybridRanker,
        Ranker,
        build_ranker,
    )
    from attention_scoping.gating.selectors import EncoderSelector
    from attention_scoping.gating.state import GateState

_EXPORTS = {
    "BM25Ranker": "ranking",
    "build_ranker": "ranking",
    "CatalogRanker": "catalog_ranker",
    "Decision": "gate",
    "default_ranker": "catalog_ranker",
    "DenseRanker": "ranking",
    "Encoder": "encoders",
    "EncoderSelector": "selectors",
    "EncoderUnavailableError": "encoders",
    "explain": "middleware",
    "GateConfigError": "errors",
    "GateState": "state",
    "HashingEncoder": "encoders",
    "HybridRanker": "ranking",
    "LangChainEncoder": "encoders",
    "MiniLMOnnxEncoder": "encoders",
    "Promotion": "options",
    "Ranker": "ranking",
    "SentenceTransformerEncoder": "encoders",
    "SummaryPool": "options",
    "ToolAttentionMiddleware": "middleware",
    "Verdict": "gate",
}

__all__ = [
    "BM25Ranker",
    "CatalogRanker",
    "Decision",
    "DenseRanker",
    "Encoder",
    "EncoderSelector",
    "EncoderUnavailableError",
    "GateConfigError",
    "GateState",
    "HashingEncoder",
    "HybridRanker",
    "LangChainEncoder",
    "MiniLMOnnxEncoder",
    "Promotion",
    "Ranker",
    "SentenceTransformerEncoder",
    "SummaryPool",
    "ToolAttentionMiddleware",
    "Verdict",
    "build_ranker",
    "default_ranker",
    "explain",
]


def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    """The exported names."""
    return sorted(__all__)
