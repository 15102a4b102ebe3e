"""The HMAC key that signs tokens: taken explicitly or from the environment, never a weak one."""

from __future__ import annotations

import os

from attention_scoping.errors import AttentionScopingError

__all__ = ["MIN_SECRET_BYTES", "SECRET_ENV", "SecretConfigError", "resolve_secret"]

SECRET_ENV = "ATTENTION_SCOPING_SECRET"
"""Environment variable read when no secret is passed explicitly."""

MIN_SECRET_BYTES = 32
"""Shortest accepted key (256 bits, the HMAC-SHA256 block of security)."""

_MIN_DISTINCT = 10
_KNOWN_WEAK = ("secret", "password", "changeme", "default", "example", "test", "0123456789")
_HOW = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(48))'"


class SecretConfigError(AttentionScopingError, ValueError):
    """No signing key is configured, or the configured one is too weak to sign with."""


def resolve_secret(secret: str | bytes | None = None, *, env: str = SECRET_ENV) -> bytes:
    """Return the signing key: `secret` if given, else the environment variable `env`.

    A key is refused when it is shorter than 32 bytes, made of fewer than 10 distinct
    characters, or built from a placeholder word repeated ("changeme" * 4): such keys are
    guessable, and a guessable key lets anyone mint approvals.

    Raises:
        SecretConfigError: naming what is wrong and how to generate a good key.
    """
    source = "the secret argument"
    if secret is None:
        secret = os.environ.get(env)
        source = f"${env}"
        if not secret:
            msg = f"no signing key: pass secret=... or set {env} ({_HOW})"
            raise SecretConfigError(msg)
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if len(raw) < MIN_SECRET_BYTES:
        msg = f"{source} is {len(raw)} bytes; at least {MIN_SECRET_BYTES} are required ({_HOW})"
        raise SecretConfigError(msg)
    if len(set(raw)) < _MIN_DISTINCT:
        msg = f"{source} uses only {len(set(raw))} distinct characters: too predictable ({_HOW})"
        raise SecretConfigError(msg)
    lowered = raw.lower()
    for word in _KNOWN_WEAK:
        token = word.encode()
        if lowered.count(token) * len(token) * 2 >= len(raw):
            msg = f"{source} is mostly the placeholder word {word!r} ({_HOW})"
            raise SecretConfigError(msg)
    return raw
