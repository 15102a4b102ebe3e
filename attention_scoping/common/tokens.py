"""Exact token counts offline: one `TokenCounter` per encoding (bpe-openai, else tiktoken).

Without either tokenizer a character estimate is used and labelled as such, so a figure is never
passed off as exact when it is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from attention_scoping.common.extras import install_hint

DEFAULT_ENCODING = "o200k_base"
"""The encoding of current OpenAI models; `cl100k_base` is the other common choice."""

ENCODINGS = ("o200k_base", "cl100k_base")
"""Encodings offered by the command line."""

_CHARS_PER_TOKEN = 4.0
_CHUNK_CHARS = 200_000


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens with one encoding; `exact` is False for the character estimate."""

    encoding: str
    backend: str
    exact: bool
    _encode: Callable[[str], Sequence[int]] | None

    @property
    def label(self) -> str:
        """Human-readable tokenizer name, e.g. 'o200k_base (bpe-openai)'."""
        if self.exact:
            return f"{self.encoding} ({self.backend})"
        return f"estimate: characters / {_CHARS_PER_TOKEN:g} (no tokenizer installed)"

    def count(self, text: str) -> int:
        """Number of tokens in `text` (long texts are counted in chunks at line breaks)."""
        if not text:
            return 0
        if self._encode is None:
            return max(1, round(len(text) / _CHARS_PER_TOKEN))
        total = 0
        for chunk in _chunks(text):
            total += len(self._encode(chunk))
        return total


def _chunks(text: str) -> Iterable[str]:
    """Split very long text between `},` and ` {` (or at newlines) so encoders stay within
    limits without changing the count."""
    start = 0
    while len(text) - start > _CHUNK_CHARS:
        cut = -1
        for sep in ("}, {", "\n"):
            cut = text.rfind(sep, start + _CHUNK_CHARS // 2, start + _CHUNK_CHARS)
            if cut != -1:
                # After "}," : BPE pre-tokenizers keep "}," together and start " {" anew, so
                # this cut leaves the token count exactly as for the whole text.
                cut += 2 if sep == "}, {" else 0
                break
        if cut == -1:
            cut = start + _CHUNK_CHARS
        yield text[start:cut]
        start = cut
    yield text[start:]


@lru_cache(maxsize=8)
def get_counter(encoding: str = DEFAULT_ENCODING, *, allow_estimate: bool = True) -> TokenCounter:
    """A counter for `encoding`: bpe-openai, else tiktoken, else the labelled estimate.

    Raises:
        ValueError: unknown encoding, or no tokenizer available and `allow_estimate` is False.
    """
    try:
        import bpe_openai

        if encoding not in bpe_openai.list_encoding_names():
            msg = f"unknown encoding {encoding!r}; valid: {', '.join(ENCODINGS)}"
            raise ValueError(msg)
        enc = bpe_openai.get_encoding(encoding)
        return TokenCounter(encoding, "bpe-openai", True, enc.encode)
    except ImportError:
        pass
    try:
        import tiktoken

        tk = tiktoken.get_encoding(encoding)
        return TokenCounter(encoding, "tiktoken", True, tk.encode)
    except Exception:
        if not allow_estimate:
            msg = (
                f"no tokenizer for {encoding!r}: install the 'tokens' extra: "
                f"{install_hint('tokens')}"
            )
            raise ValueError(msg) from None
    return TokenCounter(encoding, "estimate", False, None)
