"""Every exception class of the add-ons safety, approval, ledger, storage, MCP, gateway and
observe derives from `AttentionScopingError`, keeping its standard base (`except ValueError`
still works). Warning categories are issued, not raised, and keep `Warning` alone."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from attention_scoping.errors import AttentionScopingError

PACKAGES = ("safety", "approval", "ledger", "storage", "mcp", "gateway", "observe")


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for package in PACKAGES:
        root = importlib.import_module(f"attention_scoping.{package}")
        for info in pkgutil.iter_modules(root.__path__, f"{root.__name__}."):
            module = importlib.import_module(info.name)
            for _, value in inspect.getmembers(module, inspect.isclass):
                if not issubclass(value, BaseException) or issubclass(value, Warning):
                    continue
                if value.__module__ == module.__name__:
                    found.append(value)
    return found


EXCEPTIONS = _exception_classes()


def test_the_add_ons_define_exceptions() -> None:
    names = {e.__name__ for e in EXCEPTIONS}
    assert {"TokenError", "LedgerError", "McpFault", "GatewayConfigError"} <= names


@pytest.mark.parametrize("error", EXCEPTIONS, ids=lambda e: f"{e.__module__}.{e.__name__}")
def test_every_exception_derives_from_the_root(error: type[BaseException]) -> None:
    assert issubclass(error, AttentionScopingError)


@pytest.mark.parametrize(
    ("module", "name", "base"),
    [
        ("safety.tokens", "TokenError", ValueError),
        ("safety.errors", "UnknownToolError", LookupError),
        ("safety.errors", "WriteNotGuardedError", PermissionError),
        ("safety.canonical", "CanonicalJSONError", TypeError),
        ("ledger.interface", "UnknownTaskError", KeyError),
        ("storage.retry", "DatabaseUnavailableError", RuntimeError),
        ("mcp.config", "McpConfigError", ValueError),
        ("observe.jsonl", "JsonLinesError", ValueError),
    ],
)
def test_the_standard_bases_are_kept(module: str, name: str, base: type[BaseException]) -> None:
    error = getattr(importlib.import_module(f"attention_scoping.{module}"), name)
    assert issubclass(error, base) and issubclass(error, AttentionScopingError)
