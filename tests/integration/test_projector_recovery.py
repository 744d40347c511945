"""Read models whose tracking position is behind their rows (a partial restore) are repaired, not spun on.

Restoring the tracking table from an older backup than the read-model tables
leaves rows the position says are not there yet. Catching up then meets
those rows: it must re-apply over them (the log is the truth), say so, and
finish, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore
from chatledger.adapters.responders import demo
from chatledger.adapters.store.operations.bookkeeping_check import MIGRATION
from tests.integration.conftest import Backend


def fill(store: ConversationStore) -> None:
    demo.record_demo(store, "done")
    store.start_conversation("paused")
    store.append_message("paused", demo.USER_MESSAGE)
    store.ingest("paused", demo.first_turn_chunks())


def set_tracking(backend: Backend, position: int) -> None:
    """Move the stored tracking position by hand, as a partial restore would.

    Only the read models' row: ``eventsourcing``'s ``__migration__`` row holds its layout's
    version, which ``verify`` checks on its own.
    """
    parts = urlsplit(backend.url)
    if backend.name == "sqlite":
        with sqlite3.connect(parts.path[1:], isolation_level=None) as db:
            db.execute(
                "UPDATE tracking SET notification_id = ? WHERE application_name <> ?",
                (position, MIGRATION),
            )
        return
    schema = parse_qs(parts.query)["schema"][0]
    conninfo = parts._replace(query="").geturl()
    with psycopg.connect(conninfo, autocommit=True) as db:
        db.execute(
            sql.SQL("UPDATE {} SET notification_id = %s WHERE application_name <> %s").format(
                sql.Identifier(schema, "chatledger_tracking")
            ),
            (position, MIGRATION),
        )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("position", [0, 3])
def test_a_position_behind_the_rows_is_reported_and_repaired(
    durable_backend: Backend, position: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Reads and verify finish; the rows are re-applied from the log; verify says what it found."""
    store = durable_backend.open()
    fill(store)
    expected = store.messages("done")
    approvals = store.pending_approvals()
    store.close()
    if position == 0:
        parts = urlsplit(durable_backend.url)
        if durable_backend.name == "sqlite":
            with sqlite3.connect(parts.path[1:], isolation_level=None) as db:
                db.execute("DELETE FROM tracking")
        else:
            schema = parse_qs(parts.query)["schema"][0]
            with psycopg.connect(parts._replace(query="").geturl(), autocommit=True) as db:
                db.execute(
                    sql.SQL("DELETE FROM {}").format(sql.Identifier(schema, "chatledger_tracking"))
                )
    else:
        set_tracking(durable_backend, position)
    store = durable_backend.open()
    report = store.operations.verify()
    assert [p.where for p in report.problems] == ["read-model"], report.problems
    assert "after their tracking position" in str(report.problems[0])
    assert "after their tracking position" in caplog.text
    assert store.operations.verify().ok  # repaired
    assert store.messages("done") == expected
    assert store.pending_approvals() == approvals
    assert store.operations.catch_up() == 0
