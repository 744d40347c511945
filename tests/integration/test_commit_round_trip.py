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
from chatledger.adapters.persistence.notify import listen
from chatledger.adapters.persistence.postgres_recorder import channel_of
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend, _postgres_conninfo, _postgres_store_url, drop_schema

USER = "user:alice"


def _message(text: str, message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _listener(store: ConversationStore) -> Iterator[psycopg.Connection[Any]]:
    """The store's own LISTEN connection (its channel is the store's alone: other schemas'
    stores on the server do not wake it)."""
    connection = listen(store.log, "commit_round_trip")
    try:
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


def test_stores_in_two_schemas_of_one_database_notify_channels_of_their_own(
    postgres_backend: Backend,
) -> None:
    """A NOTIFY channel belongs to the database: each schema's store has its own, so one
    store's commits do not wake the other's listeners (a read finding nothing each time)."""
    first = postgres_backend.open()
    second_backend = Backend("postgres", _postgres_store_url(f"t_{uuid.uuid4().hex}"))
    try:
        second = second_backend.open()
        channels = [store.log.recorder.channel_name for store in (first, second)]  # type: ignore[attr-defined]
        assert channels[0] != channels[1]
        for store in (first, second):
            store.start_conversation("c", actor=USER)
        for listener in _listener(first):
            assert [row[0] for row in listener.execute("SELECT pg_listening_channels()")] == [
                channels[0]
            ]
            with psycopg.connect(_postgres_conninfo(), autocommit=True) as both:
                for channel in channels:
                    both.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                second.append_message("c", _message("to the second", "m1"), actor=USER)
                first.append_message("c", _message("to the first", "m1"), actor=USER)
                # Delivered in commit order, each on its store's channel.
                got = [n.channel for n in both.notifies(timeout=10, stop_after=2)]
                assert got == [channels[1], channels[0]]
            woken = [n.channel for n in listener.notifies(timeout=10, stop_after=1)]
            assert woken == [channels[0]]  # the first store's commit, not the second's
    finally:
        second_backend.close_all()
        drop_schema(second_backend.url)


@pytest.mark.parametrize(
    ("schema", "table", "expected"),
    [
        ("public", "stored_events", "stored_events"),
        (None, "stored_events", "stored_events"),
        ("tenant_a", "stored_events", "tenant_a_stored_events"),
    ],
)
def test_a_channel_is_named_after_its_schema_and_table(
    schema: str | None, table: str, expected: str
) -> None:
    assert channel_of(schema, table) == expected


def test_long_schema_names_keep_channels_apart() -> None:
    """PostgreSQL cuts identifiers at 63 bytes: two long schemas must not be cut to one channel."""
    long_a, long_b = "s" * 60 + "_a", "s" * 60 + "_b"
    a, b = channel_of(long_a, "stored_events"), channel_of(long_b, "stored_events")
    assert a != b
    assert max(len(a.encode()), len(b.encode())) <= 63
