"""The shared token machinery: canonical JSON, keys, signed tokens, confirmation codes, stores."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_scoping.safety.canonical import (
    CanonicalJSONError,
    canonical_json,
    intent_hash,
    tool_call_hash,
)
from attention_scoping.safety.keys import SECRET_ENV, SecretConfigError, resolve_secret
from attention_scoping.safety.token_stores import MemoryTokenStore, SqliteTokenStore, TokenStore
from attention_scoping.safety.tokens import (
    CODE_ALPHABET,
    ExpiredTokenError,
    IntentMismatchError,
    MalformedTokenError,
    ReplayedTokenError,
    RevokedCodeError,
    TamperedTokenError,
    TokenError,
    TokenIssuer,
    UnknownCodeError,
    WrongTokenKindError,
    normalize_code,
)
from tests.safety_support import SECRET, FakeClock
from tests.token_store_support import open_token_store, race_to_consume, token_store_location

H1 = tool_call_hash("jobs__create", {"when": "09:00", "text": "standup"})
H2 = tool_call_hash("jobs__create", {"when": "09:30", "text": "standup"})


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TokenStore]:
    if request.param == "memory":
        yield MemoryTokenStore()
        return
    with token_store_location(str(request.param), tmp_path) as where:
        opened = open_token_store(str(request.param), where)
        yield opened
        opened.close()


@pytest.fixture
def issuer(store: TokenStore, clock: FakeClock) -> TokenIssuer:
    return TokenIssuer(SECRET, store=store, clock=clock, ttl=300)


# -- canonical JSON and hashes -------------------------------------------------------------


def test_canonical_json_is_one_text_per_meaning() -> None:
    a = {"b": [1, 2.0, {"y": None, "x": True}], "a": "é"}
    b = {"a": "é", "b": (1, 2, {"x": True, "y": None})}
    assert canonical_json(a) == canonical_json(b) == '{"a":"é","b":[1,2,{"x":true,"y":null}]}'
    assert canonical_json({"n": 2.5}) == '{"n":2.5}'
    assert canonical_json({"n": True}) != canonical_json({"n": 1})


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": math.nan}, "$.a"),
        ({"a": [1, math.inf]}, "$.a[1]"),
        ({"a": {1: "x"}}, "$.a"),
        ({"a": {1, 2}}, "$.a"),
        ({"a": object()}, "$.a"),
    ],
)
def test_canonical_json_refuses_what_json_cannot_say(value: Any, where: str) -> None:
    with pytest.raises(CanonicalJSONError, match=rf"^{__import__('re').escape(where)}:"):
        canonical_json(value)


def test_intent_hash_is_stable_and_binds_every_field() -> None:
    base: dict[str, Any] = {
        "account": "acme",
        "action": "repo__comment",
        "target": "42",
        "payload": {"b": "hi"},
    }
    expected = hashlib.sha256(
        b'{"account":"acme","action":"repo__comment","payload":{"b":"hi"},"target":"42"}'
    ).hexdigest()
    assert intent_hash(**base) == expected
    for key, other in [("account", "evil"), ("action", "repo__close"), ("target", "43")]:
        assert intent_hash(**{**base, key: other}) != expected
    assert intent_hash(**{**base, "payload": {"b": "hi!"}}) != expected
    assert tool_call_hash("t", {"x": 1, "y": 2}) == tool_call_hash("t", {"y": 2, "x": 1.0})


# -- keys -----------------------------------------------------------------------------------


def test_secret_from_argument_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_secret(SECRET) == SECRET.encode()
    monkeypatch.setenv(SECRET_ENV, SECRET)
    assert resolve_secret() == SECRET.encode()
    assert TokenIssuer().issue(H1)  # picks the key up by itself
    monkeypatch.delenv(SECRET_ENV)
    with pytest.raises(SecretConfigError, match=SECRET_ENV):
        resolve_secret()
    with pytest.raises(SecretConfigError, match=SECRET_ENV):
        TokenIssuer()


@pytest.mark.parametrize(
    ("secret", "why"),
    [
        ("short-key-123", "at least 32"),
        ("a" * 64, "distinct"),
        ("abababababababababababababababab12", "distinct"),
        ("changemechangemechangeme-CHANGEME-42", "placeholder"),
        ("secret-secret-secret-secret-0123456789", "placeholder"),
    ],
)
def test_weak_secrets_are_refused_with_a_reason(secret: str, why: str) -> None:
    with pytest.raises(SecretConfigError, match=why) as info:
        TokenIssuer(secret)
    assert "token_urlsafe" in str(info.value)


# -- signed tokens --------------------------------------------------------------------------


def test_issue_verify_consume(issuer: TokenIssuer, clock: FakeClock) -> None:
    token = issuer.issue(H1, kind="appr", subject="jobs__create", data={"by": "ana"})
    assert token.startswith("appr_") and token.count(".") == 1
    claims = issuer.verify(token, H1)
    assert (claims.kind, claims.intent_hash, claims.subject) == ("appr", H1, "jobs__create")
    assert claims.data == {"by": "ana"} and claims.expires_at == clock.now + 300
    assert issuer.verify(token, H1) == claims  # verify does not use it up
    assert issuer.consume(token, H1).token_id == claims.token_id
    with pytest.raises(ReplayedTokenError, match="already used"):
        issuer.consume(token, H1)
    with pytest.raises(ReplayedTokenError):
        issuer.verify(token, H1)


def test_arguments_changed_after_approval_are_refused(issuer: TokenIssuer) -> None:
    token = issuer.issue(H1)
    with pytest.raises(IntentMismatchError, match="needs a new token") as info:
        issuer.consume(token, H2)
    assert info.value.reason == "intent_mismatch"
    assert issuer.consume(token, H1)  # the refused attempt did not use it up


def test_expired_token_is_refused(issuer: TokenIssuer, clock: FakeClock) -> None:
    token = issuer.issue(H1, ttl=60)
    clock.advance(59.9)
    issuer.verify(token, H1)
    clock.advance(0.1)
    with pytest.raises(ExpiredTokenError, match="expired"):
        issuer.consume(token, H1)


def _flip(text: str, index: int) -> str:
    ch = "A" if text[index] != "A" else "B"
    return text[:index] + ch + text[index + 1 :]


def test_tampered_tokens_are_refused(issuer: TokenIssuer, store: TokenStore) -> None:
    token = issuer.issue(H1, subject="jobs__create")
    body, sig = token.split(".")
    with pytest.raises(TamperedTokenError):
        issuer.verify(f"{_flip(body, 10)}.{sig}", H1)  # claims edited
    with pytest.raises(TamperedTokenError):
        issuer.verify(f"{body}.{_flip(sig, 3)}", H1)  # signature edited
    with pytest.raises(TamperedTokenError):
        issuer.verify(f"{body}.{sig[:-4]}", H1)  # signature truncated
    forged = TokenIssuer("another-key:" + SECRET[::-1], store=store).issue(H1)
    with pytest.raises(TamperedTokenError, match="another key"):
        issuer.verify(forged, H1)
    relabelled = "intent_" + token.split("_", 1)[1]
    with pytest.raises(TamperedTokenError):
        issuer.verify(relabelled, H1, kind="intent")


@pytest.mark.parametrize("bad", ["", "garbage", "appr_abc", "appr_a.b.c", 42])
def test_malformed_tokens_are_refused(issuer: TokenIssuer, bad: Any) -> None:
    with pytest.raises(TokenError) as info:
        issuer.verify(bad, H1)
    assert info.value.reason in {"malformed", "tampered"}


def test_token_of_another_kind_is_refused(issuer: TokenIssuer) -> None:
    intent_token = issuer.issue(H1, kind="intent")
    with pytest.raises(WrongTokenKindError, match="'intent' token; a 'appr' token"):
        issuer.consume(intent_token, H1, kind="appr")
    with pytest.raises(ValueError, match="kind"):
        issuer.issue(H1, kind="Bad Kind")


def test_single_use_holds_across_stores_on_one_file(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "shared.db"
    first = TokenIssuer(SECRET, store=SqliteTokenStore(path), clock=clock)
    second = TokenIssuer(SECRET, store=SqliteTokenStore(path), clock=clock)
    token = first.issue(H1)
    second.consume(token, H1)
    with pytest.raises(ReplayedTokenError):
        first.consume(token, H1)


def test_single_use_holds_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    issuer = TokenIssuer(SECRET, store=SqliteTokenStore(path))
    token = issuer.issue(H1)
    script = (
        "import sys\n"
        "from attention_scoping.safety.tokens import TokenIssuer\n"
        "from attention_scoping.safety.token_stores import SqliteTokenStore\n"
        "issuer = TokenIssuer(sys.argv[1], store=SqliteTokenStore(sys.argv[2]))\n"
        "print(issuer.consume(sys.argv[3], sys.argv[4]).token_id)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, SECRET, str(path), token, H1],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert issuer.store.is_token_used(done.stdout.strip())  # the child's use is recorded
    with pytest.raises(ReplayedTokenError):
        issuer.consume(token, H1)


def test_concurrent_consumers_exactly_one_wins(issuer: TokenIssuer) -> None:
    token = issuer.issue(H1)
    assert race_to_consume([issuer] * 8, token, H1) == ["ok"] + ["replayed"] * 7


# -- confirmation codes ---------------------------------------------------------------------


def test_codes_are_short_typable_and_bound_server_side(issuer: TokenIssuer) -> None:
    code = issuer.issue_code(H1, data={"intent_id": "i1"})
    assert len(code.code) == 9 and code.code[4] == "-"
    assert all(ch in CODE_ALPHABET for ch in code.code.replace("-", ""))
    typed = code.code.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    grant = issuer.redeem_code(typed, H1)  # retyped by a human: still the same code
    assert grant.data == {"intent_id": "i1"} and grant.intent_hash == H1
    with pytest.raises(ReplayedTokenError, match="already used"):
        issuer.redeem_code(code.code, H1)


def test_code_for_another_intent_is_refused_and_not_burned(issuer: TokenIssuer) -> None:
    code = issuer.issue_code(H1)
    with pytest.raises(IntentMismatchError, match="new preview"):
        issuer.redeem_code(code.code, H2)
    issuer.redeem_code(code.code, H1)


def test_expired_unknown_malformed_and_revoked_codes(issuer: TokenIssuer, clock: FakeClock) -> None:
    code = issuer.issue_code(H1, ttl=30)
    clock.advance(30)
    with pytest.raises(ExpiredTokenError):
        issuer.redeem_code(code.code, H1)
    unknown = "ZZZZ-ZZZZ" if normalize_code(code.code) != "ZZZZZZZZ" else "YYYY-YYYY"
    with pytest.raises(UnknownCodeError):
        issuer.redeem_code(unknown, H1)
    for bad in ("", "ABC", "ABCD-EFGU", "ABCD-EFGH-JKMN", None):
        with pytest.raises(MalformedTokenError):
            issuer.redeem_code(bad, H1)  # type: ignore[arg-type]
    live = issuer.issue_code(H1)
    assert issuer.revoke_code(live.code_id) is True
    assert issuer.revoke_code(live.code_id) is False
    with pytest.raises(RevokedCodeError):
        issuer.redeem_code(live.code, H1)


def test_code_guessing_across_keys_fails(store: TokenStore, clock: FakeClock) -> None:
    mine = TokenIssuer(SECRET, store=store, clock=clock)
    theirs = TokenIssuer("another-key:" + SECRET[::-1], store=store, clock=clock)
    code = mine.issue_code(H1)
    with pytest.raises(UnknownCodeError):
        theirs.redeem_code(code.code, H1)


def test_store_never_holds_usable_codes(tmp_path: Path, clock: FakeClock) -> None:
    issuer = TokenIssuer(SECRET, store=SqliteTokenStore(tmp_path / "s.db"), clock=clock)
    codes = [issuer.issue_code(H1).code for _ in range(5)]
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for code in codes:
        assert code.encode() not in blob and code.replace("-", "").encode() not in blob


def test_purge_forgets_only_expired_records(issuer: TokenIssuer, clock: FakeClock) -> None:
    old = issuer.issue(H1, ttl=10)
    issuer.consume(old, H1)
    issuer.issue_code(H1, ttl=10)
    fresh = issuer.issue_code(H1, ttl=1000)
    clock.advance(11)
    assert issuer.store.purge(clock()) == 2
    issuer.redeem_code(fresh.code, H1)
