"""The MCP client configuration (`{"mcpServers": {...}}`) read into validated server records.

The format is the one Claude Desktop, Cursor and VS Code share: each server is either a local
process (`command`, `args`, `env`, `cwd`) spoken to over stdio, or a remote endpoint (`url`,
`transport`/`type`, `headers`). VS Code's top-level `"servers"` key is accepted too. Four
optional keys that other clients ignore are understood: `description` (the scope's one-line
description), `timeout` (seconds per tool call), `disabled`, and `redact` (names whose values are
secrets besides those named like credentials, see `ServerConfig.secret_values`).
Framework-free: no MCP import.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from attention_scoping.common.redact import (
    Redactor,
    assigned_secrets,
    credential_name,
    redact_url,
    token_shaped,
    url_secrets,
)
from attention_scoping.errors import AttentionScopingError

Transport = Literal["stdio", "streamable_http", "sse"]
"""How the client reaches a server."""

_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamable-http": "streamable_http",
    "streamablehttp": "streamable_http",
    "sse": "sse",
}
_ENV_REF = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_KNOWN_KEYS = {
    "command", "args", "env", "cwd", "url", "transport", "type", "headers",
    "description", "timeout", "disabled", "redact",
}  # fmt: skip
_SCHEMES = ("bearer ", "basic ", "token ", "digest ")


class McpConfigError(AttentionScopingError, ValueError):
    """The MCP configuration is malformed; the message names the server and the field."""


def _named_value(name: str, value: str, extra: tuple[str, ...]) -> list[tuple[str, str]]:
    """The secrets of an `env` or `headers` entry: its value when the name or the value looks
    like a credential (with the token after an HTTP scheme, and each cookie's value), and any
    credential a value assigns or carries in a URL."""
    found = assigned_secrets(value, extra) + url_secrets(value, extra)
    if not (credential_name(name, extra) or token_shaped(value)):
        return found
    found.append((name, value))
    scheme = next((s for s in _SCHEMES if value.lower().startswith(s)), None)
    if scheme is not None:
        found.append((name, value[len(scheme) :].strip()))
    if "cookie" in name.lower():
        found += [(name, c.partition("=")[2]) for c in value.split(";") if "=" in c]
    return found


def _option_values(args: tuple[str, ...], extra: tuple[str, ...]) -> list[tuple[str, str]]:
    """The values of credential-named options in `args`: `--token=X` and `--token X`."""
    found: list[tuple[str, str]] = []
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        option, eq, value = arg.partition("=")
        if not credential_name(option, extra):
            continue
        if eq:
            found.append((option, value))
        elif index + 1 < len(args) and not args[index + 1].startswith("-"):
            found.append((option, args[index + 1]))
    return found


@dataclass(frozen=True, repr=False)
class ServerConfig:
    """One configured MCP server: how to start or reach it, and our per-server options.

    Its secrets are the values no model, log or file may see (`secret_values`); `redact` masks
    them and URL credentials in diagnostics, `redact_values` masks them in results and
    listings; the repr and `where()` show the server with them masked.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = field(default=None, compare=False)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = field(default=None, compare=False)
    description: str = ""
    timeout: float | None = None
    """Seconds a tool call may take (None: the client's default)."""
    secrets: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """What each `${VAR}` reference expanded to, as (VAR, value): a secret when VAR is named
    like a credential or the value looks like one."""
    redact_names: tuple[str, ...] = field(default=(), compare=False)
    """The configuration's `redact` list: names of `env` keys, headers, `${VAR}`s, options and
    URL parameters whose values are secrets too, whatever they are called."""

    def secret_values(self) -> list[tuple[str, str]]:
        """The secrets of this server, named (the mark says which: `[redacted CAL_TOKEN]`):
        values of `env` keys, headers, `${VAR}`s, `--options` and URL parameters named like a
        credential (`core.redact.credential_name`) or in `redact_names`, values shaped like a
        credential, the token of an `Authorization` value, cookie values, URL passwords.
        Ordinary values (`TZ=Europe/Paris`, `CAL_USER=alice`) are not secrets."""
        extra = self.redact_names
        found = [
            (name, value)
            for name, value in self.secrets
            if credential_name(name, extra) or token_shaped(value)
        ]
        for name, value in [*(self.env or {}).items(), *(self.headers or {}).items()]:
            found += _named_value(name, value, extra)
        found += _option_values(self.args, extra)
        for text in [self.url or "", self.command or "", *self.args]:
            found += url_secrets(text, extra) + assigned_secrets(text, extra)
        return found

    @functools.cached_property
    def redact(self) -> Redactor:
        """Masks this server's secret values and any URL credential in a diagnostic text."""
        return Redactor(self.secret_values())

    @functools.cached_property
    def redact_values(self) -> Redactor:
        """Masks this server's secret values only (for its results and listings, whose URLs
        are data)."""
        return Redactor(self.secret_values(), urls=False)

    def _identity(self) -> str:
        if self.transport == "stdio":
            ident = {"command": self.command, "args": list(self.args), "cwd": self.cwd}
        else:
            ident = {"url": self.url, "transport": self.transport}
        return json.dumps(ident, sort_keys=True, ensure_ascii=False)

    @property
    def cache_key(self) -> str:
        """What identifies the server's tool list across runs: a SHA-256 digest of its command
        line or URL (never the plain text, which may embed a key).

        Environment values and headers are left out (they rarely change which tools a server
        offers).
        """
        return hashlib.sha256(self._identity().encode("utf-8")).hexdigest()

    @property
    def cache_id(self) -> str:
        """A filename-safe prefix of `cache_key`."""
        return self.cache_key[:24]

    def where(self) -> str:
        """A short human label of what runs, secrets masked: the command line or the URL."""
        if self.transport == "stdio":
            return self.redact(" ".join([self.command or "", *self.args]).strip())
        return self.redact(str(self.url))

    def __repr__(self) -> str:
        where = self.where()
        return f"ServerConfig(name={self.name!r}, transport={self.transport!r}, where={where!r})"


@dataclass(frozen=True)
class McpConfig:
    """The validated servers of one configuration, in file order (disabled ones left out)."""

    servers: dict[str, ServerConfig]
    source: str = "<mapping>"
    disabled: tuple[str, ...] = ()


def expand_env(value: str, found: list[tuple[str, str]] | None = None) -> str:
    """Replace `${VAR}` and `${env:VAR}` with the environment's value (empty when unset);
    each (VAR, value) put in is appended to `found` (`ServerConfig.secrets`)."""

    def value_of(match: re.Match[str]) -> str:
        text = os.environ.get(match.group(1), "")
        if found is not None and text:
            found.append((match.group(1), text))
        return text

    return _ENV_REF.sub(value_of, value)


def _strings(value: Any, where: str, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        msg = f"{where}: {what!r} must be a list of strings, got {json.dumps(value)[:80]}"
        raise McpConfigError(msg)
    return tuple(value)


def _string_map(value: Any, where: str, what: str, found: list[tuple[str, str]]) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        msg = f"{where}: {what!r} must be an object of string values"
        raise McpConfigError(msg)
    return {k: expand_env(v, found) for k, v in value.items()}


def _transport(raw: Mapping[str, Any], where: str) -> Transport:
    given = raw.get("transport", raw.get("type"))
    if given is None:
        if "command" in raw or "url" not in raw:
            return "stdio"
        return "streamable_http"
    key = str(given).lower()
    if key not in _TRANSPORTS:
        msg = (
            f"{where}: unknown transport {given!r}; use one of "
            "'stdio', 'http' (streamable HTTP) or 'sse'"
        )
        raise McpConfigError(msg)
    return _TRANSPORTS[key]


def _timeout(raw: Mapping[str, Any], where: str) -> float | None:
    value = raw.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        msg = f"{where}: 'timeout' must be a positive number of seconds, got {value!r}"
        raise McpConfigError(msg)
    return float(value)


def parse_server(name: str, raw: Any, base_dir: Path | None = None) -> ServerConfig:
    """Validate one `mcpServers` entry.

    Raises:
        McpConfigError: naming the server and the offending field.
    """
    where = f"server {name!r}"
    if not isinstance(raw, Mapping):
        msg = f"{where}: expected an object with 'command' or 'url', got {type(raw).__name__}"
        raise McpConfigError(msg)
    unknown = sorted(set(raw) - _KNOWN_KEYS)
    if unknown:
        known = ", ".join(sorted(_KNOWN_KEYS))
        msg = f"{where}: unknown field(s) {', '.join(unknown)}; known: {known}"
        raise McpConfigError(msg)
    transport = _transport(raw, where)
    description = raw.get("description", "")
    if not isinstance(description, str):
        msg = f"{where}: 'description' must be a string"
        raise McpConfigError(msg)
    common: dict[str, Any] = {
        "name": name,
        "transport": transport,
        "description": " ".join(description.split()),
        "timeout": _timeout(raw, where),
        "redact_names": _strings(raw.get("redact", []), where, "redact"),
    }
    found: list[tuple[str, str]] = []
    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            msg = f"{where}: a stdio server needs a non-empty 'command'"
            raise McpConfigError(msg)
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            msg = f"{where}: 'cwd' must be a string"
            raise McpConfigError(msg)
        if cwd is not None and base_dir is not None and not Path(cwd).is_absolute():
            cwd = str((base_dir / cwd).resolve())
        args = _strings(raw.get("args", []), where, "args")
        env = raw.get("env")
        return ServerConfig(
            command=expand_env(command, found),
            args=tuple(expand_env(a, found) for a in args),
            env=_string_map(env, where, "env", found) if env is not None else None,
            cwd=cwd,
            secrets=tuple(found),
            **common,
        )
    url = raw.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        shown = redact_url(url) if isinstance(url, str) else url
        msg = f"{where}: a {transport} server needs an http(s) 'url', got {shown!r}"
        raise McpConfigError(msg)
    headers = raw.get("headers")
    return ServerConfig(
        url=expand_env(url, found),
        headers=_string_map(headers, where, "headers", found) if headers is not None else None,
        secrets=tuple(found),
        **common,
    )


def parse_config(data: Any, source: str = "<mapping>", base_dir: Path | None = None) -> McpConfig:
    """Validate a decoded configuration (`{"mcpServers": {...}}` or VS Code's `{"servers": ...}`).

    Raises:
        McpConfigError: the top-level shape or a server entry is wrong.
    """
    if not isinstance(data, Mapping):
        msg = f"{source}: expected a JSON object with 'mcpServers'"
        raise McpConfigError(msg)
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, Mapping) or not servers:
        msg = f"{source}: no servers: expected a non-empty 'mcpServers' object of name -> server"
        raise McpConfigError(msg)
    parsed: dict[str, ServerConfig] = {}
    disabled: list[str] = []
    for name, raw in servers.items():
        if not isinstance(name, str) or not name.strip():
            msg = f"{source}: server names must be non-empty strings"
            raise McpConfigError(msg)
        if isinstance(raw, Mapping) and raw.get("disabled") is True:
            disabled.append(name)
            continue
        try:
            parsed[name] = parse_server(name, raw, base_dir)
        except McpConfigError as exc:
            msg = f"{source}: {exc}"
            raise McpConfigError(msg) from None
    if not parsed:
        msg = f"{source}: every server is disabled"
        raise McpConfigError(msg)
    return McpConfig(parsed, source, tuple(disabled))


def is_mcp_config(data: Any) -> bool:
    """Whether decoded JSON looks like an MCP client configuration."""
    return isinstance(data, Mapping) and isinstance(
        data.get("mcpServers", data.get("servers")), Mapping
    )


ConfigInput = McpConfig | Mapping[str, Any] | str | os.PathLike[str]
"""A parsed config, a decoded mapping, or the path of a JSON file."""


def load_config(config: ConfigInput) -> McpConfig:
    """Read `config` (a path, a decoded mapping, or an `McpConfig`) and validate it.

    Raises:
        McpConfigError: an unreadable file, invalid JSON, or a malformed server entry.
    """
    if isinstance(config, McpConfig):
        return config
    if isinstance(config, Mapping):
        return parse_config(config)
    path = Path(config)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"{path}: cannot read the MCP configuration ({exc.strerror or exc})"
        raise McpConfigError(msg) from None
    except UnicodeDecodeError:
        msg = f"{path}: the MCP configuration is not UTF-8 text"
        raise McpConfigError(msg) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path}:{exc.lineno}: invalid JSON ({exc.msg} at column {exc.colno})"
        raise McpConfigError(msg) from None
    except RecursionError:
        msg = f"{path}: invalid JSON (nested too deeply)"
        raise McpConfigError(msg) from None
    return parse_config(data, str(path), path.resolve().parent)
