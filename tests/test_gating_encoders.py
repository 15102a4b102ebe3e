"""Encoders (the real MiniLM ONNX loading path included), the vector cache and the rankers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from attention_scoping.core.text import lexical_tokens, split_identifier, tool_text
from attention_scoping.core.tool import ToolSpec
from attention_scoping.gating import ranking
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import (
    EncoderUnavailableError,
    HashingEncoder,
    LangChainEncoder,
    MiniLMOnnxEncoder,
)
from attention_scoping.gating.ranking import (
    BM25Ranker,
    DenseRanker,
    HybridRanker,
    build_ranker,
    top_rows,
)

SPECS = [
    ToolSpec(
        "w",
        "get_weather",
        "Current weather for a city.",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris."},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
            },
        },
    ),
    ToolSpec("m", "sendEmailMessage", "Send an email to someone.", {"type": "object"}),
    ToolSpec("i", "invoice.create", "Create an invoice for a customer.", {"type": "object"}),
]


class CountingEncoder(HashingEncoder):
    """A HashingEncoder that counts how many texts it embedded."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.encoded = 0

    def encode(self, texts: Any) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts)


def test_text_representations() -> None:
    assert split_identifier("getHTTPResponse_v2.parse-now") == "get http response v2 parse now"
    full = tool_text(SPECS[0])
    assert full == (
        "get weather: Current weather for a city. Parameters: "
        "city: City name, e.g. Paris.; units (metric, imperial)"
    )
    assert tool_text(SPECS[1], "name") == "send email message"
    assert lexical_tokens("The forecasts for getWeather in 2024") == ["forecast", "get", "weather"]
    with pytest.raises(ValueError, match="unknown representation"):
        tool_text(SPECS[0], "everything")  # type: ignore[arg-type]


def test_vector_cache_reuses_and_invalidates(tmp_path: Path) -> None:
    encoder = CountingEncoder()
    texts = [tool_text(s) for s in SPECS]
    first = VectorCache(tmp_path).vectors(encoder, texts)
    assert encoder.encoded == 3
    assert len(list(tmp_path.glob("vectors-*.npz"))) == 1
    # A new process (a fresh cache object) reads every vector back from disk.
    again = VectorCache(tmp_path)
    np.testing.assert_array_equal(again.vectors(encoder, texts), first)
    assert encoder.encoded == 3 and again.hits == 3 and again.misses == 0
    # One tool changes: only it is embedded again.
    changed = [*texts[:2], texts[2] + " Also sends it by post."]
    third = VectorCache(tmp_path)
    out = third.vectors(encoder, changed)
    assert encoder.encoded == 4 and third.misses == 1
    np.testing.assert_array_equal(out[:2], first[:2])
    assert not np.array_equal(out[2], first[2])


def test_unreadable_cache_is_ignored_with_a_warning(tmp_path: Path, caplog: Any) -> None:
    encoder = CountingEncoder()
    cache = VectorCache(tmp_path)
    cache.path_for(encoder.id).write_bytes(b"not a zip file")
    with caplog.at_level(logging.WARNING):
        vectors = cache.vectors(encoder, ["a b"])
    assert vectors.shape == (1, 64) and "ignoring unreadable vector cache" in caplog.text


def test_real_minilm_loads_from_its_package_and_ranks(tmp_path: Path) -> None:
    encoder = MiniLMOnnxEncoder()
    assert encoder.id.startswith("minilm-l6-onnx:8199be6f")  # the packaged file's sha256
    vectors = encoder.encode(["what is the weather in Paris", "weather today in Lyon", "refund"])
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    np.testing.assert_allclose(encoder.encode(["weather today in Lyon"])[0], vectors[1], atol=1e-5)
    hybrid = HybridRanker(DenseRanker(encoder, cache=VectorCache(tmp_path)))
    hybrid.fit(SPECS)
    for query, best in [
        ("will it rain in Oslo tomorrow?", "get_weather"),
        ("mail Bob the report", "sendEmailMessage"),
        ("bill the customer", "invoice.create"),
    ]:
        assert SPECS[int(top_rows(hybrid.scores(query), 1)[0])].name == best, query


def test_missing_gate_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    def unavailable() -> Path:
        raise EncoderUnavailableError("the default encoder needs the 'gate' extra")

    monkeypatch.setattr(MiniLMOnnxEncoder, "_packaged_model", staticmethod(unavailable))
    with caplog.at_level(logging.WARNING):
        assert isinstance(build_ranker("default"), BM25Ranker)
    assert "falls back to BM25" in caplog.text
    with pytest.raises(EncoderUnavailableError, match="gate' extra"):
        build_ranker("hybrid")
    with pytest.raises(EncoderUnavailableError, match="not found"):
        MiniLMOnnxEncoder("/nonexistent/model.onnx")


def test_langchain_embeddings_become_a_hybrid(tmp_path: Path) -> None:
    class Fake(Embeddings):
        model = "fake-1"

        def embed_query(self, text: str) -> list[float]:
            return [1.0, float("weather" in text), 0.0]

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.embed_query(t) for t in texts]

    ranker = build_ranker(Fake(), VectorCache(tmp_path))
    assert isinstance(ranker, HybridRanker)
    assert ranker.dense.encoder.id == "langchain:Fake:fake-1"
    ranker.fit(SPECS)
    assert SPECS[int(top_rows(ranker.scores("weather please"), 1)[0])].name == "get_weather"
    assert isinstance(LangChainEncoder(Fake()).encode(["x", "weather"]), np.ndarray)


def test_hybrid_fuses_min_max_scores_over_candidates(tmp_path: Path) -> None:
    ranker = HybridRanker(DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path)), alpha=0.5)
    ranker.fit(SPECS)
    scores = ranker.scores("send email", np.array([1, 2]))
    assert scores.shape == (2,) and scores[0] == pytest.approx(1.0) and scores[1] == 0.0
    with pytest.raises(ValueError, match="alpha"):
        HybridRanker(DenseRanker(HashingEncoder()), alpha=1.5)


def test_faiss_is_used_for_large_catalogs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (the 'faiss' extra)")
    monkeypatch.setattr(ranking, "FAISS_MIN_TOOLS", 100)
    specs = [ToolSpec(str(i), f"tool_{i}_word{i % 37}", f"does thing {i}", {}) for i in range(300)]
    dense = DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path))
    dense.fit(specs)
    assert dense._faiss is not None
    exact = dense._matrix @ dense.query_vector("tool word5 thing")
    approx = dense.scores("tool word5 thing")
    assert set(top_rows(approx, 5)) == set(top_rows(exact, 5))
