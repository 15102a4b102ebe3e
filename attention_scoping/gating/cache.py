"""On-disk cache of tool vectors keyed by content hash: a restart does not re-embed the catalog.

One `.npz` file per encoder (named by a hash of the encoder id) maps sha256(encoder id + tool
text) to a vector. A changed tool has a new key, so only it is embedded again; unchanged tools
are read back. Writes go to a temporary file renamed into place, so readers never see half a
file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attention_scoping.gating.encoders import Encoder

logger = logging.getLogger(__name__)

CACHE_ENV = "ATTENTION_SCOPING_CACHE"
"""Environment variable naming the cache directory."""


def default_cache_dir() -> Path:
    """`$ATTENTION_SCOPING_CACHE`, else `$XDG_CACHE_HOME/attention-scoping`, else ~/.cache/…"""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-scoping"


def text_key(encoder_id: str, text: str) -> str:
    """The cache key of one text under one encoder."""
    return hashlib.sha256(f"{encoder_id}\x00{text}".encode()).hexdigest()


class VectorCache:
    """Vectors of texts under an encoder, from memory, then disk, then the encoder.

    Example:
        ```python
        cache = VectorCache()                    # ~/.cache/attention-scoping
        vectors = cache.vectors(encoder, texts)  # embeds only texts never seen before
        ```
    """

    def __init__(self, directory: str | Path | None = None, *, persist: bool = True) -> None:
        """`directory`: where files go (default `default_cache_dir()`); `persist=False` keeps
        vectors in memory only."""
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.persist = persist
        self._memory: dict[str, dict[str, np.ndarray]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        """Texts served from memory or disk (for tests and reports)."""
        self.misses = 0
        """Texts the encoder had to embed."""

    def path_for(self, encoder_id: str) -> Path:
        """The cache file of an encoder."""
        name = hashlib.sha256(encoder_id.encode()).hexdigest()[:20]
        return self.directory / f"vectors-{name}.npz"

    def _load(self, encoder_id: str) -> dict[str, np.ndarray]:
        table = self._memory.get(encoder_id)
        if table is not None:
            return table
        table = {}
        path = self.path_for(encoder_id)
        if self.persist and path.is_file():
            try:
                with np.load(path, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
                table = {str(k): v for k, v in zip(keys, vectors, strict=True)}
            except (OSError, ValueError, KeyError) as exc:
                logger.warning("ignoring unreadable vector cache %s: %s", path, exc)
        self._memory[encoder_id] = table
        return table

    def _save(self, encoder_id: str, table: dict[str, np.ndarray]) -> None:
        if not self.persist or not table:
            return
        path = self.path_for(encoder_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            keys = np.array(list(table), dtype="U64")
            vectors = np.stack(list(table.values())).astype(np.float32)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, keys=keys, vectors=vectors)
            os.replace(tmp, path)
        except OSError as exc:  # a read-only home must not break the gate
            logger.warning("could not write vector cache %s: %s", path, exc)

    def vectors(self, encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts` (rows in order), embedding and storing only unseen ones."""
        encoder_id = encoder.id
        keys = [text_key(encoder_id, t) for t in texts]
        with self._lock:
            table = self._load(encoder_id)
            missing = sorted(
                {i for i, k in enumerate(keys) if k not in table}, key=keys.__getitem__
            )
            unique: dict[str, int] = {}
            for i in missing:
                unique.setdefault(keys[i], i)
            if unique:
                fresh = encoder.encode([texts[i] for i in unique.values()])
                for key, vector in zip(unique, fresh, strict=True):
                    table[key] = np.asarray(vector, dtype=np.float32)
                self._save(encoder_id, table)
            self.misses += len(unique)
            self.hits += len(keys) - len(missing)
            if not keys:
                return np.zeros((0, 0), dtype=np.float32)
            return np.stack([table[k] for k in keys])
