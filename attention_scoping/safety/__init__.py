"""Safe mutation: capability manifests, intent-bound tokens, two-phase execution of writes.

- `CapabilityManifest` / `Capability`: a namespace owning tools (`repo__comment`) with JSON
  schemas and a read/write flag; arguments are validated before any handler runs.
- `TokenIssuer`: HMAC-signed, expiring, single-use tokens (`appr_...`) and short confirmation
  codes, both bound to an intent hash (shared by approvals and two-phase writes).
- `IntentGuard`: preview -> confirmation code -> one execution; duplicates refused, transport
  timeouts recorded as `outcome_unknown` and reconciled, never retried blindly.
- `ManifestMiddleware` / `create_manifest_agent`: the LangChain adapters.

The framework-free core (`manifests`, `tokens`, `intents`, `journal`) imports no LangChain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_scoping._lazy import lazy_exports

if TYPE_CHECKING:
    from attention_scoping.safety.adapters import (
        capability_from_tool,
        manifest_prompt,
        manifest_scope,
        manifest_tools,
    )
    from attention_scoping.safety.agents import create_manifest_agent
    from attention_scoping.safety.canonical import (
        CanonicalJSONError,
        canonical_json,
        intent_hash,
        sha256_hex,
        tool_call_hash,
    )
    from attention_scoping.safety.errors import (
        ArgumentError,
        ManifestConfigError,
        UnknownToolError,
        WriteNotGuardedError,
    )
    from attention_scoping.safety.intents import (
        DuplicateIntentError,
        IntentError,
        IntentGuard,
        Outcome,
        OutcomeUnknownError,
        PreflightError,
        Proposal,
        Reconciliation,
        UnresolvedIntentError,
    )
    from attention_scoping.safety.journal import (
        IntentJournal,
        MemoryIntentJournal,
        SqliteIntentJournal,
    )
    from attention_scoping.safety.keys import SECRET_ENV, SecretConfigError, resolve_secret
    from attention_scoping.safety.manifests import (
        MAX_NAME_LENGTH,
        SEPARATOR,
        Capability,
        CapabilityManifest,
        ManifestRegistry,
    )
    from attention_scoping.safety.middleware import ManifestMiddleware, default_account
    from attention_scoping.safety.payloads import CONFIRMATION_FIELD
    from attention_scoping.safety.records import Intent, IntentRecord, IntentStatus
    from attention_scoping.safety.token_stores import (
        CodeRecord,
        MemoryTokenStore,
        SqliteTokenStore,
        TokenStore,
    )
    from attention_scoping.safety.tokens import (
        ConfirmationCode,
        ExpiredTokenError,
        IntentMismatchError,
        MalformedTokenError,
        ReplayedTokenError,
        RevokedCodeError,
        TamperedTokenError,
        TokenClaims,
        TokenError,
        TokenIssuer,
        UnknownCodeError,
        WrongTokenKindError,
    )
    from attention_scoping.safety.validation import ArgumentProblem

_EXPORTS = {
    "CONFIRMATION_FIELD": "payloads",
    "MAX_NAME_LENGTH": "manifests",
    "SECRET_ENV": "keys",
    "SEPARATOR": "manifests",
    "ArgumentError": "errors",
    "ArgumentProblem": "validation",
    "canonical_json": "canonical",
    "CanonicalJSONError": "canonical",
    "Capability": "manifests",
    "capability_from_tool": "adapters",
    "CapabilityManifest": "manifests",
    "CodeRecord": "token_stores",
    "ConfirmationCode": "tokens",
    "create_manifest_agent": "agents",
    "default_account": "middleware",
    "DuplicateIntentError": "intents",
    "ExpiredTokenError": "tokens",
    "Intent": "records",
    "intent_hash": "canonical",
    "IntentError": "intents",
    "IntentGuard": "intents",
    "IntentJournal": "journal",
    "IntentMismatchError": "tokens",
    "IntentRecord": "records",
    "IntentStatus": "records",
    "MalformedTokenError": "tokens",
    "manifest_prompt": "adapters",
    "manifest_scope": "adapters",
    "manifest_tools": "adapters",
    "ManifestConfigError": "errors",
    "ManifestMiddleware": "middleware",
    "ManifestRegistry": "manifests",
    "MemoryIntentJournal": "journal",
    "MemoryTokenStore": "token_stores",
    "Outcome": "intents",
    "OutcomeUnknownError": "intents",
    "PreflightError": "intents",
    "Proposal": "intents",
    "Reconciliation": "intents",
    "ReplayedTokenError": "tokens",
    "resolve_secret": "keys",
    "RevokedCodeError": "tokens",
    "SecretConfigError": "keys",
    "sha256_hex": "canonical",
    "SqliteIntentJournal": "journal",
    "SqliteTokenStore": "token_stores",
    "TamperedTokenError": "tokens",
    "TokenClaims": "tokens",
    "TokenError": "tokens",
    "TokenIssuer": "tokens",
    "TokenStore": "token_stores",
    "tool_call_hash": "canonical",
    "UnknownCodeError": "tokens",
    "UnknownToolError": "errors",
    "UnresolvedIntentError": "intents",
    "WriteNotGuardedError": "errors",
    "WrongTokenKindError": "tokens",
}

__all__ = [
    "CONFIRMATION_FIELD",
    "MAX_NAME_LENGTH",
    "SECRET_ENV",
    "SEPARATOR",
    "ArgumentError",
    "ArgumentProblem",
    "CanonicalJSONError",
    "Capability",
    "CapabilityManifest",
    "CodeRecord",
    "ConfirmationCode",
    "DuplicateIntentError",
    "ExpiredTokenError",
    "Intent",
    "IntentError",
    "IntentGuard",
    "IntentJournal",
    "IntentMismatchError",
    "IntentRecord",
    "IntentStatus",
    "MalformedTokenError",
    "ManifestConfigError",
    "ManifestMiddleware",
    "ManifestRegistry",
    "MemoryIntentJournal",
    "MemoryTokenStore",
    "Outcome",
    "OutcomeUnknownError",
    "PreflightError",
    "Proposal",
    "Reconciliation",
    "ReplayedTokenError",
    "RevokedCodeError",
    "SecretConfigError",
    "SqliteIntentJournal",
    "SqliteTokenStore",
    "TamperedTokenError",
    "TokenClaims",
    "TokenError",
    "TokenIssuer",
    "TokenStore",
    "UnknownCodeError",
    "UnknownToolError",
    "UnresolvedIntentError",
    "WriteNotGuardedError",
    "WrongTokenKindError",
    "canonical_json",
    "capability_from_tool",
    "create_manifest_agent",
    "default_account",
    "intent_hash",
    "manifest_prompt",
    "manifest_scope",
    "manifest_tools",
    "resolve_secret",
    "sha256_hex",
    "tool_call_hash",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
