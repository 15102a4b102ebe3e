"""The example agent on LangGraph's PostgreSQL checkpointer (docs/deploy.md): `active_context`
and the conversation survive a new agent object (a restarted process) on the same thread."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.ledger_support import pg_dsn_or_skip

psycopg = pytest.importorskip("psycopg")
postgres_checkpoint = pytest.importorskip("langgraph.checkpoint.postgres")


def test_active_context_persists_in_postgres_across_agents() -> None:
    from psycopg.rows import dict_row

    from agents.tour import tour_model
    from example_agent import build_agent

    dsn = pg_dsn_or_skip()
    schema = f"checkpoints_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with psycopg.connect(
            dsn,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            options=f"-c search_path={schema}",
        ) as conn:
            saver = postgres_checkpoint.PostgresSaver(conn)
            saver.setup()
            config: Any = {"configurable": {"thread_id": "thread-1"}}
            first, _ = build_agent(tour_model(), checkpointer=saver)
            first.invoke({"messages": [("user", "What is 47 times 83?")]}, config)
            # A new agent object, as after a restart: the state comes from PostgreSQL.
            second, _ = build_agent(tour_model(), checkpointer=saver)
            assert second.get_state(config).values["active_context"] == "math"
            result = second.invoke(
                {"messages": [("user", "Translate that answer to French")]}, config
            )
            assert result["active_context"] == "translation"
            assert "3\u202f901" in result["messages"][-1].text  # read the first run's answer
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
