"""Secrets are masked by what they are, not by being configuration (issue 35, 4).

With `env` = `TZ=Europe/Paris`, `CAL_USER=alice`, `APP_ENV=production` and a real `CAL_TOKEN`,
a tool's "Meet alice in Europe/Paris for the production launch" and its description's
"(Europe/Paris by default)" come back as written; the token comes back as `[redacted
CAL_TOKEN]`, a mark the model and a reader can see, in results, errors, logs and the cache.
"""

from __future__ import annotations

import json
import logging
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage

from attention_scoping.common.redact import Redactor, credential_name, url_secrets
from attention_scoping.mcp import McpConnectMiddleware, McpServers
from attention_scoping.mcp.config import McpConfigError, load_config
from attention_scoping.middleware import AttentionScopingMiddleware
from attention_scoping.testing import ScriptedChatModel, calls, say, tool_call
from tests.mcp_support import python_server

TOKEN = "caltok-5e1f0a9b7c3d"
ORDINARY = {"TZ": "Europe/Paris", "CAL_USER": "alice", "APP_ENV": "production"}
MEETING = "Meet alice in Europe/Paris for the production launch; notes in alice/notes.txt"


def calendar(*args: str, **extra: Any) -> dict[str, Any]:
    server = python_server("calendar_server.py", *args)
    server["env"] = {**ORDINARY, "CAL_TOKEN": TOKEN}
    return {**server, **extra}


def files_text(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.glob("*")) if directory.exists() else ""


def test_the_issue_case_ordinary_values_stay_and_the_token_is_marked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    servers = McpServers({"mcpServers": {"cal": calendar()}}, cache_dir=str(tmp_path / "c"))
    with closing(servers):
        tool = servers.tools[0]
        assert tool.description == "Find a meeting (Europe/Paris by default)."
        model = ScriptedChatModel(
            script=[
                calls(tool_call("load_context", {"name": "cal"})),
                calls(tool_call("find_meeting", {})),
                say("done"),
            ]
        )
        middleware: list[Any] = [
            AttentionScopingMiddleware(servers.scopes, selector=None),
            McpConnectMiddleware(servers),
        ]
        agent: Any = create_agent(model, tools=servers.tools, middleware=middleware)
        out = agent.invoke({"messages": [("user", "When do I meet alice?")]})
        result = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
        assert result.content == f"{MEETING}; signed with [redacted CAL_TOKEN]."
        shown = json.dumps([r["schemas"] for r in model.recorded])
        assert "Find a meeting (Europe/Paris by default)." in shown
        everything = str(result.content) + files_text(tmp_path / "c") + caplog.text + shown
        assert TOKEN not in everything and "***" not in everything


def test_a_per_server_redact_list_masks_names_that_do_not_look_like_credentials(
    tmp_path: Path,
) -> None:
    config = {"mcpServers": {"cal": calendar(redact=["CAL_USER"])}}
    servers = McpServers(config, cache_dir=str(tmp_path / "c"))
    with closing(servers):
        answer = servers.tools[0].invoke({})
    assert answer.startswith("Meet [redacted CAL_USER] in Europe/Paris for the production launch")
    assert answer.endswith("signed with [redacted CAL_TOKEN].")


def test_a_failing_servers_stderr_names_what_was_masked(tmp_path: Path) -> None:
    servers = McpServers(
        {"mcpServers": {"cal": calendar("--fail-start")}},
        cache_dir=str(tmp_path / "c"),
        connect_timeout=20,
    )
    with closing(servers):
        reason = servers.unavailable["cal"]
    assert "login as alice with [redacted CAL_TOKEN] refused" in reason
    assert TOKEN not in reason


def test_credentials_are_known_by_their_names_and_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "svc-token-4242")
    monkeypatch.setenv("USER_TZ", "America/New_York")
    env = {
        **ORDINARY,
        "GITHUB_TOKEN": "gh-value-0001",
        "OPENAI_API_KEY": "openai-value-0002",
        "CLIENT_SECRET": "secret-value-0003",
        "DB_PASSWORD": "password-value-0004",
        "SMTP_PASS": "pass-value-0005",
        "GOOGLE_CREDENTIALS": "cred-value-0006",
        "PLAIN_NAME": "ghp_abcdefghijklmnopqrstuvwx1234",
        "SERVICE": "${MY_SERVICE_TOKEN}",
        "ZONE": "${USER_TZ}",
        "DSN": "host=db user=app password=dsn-pw-0007",
        "HOME_DIR": "/srv/app",
    }
    remote = {
        "url": "https://api.example.org/mcp?api_key=url-key-0008&lang=fr",
        "headers": {
            "Authorization": "Bearer bearer-value-0009",
            "Cookie": "sid=cookie-value-0010; theme=dark",
            "X-Tenant": "acme-corp",
        },
    }
    local = {
        "command": "server",
        "args": ["--api-key", "arg-value-0011", "--region", "eu-west-1", "--secret=arg-0012"],
        "env": env,
    }
    config = load_config({"mcpServers": {"local": local, "remote": remote}})
    masked = {v for s in config.servers.values() for _, v in s.secret_values()}
    for value in [
        "gh-value-0001",
        "openai-value-0002",
        "secret-value-0003",
        "password-value-0004",
        "pass-value-0005",
        "cred-value-0006",
        "ghp_abcdefghijklmnopqrstuvwx1234",
        "svc-token-4242",
        "dsn-pw-0007",
        "url-key-0008",
        "bearer-value-0009",
        "cookie-value-0010",
        "arg-value-0011",
        "arg-0012",
    ]:
        assert value in masked, value
    for value in [*ORDINARY.values(), "America/New_York", "/srv/app", "fr", "acme-corp"]:
        assert value not in masked, value
    shown = config.servers["local"].redact_values(
        "svc-token-4242 for alice in America/New_York, key arg-value-0011, gh-value-0001"
    )
    assert shown == (
        "[redacted MY_SERVICE_TOKEN] for alice in America/New_York, key [redacted --api-key], "
        "[redacted GITHUB_TOKEN]"
    )
    remote_shown = config.servers["remote"].redact_values("sent bearer-value-0009 to acme-corp")
    assert remote_shown == "sent [redacted Authorization] to acme-corp"


def test_names_and_url_keys() -> None:
    for name in ["CAL_TOKEN", "x-api-key", "apiKey", "Authorization", "Cookie", "db_passwd"]:
        assert credential_name(name), name
    for name in ["TZ", "CAL_USER", "APP_ENV", "AUTHOR", "region", "lang"]:
        assert not credential_name(name), name
    assert credential_name("CAL_ACCOUNT", ["cal_account"])
    found = url_secrets("https://u:pw-1234@h/x?token=t-5678&page=2&q=cats")
    assert found == [
        ("URL credentials", "u:pw-1234"),
        ("URL password", "pw-1234"),
        ("token", "t-5678"),
    ]


def test_diagnostics_mask_credential_assignments_and_token_shapes_with_a_mark() -> None:
    redact = Redactor([("CAL_TOKEN", TOKEN)])
    text = (
        f"login {TOKEN} failed: password=hunter2x, 'api_key': 'k-123456', "
        "Authorization: Bearer abc123def456ghi, KeyError: missing_field, TZ=Europe/Paris, "
        "sk-abcdefghijklmnop1234"
    )
    shown = redact(text)
    assert shown == (
        "login [redacted CAL_TOKEN] failed: password=[redacted password], 'api_key': "
        "'[redacted api_key]', Authorization: [redacted Authorization], KeyError: missing_field, "
        "TZ=Europe/Paris, [redacted token]"
    )
    assert redact(shown) == shown  # a second pass (another server's filter) changes nothing
    values_only = Redactor([("CAL_TOKEN", TOKEN)], urls=False)
    assert values_only("password=hunter2x in Europe/Paris") == "password=hunter2x in Europe/Paris"


def test_the_redact_list_must_be_a_list_of_strings() -> None:
    with pytest.raises(McpConfigError, match="'redact' must be a list of strings"):
        load_config({"mcpServers": {"x": {"command": "srv", "redact": "CAL_USER"}}})
