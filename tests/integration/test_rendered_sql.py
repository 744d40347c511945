"""PostgreSQL statements rendered once: the same bytes psycopg sends for them, and the feed reads through them."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore
from chatledger.adapters.persistence.rendered_sql import rendered
from tests.integration.conftest import Backend

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(60)]

NAMES = ["stored_events", "Mixed Case", 'a "quoted" name', "ünïcode", "semi;colon"]


@pytest.mark.parametrize("name", NAMES)
def test_rendered_is_what_the_connection_renders(postgres_server: str, name: str) -> None:
    """Identifiers quoted as libpq quotes them, whatever the name."""
    statement = sql.SQL("SELECT {} FROM {} WHERE x = %s").format(
        sql.Identifier(name), sql.Identifier("public", name)
    )
    with psycopg.connect(postgres_server, autocommit=True) as connection:
        assert rendered(statement) == statement.as_bytes(connection)
        assert rendered(statement.as_string(connection)) == statement.as_bytes(connection)


def test_the_feed_reads_through_rendered_statements(postgres_backend: Backend) -> None:
    """The feed's statements (read at every NOTIFY by the hub) are bytes, not composed again at
    each execute, and read what was committed."""
    store: ConversationStore = postgres_backend.open()
    recorder: Any = store.log.recorder
    feed = recorder.feed
    assert all(isinstance(each, bytes) for each in (feed._rows, feed._ids, feed._max))
    store.start_conversation("c", actor="user:alice")
    store.append_message(
        "c",
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hello"}]},
        actor="user:alice",
    )
    head = store.log.head()
    assert head > 0
    touched = store.log.touched_after(0, 100)
    assert [position for position, _ in touched][-1] == head
