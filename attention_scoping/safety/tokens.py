"""Signed, expiring, single-use tokens and short confirmation codes bound to one exact intent.

One implementation serves every "this exact action was allowed" check of the package: the
approval tokens of write tools (`appr_...`, issued when a human approves) and the confirmation
codes of two-phase mutations (`IntentGuard`). Both are bound to an *intent hash*, the SHA-256 of
the canonical JSON of what will run, so changing any argument after approval invalidates them.

- A **token** is self-contained: `<kind>_<claims>.<HMAC-SHA256>`. `verify` checks kind,
  signature, expiry and intent; `consume` does the same and marks it used in the `TokenStore`,
  atomically, so a second use (in any process sharing the store) is refused.
- A **confirmation code** is short enough to type (`7KQM-4P2X`, 40 random bits) and means
  nothing by itself: the server stores it, keyed by an HMAC of the code, with the intent hash
  and expiry; `redeem_code` is as strict as `consume`.

A token may also be bound to a *context* (an approval to its LangGraph thread): it then
verifies only in that context.

Every refusal is a `TokenError` subclass with a `reason` (`malformed`, `tampered`,
`wrong_kind`, `expired`, `replayed`, `intent_mismatch`, `context_mismatch`, `unknown_code`,
`revoked`) and a message fit to show a model or a human.

Example (an approval flow: approve now, execute later, exactly what was approved):
    ```python
    from attention_scoping.safety.tokens import TokenIssuer, TokenError, tool_call_hash
    from attention_scoping.safety.token_stores import SqliteTokenStore

    issuer = TokenIssuer(store=SqliteTokenStore("safety.db"))  # key: $ATTENTION_SCOPING_SECRET
    call_hash = tool_call_hash("scheduled_jobs__create", args)
    token = issuer.issue(call_hash, kind="appr", ttl=600, subject="scheduled_jobs__create")
    # ... later, maybe in another process, with the arguments about to run:
    try:
        issuer.consume(token, tool_call_hash("scheduled_jobs__create", args_now), kind="appr")
    except TokenError as exc:      # tampered, expired, replayed, or arguments edited
        refuse(exc.reason, str(exc))
    ```
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from attention_scoping.errors import AttentionScopingError, ScopeConfigError
from attention_scoping.safety.canonical import (
    canonical_json,
    intent_hash,
    sha256_hex,
    tool_call_hash,
)
from attention_scoping.safety.keys import SECRET_ENV, SecretConfigError, resolve_secret
from attention_scoping.safety.token_stores import CodeRecord, MemoryTokenStore, TokenStore

__all__ = [
    "CODE_ALPHABET",
    "ConfirmationCode",
    "ContextMismatchError",
    "ExpiredTokenError",
    "IntentMismatchError",
    "MalformedTokenError",
    "ReplayedTokenError",
    "RevokedCodeError",
    "SecretConfigError",
    "TamperedTokenError",
    "TokenClaims",
    "TokenError",
    "TokenIssuer",
    "UnknownCodeError",
    "WrongTokenKindError",
    "canonical_json",
    "intent_hash",
    "normalize_code",
    "sha256_hex",
    "tool_call_hash",
]

CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford base32: no I, L, O or U, so codes survive being read aloud or retyped."""

_CODE_LEN = 8
_CODE_FIXES = str.maketrans({"O": "0", "I": "1", "L": "1"})
_KIND = re.compile(r"^[a-z][a-z0-9]{1,11}$")
_TOKEN_DOMAIN = b"attention-scoping/token/v1\x00"
_CODE_DOMAIN = b"attention-scoping/code/v1\x00"
_ID_DOMAIN = b"attention-scoping/token-id/v1\x00"
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_.-]{1,16384}$")
"""Everything a token of this package can contain (ASCII, URL-safe base64), bounded."""


class TokenError(AttentionScopingError, ValueError):
    """A token or confirmation code was refused; `reason` says why in one word."""

    reason: ClassVar[str] = "invalid"


class MalformedTokenError(TokenError):
    """Not a token (or code) of this package at all: wrong shape or encoding."""

    reason = "malformed"


class TamperedTokenError(TokenError):
    """The signature does not match the content: altered, truncated, or signed by another key."""

    reason = "tampered"


class WrongTokenKindError(TokenError):
    """A valid token of another kind (an intent token offered as an approval, say)."""

    reason = "wrong_kind"


class ExpiredTokenError(TokenError):
    """The token or code is past its expiry."""

    reason = "expired"


class ReplayedTokenError(TokenError):
    """The token or code was already used; each one works once."""

    reason = "replayed"


class IntentMismatchError(TokenError):
    """The token or code is bound to a different intent: arguments changed since it was issued."""

    reason = "intent_mismatch"


class ContextMismatchError(TokenError):
    """The token is bound to another context: an approval issued in another thread."""

    reason = "context_mismatch"


class UnknownCodeError(TokenError):
    """No such confirmation code was issued (or it was purged long after expiry)."""

    reason = "unknown_code"


class RevokedCodeError(TokenError):
    """The code was revoked, e.g. superseded by a newer preview of the same intent."""

    reason = "revoked"


@dataclass(frozen=True)
class TokenClaims:
    """What a verified token says: its id, kind, bound intent, validity window and extras."""

    token_id: str
    kind: str
    intent_hash: str
    issued_at: float
    expires_at: float
    subject: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    context: str | None = None
    """What the token is bound to besides the intent (an approval: its thread), or None."""


@dataclass(frozen=True)
class ConfirmationCode:
    """A freshly issued code: give `code` to the model or human, keep nothing else secret."""

    code: str
    code_id: str
    intent_hash: str
    expires_at: float


def _b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def normalize_code(code: str) -> str:
    """Upper-case `code`, drop separators and map look-alikes (O->0, I/L->1).

    Raises:
        MalformedTokenError: not 8 characters of the code alphabet once normalized.
    """
    if not isinstance(code, str):
        msg = f"a confirmation code is a string like 'ABCD-1234', not {type(code).__name__}"
        raise MalformedTokenError(msg)
    flat = re.sub(r"[\s_-]", "", code).upper().translate(_CODE_FIXES)
    if len(flat) != _CODE_LEN or any(ch not in CODE_ALPHABET for ch in flat):
        msg = f"{code!r} is not a confirmation code (expected 8 characters like 'ABCD-1234')"
        raise MalformedTokenError(msg)
    return flat


class TokenIssuer:
    """Issue, verify and consume intent-bound tokens and confirmation codes with one HMAC key.

    Args:
        secret: The HMAC key (>= 32 bytes, not a placeholder). None reads `env`.
        store: Remembers used tokens and issued codes; `MemoryTokenStore()` by default. Use
            `SqliteTokenStore(path)` (or your own `TokenStore`) when several processes verify.
        clock: Seconds since the epoch; inject a fake one in tests.
        ttl: Default lifetime of tokens and codes, in seconds.
        env: Environment variable holding the key when `secret` is None.

    Raises:
        SecretConfigError: no key, or a weak one.
    """

    def __init__(
        self,
        secret: str | bytes | None = None,
        *,
        store: TokenStore | None = None,
        clock: Callable[[], float] = time.time,
        ttl: float = 300.0,
        env: str = SECRET_ENV,
    ) -> None:
        """Resolve the key and keep the store."""
        if ttl <= 0:
            msg = f"ttl must be positive, not {ttl!r}"
            raise ScopeConfigError(msg)
        self._key = resolve_secret(secret, env=env)
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.clock = clock
        self.ttl = ttl

    # -- signed tokens ----------------------------------------------------------------------

    def _sign(self, body: str) -> str:
        mac = hmac.new(self._key, _TOKEN_DOMAIN + body.encode("ascii"), hashlib.sha256)
        return _b64e(mac.digest())

    @staticmethod
    def _check_kind(kind: str) -> None:
        if not isinstance(kind, str) or not _KIND.match(kind):
            msg = f"token kind must be 2-12 lower-case letters or digits, not {kind!r}"
            raise ScopeConfigError(msg)

    def issue(
        self,
        intent_hash: str,
        *,
        kind: str = "appr",
        ttl: float | None = None,
        subject: str | None = None,
        data: Mapping[str, Any] | None = None,
        context: str | None = None,
        token_id: str | None = None,
    ) -> str:
        """A signed token `<kind>_...` bound to `intent_hash`, valid for `ttl` seconds.

        `subject` (e.g. the tool name) and `data` (small JSON) travel signed in the token;
        `context` binds it (verification must name the same context); `token_id` (see
        `derive_id`) replaces the random id, so re-issuing for the same request gives a token
        that is used up, or burnt, together with the first.
        """
        self._check_kind(kind)
        now = self.clock()
        claims = {
            "v": 1,
            "typ": kind,
            "jti": token_id if token_id is not None else _b64e(secrets.token_bytes(16)),
            "ih": intent_hash,
            "iat": now,
            "exp": now + (self.ttl if ttl is None else ttl),
            "sub": subject,
            "data": dict(data or {}),
        }
        if context is not None:
            claims["ctx"] = str(context)
        if isinstance(self.store, MemoryTokenStore):
            claims["mem"] = self.store.instance_id
        body = f"{kind}_{_b64e(canonical_json(claims).encode('utf-8'))}"
        return f"{body}.{self._sign(body)}"

    def derive_id(self, *parts: str) -> str:
        """A token id derived from `parts` with the key: the same parts, the same id; nobody
        without the key can predict it."""
        joined = "\x00".join(parts).encode("utf-8", "surrogatepass")
        return _b64e(hmac.new(self._key, _ID_DOMAIN + joined, hashlib.sha256).digest()[:16])

    def _decode(self, token: str, kind: str) -> TokenClaims:
        self._check_kind(kind)
        if (
            not isinstance(token, str)
            or not _TOKEN_CHARS.match(token)
            or "_" not in token
            or token.count(".") != 1
        ):
            msg = f"not a signed token (expected '{kind}_<claims>.<signature>')"
            raise MalformedTokenError(msg)
        body, signature = token.split(".")
        found = body.split("_", 1)[0]
        if found != kind:
            msg = f"this is a {found!r} token; a {kind!r} token is required here"
            raise WrongTokenKindError(msg)
        if not hmac.compare_digest(signature.encode("ascii", "replace"), self._sign(body).encode()):
            msg = f"{kind} token signature is invalid: it was altered or signed with another key"
            raise TamperedTokenError(msg)
        try:
            raw = json.loads(_b64d(body.split("_", 1)[1]))
            claims = TokenClaims(
                token_id=str(raw["jti"]),
                kind=str(raw["typ"]),
                intent_hash=str(raw["ih"]),
                issued_at=float(raw["iat"]),
                expires_at=float(raw["exp"]),
                subject=raw.get("sub"),
                data=raw.get("data") or {},
                context=raw.get("ctx"),
            )
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:  # signed by us: a bug
            msg = f"{kind} token claims are unreadable"
            raise MalformedTokenError(msg) from exc
        self._note_store(raw.get("mem"))
        if claims.kind != kind:
            msg = f"this is a {claims.kind!r} token; a {kind!r} token is required here"
            raise WrongTokenKindError(msg)
        return claims

    def _note_store(self, issued_by: Any) -> None:
        """Warn when an in-memory store meets a token issued beside another store."""
        if isinstance(self.store, MemoryTokenStore):
            self.store.check_shared(issued_by)

    def _check(self, claims: TokenClaims, intent_hash: str, context: str | None = None) -> None:
        now = self.clock()
        if now >= claims.expires_at:
            msg = (
                f"{claims.kind} token expired {now - claims.expires_at:.0f} s ago; "
                "a new one must be issued"
            )
            raise ExpiredTokenError(msg)
        if not hmac.compare_digest(claims.intent_hash.encode(), intent_hash.encode()):
            msg = (
                f"{claims.kind} token was issued for a different intent: the arguments changed "
                "after it was issued, and an edited call needs a new token"
            )
            raise IntentMismatchError(msg)
        expected = None if context is None else str(context)
        if claims.context != expected:
            msg = (
                f"{claims.kind} token was issued for another context (another thread of the "
                "conversation); it is valid only where it was issued"
            )
            raise ContextMismatchError(msg)

    def verify(
        self, token: str, intent_hash: str, *, kind: str = "appr", context: str | None = None
    ) -> TokenClaims:
        """Check `token` for `intent_hash` (in `context`) without using it up.

        Raises:
            TokenError: malformed, wrong kind, tampered, expired, bound to another intent or
                another context, or already used.
        """
        claims = self._decode(token, kind)
        self._check(claims, intent_hash, context)
        if self.store.is_token_used(claims.token_id):
            msg = f"{kind} token was already used; each token works once"
            raise ReplayedTokenError(msg)
        return claims

    def consume(
        self, token: str, intent_hash: str, *, kind: str = "appr", context: str | None = None
    ) -> TokenClaims:
        """Verify `token` for `intent_hash` (in `context`) and mark it used (atomically: one
        caller wins).

        Raises:
            TokenError: as `verify`; `ReplayedTokenError` for every use after the first.
        """
        claims = self._decode(token, kind)
        self._check(claims, intent_hash, context)
        if not self.store.claim_token(claims.token_id, claims.expires_at, self.clock()):
            msg = f"{kind} token was already used; each token works once"
            raise ReplayedTokenError(msg)
        return claims

    def burn(self, token_id: str, expires_at: float) -> bool:
        """Use up a token id without running anything (a rejected approval); True if it was
        still unused."""
        return self.store.claim_token(token_id, expires_at, self.clock())

    # -- confirmation codes -----------------------------------------------------------------

    def code_id(self, code: str) -> str:
        """The store key of `code` (an HMAC: the store never holds usable codes)."""
        flat = normalize_code(code)
        return hmac.new(self._key, _CODE_DOMAIN + flat.encode(), hashlib.sha256).hexdigest()

    def issue_code(
        self,
        intent_hash: str,
        *,
        ttl: float | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> ConfirmationCode:
        """A new short code bound server-side to `intent_hash`, valid for `ttl` seconds."""
        now = self.clock()
        expires = now + (self.ttl if ttl is None else ttl)
        for _ in range(8):
            flat = "".join(secrets.choice(CODE_ALPHABET) for _ in range(_CODE_LEN))
            code = f"{flat[:4]}-{flat[4:]}"
            record = CodeRecord(
                self.code_id(code), intent_hash, now, expires, data=dict(data or {})
            )
            try:
                self.store.put_code(record)
            except ValueError:  # an id collision: draw again
                continue
            return ConfirmationCode(code, record.code_id, intent_hash, expires)
        msg = "could not draw an unused confirmation code"
        raise RuntimeError(msg)

    def check_code(self, code: str, intent_hash: str) -> CodeRecord:
        """Check `code` for `intent_hash` without using it.

        Raises:
            TokenError: malformed, unknown, bound to another intent, revoked, used, expired.
        """
        record = self.store.get_code(self.code_id(code))
        if record is None:
            msg = (
                f"no confirmation code {code!r} was issued; use the code from the preview of "
                "this exact call"
            )
            raise UnknownCodeError(msg)
        if not hmac.compare_digest(record.intent_hash.encode(), intent_hash.encode()):
            msg = (
                f"confirmation code {code!r} confirms a different intent: the arguments (or the "
                "account) changed since the preview, and a changed call needs a new preview"
            )
            raise IntentMismatchError(msg)
        if record.revoked_at is not None:
            msg = f"confirmation code {code!r} was revoked (a newer preview replaced it)"
            raise RevokedCodeError(msg)
        if record.used_at is not None:
            msg = f"confirmation code {code!r} was already used; each code works once"
            raise ReplayedTokenError(msg)
        now = self.clock()
        if now >= record.expires_at:
            msg = (
                f"confirmation code {code!r} expired {now - record.expires_at:.0f} s ago; "
                "ask for a new preview"
            )
            raise ExpiredTokenError(msg)
        return record

    def redeem_code(self, code: str, intent_hash: str) -> CodeRecord:
        """Check `code` for `intent_hash` and mark it used (atomically: one caller wins).

        Raises:
            TokenError: as `check_code`; `ReplayedTokenError` for every use after the first.
        """
        record = self.check_code(code, intent_hash)
        if not self.store.use_code(record.code_id, self.clock()):
            self.check_code(code, intent_hash)  # raises the precise reason (used or revoked)
            msg = f"confirmation code {code!r} was already used; each code works once"
            raise ReplayedTokenError(msg)
        return record

    def revoke_code(self, code_id: str) -> bool:
        """Revoke a live code by its id (see `ConfirmationCode.code_id`); True if it was live."""
        return self.store.revoke_code(code_id, self.clock())
