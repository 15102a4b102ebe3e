"""One redaction rule for everything the package writes where a model, a log or a file can see it.

Two kinds of text are masked with `MASK`: values the configuration marks as secret (an MCP
server's `env` and `headers` values, whatever `${VAR}` expanded to in its `command`, `args` or
`url`, and the credentials written in a configured URL), wherever they appear, also percent- or
JSON-escaped; and, in diagnostics (errors, logs, stderr), the credentials of any URL in the
text (its userinfo `user:KEY@`, and every query or fragment value, `?api_key=KEY`). Tool results
and listings get only the first kind (`urls=False`): a search result's `?q=cats` is data.
Pure and framework-free; linear in the text's length.

Example:
    ```python
    redact = Redactor(["s3cret-token"])
    redact("auth failed for s3cret-token at https://u:pw@host/x?key=k")
    # 'auth failed for *** at https://***@host/x?key=***'
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "Redactor",
    "redact",
    "redact_url",
    "secret_variants",
    "url_credentials",
]

MASK = "***"
"""What a secret or a URL credential is replaced with."""

MIN_SECRET_CHARS = 4
"""Shorter configured values are not masked: "0" or "1" would mask every digit of a message,
and no credential is that short."""

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s'\"<>`]+")
_PARAM_SPLIT = re.compile(r"([&;])")


def _mask_params(part: str) -> str:
    """`a=1&b=2` as `a=***&b=***`; a bare value (`?KEY`) is masked whole, empty values stay."""
    out: list[str] = []
    for piece in _PARAM_SPLIT.split(part):
        if piece in ("&", ";") or not piece:
            out.append(piece)
        elif "=" in piece:
            key, value = piece.split("=", 1)
            out.append(f"{key}={MASK}" if value else piece)
        else:
            out.append(MASK)
    return "".join(out)


def redact_url(url: str) -> str:
    """`url` with its userinfo (`user:password@`) and every query and fragment value masked.

    Works on any `scheme://` URL (a database DSN too) and never raises, whatever the text.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = MASK + "@" + authority.rsplit("@", 1)[1]
    tail, hash_sep, fragment = tail.partition("#")
    path, query_sep, query = tail.partition("?")
    if query_sep:
        path += "?" + _mask_params(query)
    if hash_sep:
        path += "#" + (_mask_params(fragment) if "=" in fragment else fragment)
    return f"{scheme}://{authority}{path}"


def _param_values(part: str) -> list[str]:
    values = []
    for piece in _PARAM_SPLIT.split(part):
        if piece in ("&", ";") or not piece:
            continue
        values.append(piece.split("=", 1)[1] if "=" in piece else piece)
    return values


def url_credentials(text: str) -> list[str]:
    """The credentials written in the URLs of `text`: each userinfo (whole, and its password),
    each query and fragment value (what `redact_url` masks), to be masked wherever they recur."""
    found: list[str] = []
    for match in _URL.finditer(text):
        rest = match.group(0).partition("://")[2]
        cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
        authority, tail = rest[:cut], rest[cut:]
        if "@" in authority:
            userinfo = authority.rsplit("@", 1)[0]
            found += [userinfo, userinfo.partition(":")[2]]
        tail, _, fragment = tail.partition("#")
        found += _param_values(tail.partition("?")[2])
        if "=" in fragment:
            found += _param_values(fragment)
    return [v for v in found if v]


def secret_variants(secret: str) -> set[str]:
    """`secret` as it may appear in text: plain, percent-encoded, JSON-escaped."""
    variants = {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}
    variants.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    return {v for v in variants if len(v) >= MIN_SECRET_CHARS}


class Redactor:
    """Masks configured secret values and URL credentials in any text (see the module doc).

    Example:
        ```python
        redact = Redactor(server.secrets)
        logger.warning("server left out: %s", redact(reason))
        ```
    """

    def __init__(self, secrets: Iterable[str] = (), *, urls: bool = True) -> None:
        """Mask `secrets` (values shorter than `MIN_SECRET_CHARS` are ignored) and, with `urls`,
        the credentials of every URL."""
        secrets = list(secrets)
        self.urls = urls
        values = {v for s in secrets if isinstance(s, str) for v in secret_variants(s)}
        ordered = sorted(values, key=lambda v: (-len(v), v))  # the longest match wins
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.count = len({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS})
        """How many configured values are masked (for tests and reprs; never the values)."""

    def __call__(self, text: str) -> str:
        """`text` with every secret and every URL credential masked."""
        if not text:
            return text
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        return _URL.sub(lambda m: redact_url(m.group(0)), text) if self.urls else text

    def __repr__(self) -> str:
        return f"Redactor({self.count} secret values, urls={self.urls})"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with `secrets` and URL credentials masked (one-off form of `Redactor`)."""
    return Redactor(secrets)(text)
