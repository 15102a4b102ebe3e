"""One redaction rule: a canary secret given to an MCP server (through `env`, `headers`, `${VAR}`
in `url` or `args`, or written into a URL) appears in no payload, log line, exception, cache
file or audit output the package writes, whatever the server prints on its way down."""

from __future__ import annotations

import json
import logging
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from mcp import types as mcp_types

from attention_scoping.common.redact import (
    MASK,
    Redactor,
    mark,
    redact,
    redact_url,
    url_credentials,
)
from attention_scoping.mcp import McpConnectMiddleware, McpServers
from attention_scoping.mcp.cache import ToolListCache, listing_from_tools
from attention_scoping.mcp.config import load_config
from attention_scoping.mcp.connection import StderrTail
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.mcp_support import python_server

CANARY = "canary-7f3a9c2e-s3cret"
USERINFO = mark("URL credentials")
LITERAL = "literal-key-0b1d4e"
"""A key written into a URL of the configuration itself (not through `${VAR}`)."""

ECHO_AND_FAIL = (
    "import os, sys\n"
    "sys.stderr.write('auth failed for token ' + os.environ['DB_TOKEN'] + '\\n')\n"
    "sys.stderr.write('dsn was ' + sys.argv[1] + '\\n')\n"
    "sys.exit(1)\n"
)
"""A stdio server that echoes its credentials (from `env` and from `args`) and exits."""


@pytest.fixture(autouse=True)
def canary_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANARY", CANARY)


def leaky_server() -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-c", ECHO_AND_FAIL, "postgresql://app:${CANARY}@db/x"],
        "env": {"DB_TOKEN": "${CANARY}"},
    }


def leaky_remote() -> dict[str, Any]:
    return {
        "url": f"http://user:{LITERAL}@127.0.0.1:9/mcp?api_key=${{CANARY}}&k={LITERAL}",
        "headers": {"Authorization": "Bearer ${CANARY}"},
    }


def assert_clean(text: str) -> None:
    assert CANARY not in text and LITERAL not in text, text


def cache_text(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.glob("*")) if directory.exists() else ""


def test_redactor_masks_secrets_and_url_credentials() -> None:
    text = f"got {CANARY} at https://u:{LITERAL}@h:8/p?api_key={LITERAL}&x=&y=2#access_token=t"
    shown = Redactor([CANARY, "0"])(text)
    url = "https://[redacted URL credentials]@h:8/p?api_key=[redacted api_key]&x=&y=[redacted y]"
    assert shown == f"got {MASK} at {url}#access_token=[redacted access_token]"
    assert redact("token 0 of 10") == "token 0 of 10"  # values under 4 characters are not masked
    assert redact(f"{json.dumps(CANARY + '/x')[1:-1]}", [CANARY + "/x"]) == MASK
    assert redact(f"q={CANARY}%2Fx", [CANARY + "/x"]) == f"q={MASK}"  # percent-encoded too
    assert redact_url(f"postgresql://{LITERAL}@db/x") == f"postgresql://{USERINFO}@db/x"
    assert redact_url("no url here") == "no url here"
    assert url_credentials(f"x https://u:{LITERAL}@h/p?k=v1&b#f=v2") == [
        "u:" + LITERAL,
        LITERAL,
        "v1",
        "b",
        "v2",
    ]
    values_only = Redactor([CANARY], urls=False)
    assert values_only(f"{CANARY} https://h/s?q=cats") == f"{MASK} https://h/s?q=cats"


def test_config_repr_where_and_cache_key_hide_the_secrets() -> None:
    config = load_config({"mcpServers": {"db": leaky_server(), "remote": leaky_remote()}})
    for server in config.servers.values():
        shown = repr(server) + server.where() + server.cache_key + repr(config)
        assert_clean(shown)
        assert len(server.cache_key) == 64 and set(server.cache_key) <= set("0123456789abcdef")
    assert config.servers["db"].args[2] == f"postgresql://app:{CANARY}@db/x"  # still used as is
    assert config.servers["db"].where().endswith(f"postgresql://{USERINFO}@db/x")


def test_the_cache_file_holds_a_digest_not_the_url(tmp_path: Path) -> None:
    config = load_config({"mcpServers": {"remote": leaky_remote()}})
    cache = ToolListCache(tmp_path)
    listing = listing_from_tools([{"name": "ping"}], f"Key {CANARY} is set.", "remote")
    cache.put(config.servers["remote"], listing)
    assert cache.get(config.servers["remote"]) == listing
    stored = json.loads(cache.path(config.servers["remote"]).read_text())
    assert stored["key"] == config.servers["remote"].cache_key and stored["version"] == 2
    assert LITERAL not in cache_text(tmp_path)


def test_stderr_lines_are_redacted_capped_and_logged_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tail = StderrTail("leaky", redact=Redactor([CANARY]))
    tail.writer.write(f"token {CANARY}\n" + "x" * 100_000 + "\n" + "last\n")
    tail.close(wait=5)
    text = tail.text()
    assert_clean(text + caplog.text)
    assert text.startswith(f"token {MASK} | xxx") and text.endswith("x… | last")
    assert len(text) <= 400
    assert f"token {MASK}" in caplog.text


def agent_over(servers: McpServers, script: list[Any]) -> Any:
    middleware: list[Any] = [
        AttentionScopingMiddleware(servers.scopes, selector=None),
        McpConnectMiddleware(servers),
    ]
    return create_agent(
        ScriptedChatModel(script=script), tools=servers.tools, middleware=middleware
    )


def test_a_failing_stdio_server_leaks_nothing_anywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = load_config({"mcpServers": {"db": leaky_server()}})
    cache = ToolListCache(tmp_path / "cache")
    cache.put(config.servers["db"], listing_from_tools([{"name": "query"}], None, None))
    servers = McpServers(config, cache_dir=str(cache.directory))
    script = [
        calls(tool_call("load_context", {"name": "db"})),
        calls(tool_call("query")),
        say("down"),
    ]
    try:
        result = agent_over(servers, script).invoke({"messages": [("user", "query it")]})
        answer = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
        body = json.loads(answer.text)
        assert body["error"] == "server_unavailable"
        # the server's words, masked, each mark naming what it replaced
        assert f"auth failed for token {mark('DB_TOKEN')}" in body["detail"]
        assert f"dsn was postgresql://{USERINFO}@db/x" in body["detail"]
        with pytest.raises(ToolException) as info:
            servers.tools[0].invoke({})
        shown = answer.text + str(info.value) + repr(servers) + repr(servers.config)
        assert_clean(shown + caplog.text + cache_text(cache.directory))
    finally:
        servers.close()


def test_discovery_failure_reasons_and_warnings_are_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = {"mcpServers": {"db": leaky_server(), "remote": leaky_remote()}}
    servers = McpServers(config, cache_dir=str(tmp_path / "cache"), connect_timeout=10)
    with closing(servers):
        assert servers.scopes == []
        assert f"auth failed for token {mark('DB_TOKEN')}" in servers.unavailable["db"]
        url = f"http://{USERINFO}@127.0.0.1:9/mcp?api_key={mark('Authorization')}"
        assert url in servers.unavailable["remote"]  # the header's value, masked by its name
        assert_clean(json.dumps(servers.unavailable) + caplog.text)
        assert_clean(cache_text(tmp_path / "cache"))


def test_a_served_listing_and_its_cache_files_are_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    raw = python_server("raw_server.py", "--token", "${CANARY}", f"pg://app:{LITERAL}@db/x")
    raw["env"] = {"ECHOED": "${CANARY}"}
    servers = McpServers({"mcpServers": {"raw": raw}}, cache_dir=str(tmp_path / "cache"))
    with closing(servers):
        echo = next(t for t in servers.tools if t.name == "echo")
        answer = echo.invoke({"text": f"key {CANARY}, pw {LITERAL}, see https://x.org/s?q=cats"})
        # results pass the rule too: configured values masked, a URL in the data kept as is
        key, pw = mark("--token"), mark("URL password")
        assert answer.startswith(f"echo: key {key}, pw {pw}, see https://x.org/s?q=cats (pid ")
        assert_clean(cache_text(tmp_path / "cache") + caplog.text)
        assert list((tmp_path / "cache").glob("*.json"))  # the listing was cached


def test_a_tool_error_text_is_redacted() -> None:
    from attention_scoping.mcp.tools import as_content

    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=f"bad key {CANARY}")], is_error=True
    )
    with pytest.raises(ToolException) as info:
        as_content("db", "query", result, Redactor([CANARY]))
    assert f"bad key {MASK}" in str(info.value)
    assert_clean(str(info.value))


def test_the_audit_of_leaky_servers_prints_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    from attention_scoping_lab.cli import main

    caplog.set_level(logging.DEBUG)
    path = tmp_path / "mcp.json"
    raw = python_server("raw_server.py", "--token", "${CANARY}")
    servers = {"db": leaky_server(), "remote": leaky_remote(), "raw": raw}
    path.write_text(json.dumps({"mcpServers": servers}))
    assert main(["audit", str(path), "--suggest", "0", "--mcp-timeout", "20"]) == 0
    out = capsys.readouterr()
    assert "server 'db' left out" in out.out + out.err
    assert_clean(out.out + out.err + caplog.text)
    path.write_text(json.dumps({"mcpServers": {"db": leaky_server(), "remote": leaky_remote()}}))
    assert main(["audit", str(path), "--mcp-timeout", "20"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f"token {mark('DB_TOKEN')}" in err
    assert_clean(err + caplog.text)


def test_config_errors_do_not_echo_url_credentials() -> None:
    from attention_scoping.mcp.config import McpConfigError

    with pytest.raises(McpConfigError) as info:
        load_config({"mcpServers": {"x": {"url": f"ftp://u:{LITERAL}@h/x", "type": "http"}}})
    assert_clean(str(info.value))
