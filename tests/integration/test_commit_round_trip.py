"""A PostgreSQL commit sent in one round trip: what fails is rolled back, listeners are woken,
and the NOTIFY waits for the recorder's marks when this process follows the conversation."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError
from psycopg import sql

from chatledger import ConversationStore
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend

USER = "user:alice"


def _message(text: str, message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _listener(store: ConversationStore) -> Iterator[psycopg.Connection[Any]]:
    """A LISTEN connection to a channel of the store's own: the NOTIFY channel is named after
    the events table, the same in every schema, so other runs on the server would wake it."""
    env = store.config.env
    recorder: Any = store.log.recorder
    channel = f"commit_round_trip_{uuid.uuid4().hex}"
    recorder._notify = sql.SQL("NOTIFY {}").format(sql.Identifier(channel))
    connection = psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=env["POSTGRES_PORT"],
        user=env["POSTGRES_USER"],
        password=env.get("POSTGRES_PASSWORD") or None,
        autocommit=True,
    )
    try:
        connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        yield connection
    finally:
        connection.close()


@pytest.fixture
def pg_store(postgres_backend: Backend) -> ConversationStore:
    """A store on a fresh PostgreSQL schema, with one conversation started."""
    store = postgres_backend.open()
    store.start_conversation("c", actor=USER)
    return store


def test_a_clashing_commit_is_rolled_back(pg_store: ConversationStore) -> None:
    """The clash raises IntegrityError (the statements queued after it are skipped), nothing
    of the failed commit is stored, and writes go on."""
    store = pg_store
    store.append_message("c", _message("one", "m1"), actor=USER)
    recorder: Any = store.log.recorder
    key = conversation_id(store.tenant, "c")
    stored = list(recorder.select_events(key))
    with pytest.raises(IntegrityError):
        recorder.insert_events([stored[-1]])  # a version already stored
    assert len(recorder.select_events(key)) == len(stored)
    store.append_message("c", _message("two", "m2"), actor=USER)
    assert [m["id"] for m in store.messages("c")] == ["m1", "m2"]


def test_a_commit_wakes_listeners(pg_store: ConversationStore) -> None:
    """The NOTIFY sent with the commit reaches a LISTEN connection."""
    for listener in _listener(pg_store):
        pg_store.append_message("c", _message("hello", "m1"), actor=USER)
        woken = list(listener.notifies(timeout=10, stop_after=1))
        assert len(woken) == 1


def test_the_notify_waits_for_the_marks_when_this_process_follows(
    pg_store: ConversationStore,
) -> None:
    """With a ``marking`` predicate saying yes, no NOTIFY exists while the ``on_inserted``
    hooks run (it is sent after them); it arrives once they are done."""
    recorder: Any = pg_store.log.recorder
    for listener in _listener(pg_store):
        seen_in_hook: list[int] = []

        def hook(
            events: Sequence[Any],
            positions: Sequence[int],
            listener: Any = listener,
            seen: list[int] = seen_in_hook,
        ) -> None:
            seen.append(len(list(listener.notifies(timeout=0.5, stop_after=1))))

        recorder.marking.append(lambda events: True)
        recorder.on_inserted.append(hook)
        try:
            pg_store.append_message("c", _message("hello", "m1"), actor=USER)
        finally:
            recorder.on_inserted.remove(hook)
            recorder.marking.pop()
        assert seen_in_hook == [0], "the NOTIFY was sent before the hooks ran"
        assert len(list(listener.notifies(timeout=10, stop_after=1))) == 1


def test_writes_run_with_the_stores_lock_timeout(postgres_backend: Backend) -> None:
    """Every connection of the store starts with its ``POSTGRES_LOCK_TIMEOUT``, so a commit
    sends no ``SET LOCAL lock_timeout`` of its own and still runs with it."""
    from chatledger.adapters.bootstrap import StoreOptions
    from chatledger.adapters.store.store import open_store

    store = open_store(postgres_backend.url, StoreOptions(env={"POSTGRES_LOCK_TIMEOUT": "7"}))
    postgres_backend.stores.append(store)
    store.start_conversation("c", actor=USER)
    store.append_message("c", _message("one", "m1"), actor=USER)
    recorder: Any = store.log.recorder
    with recorder.datastore.get_connection() as conn:
        assert conn.execute("SHOW lock_timeout").fetchone()["lock_timeout"] == "7s"
    assert recorder.lock_table_statements == []  # no SET LOCAL a commit
    assert [m["id"] for m in store.messages("c")] == ["m1"]


def test_a_snapshot_replaces_the_older_one(pg_store: ConversationStore) -> None:
    """The statement writing a conversation's snapshot drops its older one: one row is left,
    the newest, and the conversation loads from it as from its events."""
    store = pg_store
    recorder: Any = store.log.recorder
    key = conversation_id(store.tenant, "c")
    for turn in range(8):
        stream = store.open_stream(
            "c", actor="agent:bot", user_message=_message(f"q{turn}", f"u{turn}"), user_actor=USER
        )
        stream.append({"type": "start", "messageId": f"a{turn}"})
        stream.append({"type": "text-start", "id": "t"})
        stream.append({"type": "text-delta", "id": "t", "delta": f"answer {turn}"})
        stream.append({"type": "text-end", "id": "t"})
        stream.append({"type": "finish"})
        stream.close(outcome="finished")
    with recorder.datastore.get_connection() as conn:
        rows = conn.execute(
            sql.SQL("SELECT originator_version FROM {} WHERE originator_id = %s").format(
                sql.Identifier(recorder.datastore.schema, "chatledger_snapshots")
            ),
            (key,),
        ).fetchall()
    assert len(rows) == 1
    assert rows[0]["originator_version"] > 12  # more than one was taken: each replaced the last
    assert [m["id"] for m in store.messages("c")][-2:] == ["u7", "a7"]


@pytest.mark.parametrize("count", [3, 40])
def test_a_commits_positions_are_its_events_in_order(
    pg_store: ConversationStore, count: int
) -> None:
    """Few events go as one ``VALUES`` insert, many (a large group commit) as eventsourcing's
    ``unnest``: either way each event gets its position, in the order given, and reads back."""
    from eventsourcing.persistence import StoredEvent

    recorder: Any = pg_store.log.recorder
    key = uuid.uuid4()
    events = [
        StoredEvent(originator_id=key, originator_version=v, topic="t", state=b"\x00{}%d" % v)
        for v in range(1, count + 1)
    ]
    positions = recorder.insert_events(events)
    assert len(positions) == count and positions == sorted(positions)
    stored = recorder.select_events(key)
    assert [e.originator_version for e in stored] == list(range(1, count + 1))
    assert all(e.state.endswith(b"{}%d" % e.originator_version) for e in stored)
    found = recorder.select_notifications(positions[0], count)
    assert [(n.id, n.originator_version) for n in found] == list(
        zip(positions, range(1, count + 1), strict=True)
    )
