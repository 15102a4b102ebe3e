"""One redaction rule for everything the package writes where a model, a log or a file can see it.

A value is a secret by what it is, not by being configuration: a value named like a credential
(`credential_name`: `*TOKEN*`, `*KEY*`, `*SECRET*`, `*PASS*` (`*PASSWORD*` too),
`*CREDENTIAL*`, `*COOKIE*`, and the words `auth`, `authorization`, `bearer`, `sig`, `pwd`,
`pat`, `jwt`, `session`), a value shaped like one (`token_shaped`: `Bearer ...`, `sk-...`,
`ghp_...`, a JWT, a private-key block), a URL's password, or a name the caller lists. An MCP
server's configuration is read that way (`mcp.config`); `TZ=Europe/Paris` or `CAL_USER=alice`
stay data, in results as everywhere.

`Redactor` masks the secret values it is given wherever they appear (also percent- or
JSON-escaped), each replaced by a visible mark naming it (`[redacted CAL_TOKEN]`), never a bare
`***`. In diagnostics (errors, logs, stderr; the default, `urls=True`) it also masks the
credentials of any URL in the text (its userinfo, and every query or fragment value), a value
assigned to a credential-like name (`password=...`, `"api_key": "..."`) and token-shaped
strings. Tool results and listings get only the given values (`urls=False`): a search
result's `?q=cats` is data. Pure and framework-free; linear in the text's length; applying it
twice changes nothing more.

Example:
    ```python
    redact = Redactor([("CAL_TOKEN", "s3cret-token")])
    redact("auth failed for s3cret-token at https://u:pw@host/x?key=k")
    # 'auth failed for [redacted CAL_TOKEN] at
    #  https://[redacted URL credentials]@host/x?key=[redacted key]'
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from urllib.parse import quote

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "Redactor",
    "assigned_secrets",
    "credential_name",
    "mark",
    "redact",
    "redact_url",
    "secret_variants",
    "token_shaped",
    "url_credentials",
    "url_secrets",
]

MASK = "[redacted]"
"""What a secret with no name is replaced with (a named one: `mark(name)`)."""

MIN_SECRET_CHARS = 4
"""Shorter configured values are not masked: "0" or "1" would mask every digit of a message,
and no credential is that short."""

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s'\"<>`]+")
_PARAM_SPLIT = re.compile(r"([&;])")
_MARKED = "[redacted"
_NAME_PARTS = ("token", "key", "secret", "pass", "credential", "cookie")
_NAME_WORDS = frozenset(
    {"auth", "authorization", "bearer", "sig", "signature", "pwd", "pat", "jwt", "session"}
)
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_TOKENS = (
    r"(?:Bearer|Basic)\s+(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{12,}"
    r"|sk-(?:[A-Za-z]+-)?[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|glpat-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
_TOKEN = re.compile(rf"(?<![A-Za-z0-9_-])(?:{_TOKENS})")
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,40}?"
    r"(?:token|key|secret|pass|credential|cookie|auth|sig|pwd|pat|jwt|session|bearer)"
    r"[A-Za-z0-9_.-]{0,40})([\"']?\s*[=:]\s*[\"']?)(?!\[redacted)"
    r"((?:(?:Bearer|Basic|Token)\s+)?[^\s\"'&;,]{4,})",
    re.IGNORECASE,
)


def mark(name: str | None = None) -> str:
    """The visible mark that replaces a secret: `[redacted NAME]`, or `MASK` with no name."""
    return f"[redacted {name}]" if name else MASK


def credential_name(name: str, extra: Collection[str] = ()) -> bool:
    """Whether a value named `name` (an environment variable, a header, an option, a query
    parameter) is a credential: its name contains a credential word, or `extra` lists it
    (case-insensitive)."""
    low = name.lower().strip("-")
    if low in {e.lower().strip("-") for e in extra}:
        return True
    if any(part in low for part in _NAME_PARTS):
        return True
    return any(word.lower() in _NAME_WORDS for word in _WORD_SPLIT.split(name) if word)


def token_shaped(value: str) -> bool:
    """Whether `value` starts like a credential whatever its name: an HTTP `Bearer`/`Basic`
    value, a provider key (`sk-`, `ghp_`, `xoxb-`, `AKIA`, ...), a JWT or a private-key block."""
    return _TOKEN.match(value.strip()) is not None


def _mask_params(part: str) -> str:
    """`a=1&b=2` as `a=[redacted a]&b=[redacted b]`; a bare value (`?KEY`) is masked whole,
    empty and already masked values stay."""
    out: list[str] = []
    for piece in _PARAM_SPLIT.split(part):
        if piece in ("&", ";") or not piece or piece.startswith(_MARKED):
            out.append(piece)
        elif "=" in piece:
            key, value = piece.split("=", 1)
            keep = not value or value.startswith(_MARKED)
            out.append(piece if keep else f"{key}={mark(key or None)}")
        else:
            out.append(MASK)
    return "".join(out)


def _split_url(rest: str) -> tuple[str, str]:
    """A URL's part after `://` as (authority, the rest)."""
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return rest[:cut], rest[cut:]


def redact_url(url: str) -> str:
    """`url` with its userinfo (`user:password@`) and every query and fragment value masked.

    Works on any `scheme://` URL (a database DSN too) and never raises, whatever the text.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, tail = _split_url(rest)
    if "@" in authority:
        authority = mark("URL credentials") + "@" + authority.rsplit("@", 1)[1]
    tail, hash_sep, fragment = tail.partition("#")
    path, query_sep, query = tail.partition("?")
    if query_sep:
        path += "?" + _mask_params(query)
    if hash_sep:
        path += "#" + (_mask_params(fragment) if "=" in fragment else fragment)
    return f"{scheme}://{authority}{path}"


def _params(part: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of a query or fragment (a bare value has the name "")."""
    pairs = []
    for piece in _PARAM_SPLIT.split(part):
        if piece in ("&", ";") or not piece:
            continue
        name, sep, value = piece.partition("=")
        pairs.append((name, value) if sep else ("", piece))
    return pairs


def _url_parts(text: str) -> Iterable[tuple[str, str, list[tuple[str, str]]]]:
    """For each URL of `text`: its userinfo, its password and its query and fragment pairs."""
    for match in _URL.finditer(text):
        authority, tail = _split_url(match.group(0).partition("://")[2])
        userinfo = authority.rsplit("@", 1)[0] if "@" in authority else ""
        tail, _, fragment = tail.partition("#")
        pairs = _params(tail.partition("?")[2]) + (_params(fragment) if "=" in fragment else [])
        yield userinfo, userinfo.partition(":")[2], pairs


def url_credentials(text: str) -> list[str]:
    """Everything `redact_url` masks in the URLs of `text`: each userinfo (whole, and its
    password), each query and fragment value."""
    found: list[str] = []
    for userinfo, password, pairs in _url_parts(text):
        if userinfo:
            found += [userinfo, password]
        found += [value for _, value in pairs]
    return [v for v in found if v]


def url_secrets(text: str, extra: Collection[str] = ()) -> list[tuple[str, str]]:
    """The credentials in the URLs of `text`, named: each password (and the userinfo holding
    it), each query or fragment value whose name is a credential's (`credential_name`) or that
    is token-shaped. A user name or `?region=eu` is not one."""
    found: list[tuple[str, str]] = []
    for userinfo, password, pairs in _url_parts(text):
        if password:
            found += [("URL credentials", userinfo), ("URL password", password)]
        found += [
            (name or "URL parameter", value)
            for name, value in pairs
            if value and (credential_name(name, extra) or token_shaped(value))
        ]
    return found


def secret_variants(secret: str) -> set[str]:
    """`secret` as it may appear in text: plain, percent-encoded, JSON-escaped."""
    variants = {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}
    variants.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    return {v for v in variants if len(v) >= MIN_SECRET_CHARS}


_NOT_ASSIGNED = ("error", "exception", "warning")


def _assignment(match: re.Match[str]) -> str:
    """A `name=value` match with the value masked when the name is a credential's (not when
    it names an error: `KeyError: ...` is a traceback's)."""
    name, sep, _value = match.groups()
    if name.lower().endswith(_NOT_ASSIGNED) or not credential_name(name):
        return match.group(0)
    return f"{name}{sep}{mark(name)}"


def assigned_secrets(text: str, extra: Collection[str] = ()) -> list[tuple[str, str]]:
    """The values assigned to credential-like names in `text` (`password=pw`, `"api_key":
    "k"`, `auth: Bearer t`), named: a DSN or a header value may hold one."""
    found = []
    for match in _ASSIGNMENT.finditer(text):
        name, _sep, value = match.groups()
        if credential_name(name, extra) and not name.lower().endswith(_NOT_ASSIGNED):
            found.append((name, value))
    return found


class Redactor:
    """Masks secret values (and, in diagnostics, URL credentials, credential assignments and
    token-shaped strings) in any text, each with a mark naming it (see the module doc).

    Example:
        ```python
        redact = Redactor([("DB_TOKEN", token)])
        logger.warning("server left out: %s", redact(reason))
        ```
    """

    def __init__(self, secrets: Iterable[str | tuple[str, str]] = (), *, urls: bool = True) -> None:
        """Mask `secrets`, each a value or a (name, value) pair whose mark names it (values
        shorter than `MIN_SECRET_CHARS` are ignored; the first name of a value wins) and, with
        `urls` (diagnostics), URL credentials, credential assignments and token shapes."""
        self.urls = urls
        names: dict[str, str | None] = {}
        kept: set[str] = set()
        for item in secrets:
            name, value = item if isinstance(item, tuple) else (None, item)
            if not isinstance(value, str) or len(value) < MIN_SECRET_CHARS:
                continue
            kept.add(value)
            for variant in secret_variants(value):
                names.setdefault(variant, name)
        self._names = names
        ordered = sorted(names, key=lambda v: (-len(v), v))  # the longest match wins
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.count = len(kept)
        """How many configured values are masked (for tests and reprs; never the values)."""

    def _value(self, match: re.Match[str]) -> str:
        return mark(self._names.get(match.group(0)))

    def __call__(self, text: str) -> str:
        """`text` with every secret (and, in diagnostics, every URL credential, credential
        assignment and token-shaped string) replaced by its mark."""
        if not text:
            return text
        if self._pattern is not None:
            text = self._pattern.sub(self._value, text)
        if not self.urls:
            return text
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
        text = _ASSIGNMENT.sub(_assignment, text)
        return _TOKEN.sub(mark("token"), text)

    def __repr__(self) -> str:
        return f"Redactor({self.count} secret values, urls={self.urls})"


def redact(text: str, secrets: Iterable[str | tuple[str, str]] = ()) -> str:
    """`text` with `secrets` and every diagnostic credential masked (one-off form of
    `Redactor`)."""
    return Redactor(secrets)(text)
