"""Tool Attention gating: intent ranking, preconditions, two-phase schema disclosure, a hard gate.

Pure parts (`gate`, `text`, `bm25`, `preconditions`, `disclosure`) work anywhere; `encoders`,
`cache` and `ranking` need numpy (the `gate` extra adds the default MiniLM ONNX encoder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

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
    from attention_scoping.gating.state import GateState

_EXPORTS = {
    "BM25Ranker": "ranking",
    "build_ranker": "ranking",
    "CatalogRanker": "catalog_ranker",
    "Decision": "gate",
    "default_ranker": "catalog_ranker",
    "DenseRanker": "ranking",
    "Encoder": "encoders",
    "EncoderUnavailableError": "encoders",
    "explain": "middleware",
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
    "EncoderUnavailableError",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
