"""PostgreSQL writers take no table lock: the feed never passes a position a writer may still fill.

The interleavings are forced: a transaction is held open (a raw one, or a
store's own insert stopped by a trigger that waits on an advisory lock the
test holds) with a lower position while a higher one commits. Then several
processes write at once while readers tail the feed, and every event is read
exactly once, in position order.
"""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import sql

from chatledger import ConversationStore
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend

pytestmark = pytest.mark.postgres

GATE = 0x5EED_F00D
"""The advisory lock the gate trigger waits on."""


def _env(store: ConversationStore) -> dict[str, str]:
    return store.config.env


def _connect(store: ConversationStore, *, autocommit: bool = False) -> psycopg.Connection[Any]:
    env = _env(store)
    return psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        autocommit=autocommit,
    )


def _events(store: ConversationStore) -> sql.Composed:
    return sql.SQL("{}").format(sql.Identifier(_env(store)["POSTGRES_SCHEMA"], "chatledger_events"))


def _all_positions(store: ConversationStore) -> list[int]:
    with _connect(store, autocommit=True) as connection:
        rows = connection.execute(
            sql.SQL("SELECT notification_id FROM {} ORDER BY notification_id").format(
                _events(store)
            )
        ).fetchall()
    return [row[0] for row in rows]


def _text(text: str) -> dict[str, Any]:
    return {"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": text}]}


@contextmanager
def _held_insert(store: ConversationStore) -> Iterator[tuple[psycopg.Connection[Any], int]]:
    """A transaction that inserted an event (taking the next position) and neither commits nor rolls back yet."""
    connection = _connect(store)
    try:
        (position,) = connection.execute(
            sql.SQL(
                "INSERT INTO {} (originator_id, originator_version, topic, state) "
                "VALUES (%s, 1, 'held', '\\x00') RETURNING notification_id"
            ).format(_events(store)),
            (uuid.uuid4(),),
        ).fetchone()
        yield connection, position
    finally:
        connection.close()


def _read_all(recorder: Any, after: int) -> list[int]:
    """Positions the feed gives after ``after``, page by page until it gives none."""
    found: list[int] = []
    while page := recorder.select_notifications(after, 3, inclusive_of_start=False):
        found += [notification.id for notification in page]
        after = page[-1].id
    return found


def test_a_reader_does_not_pass_a_position_held_by_an_open_transaction(
    postgres_backend: Backend,
) -> None:
    """Lower position held open, higher ones committed: nothing is read past the hole until it commits."""
    store = postgres_backend.open()
    store.start_conversation("before")
    recorder: Any = store.log.recorder
    recorder.feed.settle_seconds = 0.2  # how long a read waits for the held writer before giving up
    start = recorder.max_notification_id()
    with _held_insert(store) as (held, position):
        store.append_message("before", _text("committed after the held one"))
        committed = [p for p in _all_positions(store) if p > position]
        assert committed, "a higher position is committed and visible"
        assert _read_all(recorder, start) == []
        assert store.log.touched_after(start, 100) == []
        assert recorder.max_notification_id() == start
        held.commit()
        assert _read_all(recorder, start) == [position, *committed]
    assert recorder.feed.waits >= 1


def test_a_reader_passes_a_rolled_back_position_once_its_transaction_ended(
    postgres_backend: Backend,
) -> None:
    """A position that will never be filled (its insert rolled back) stops the reader only while in flight."""
    store = postgres_backend.open()
    store.start_conversation("c")
    recorder: Any = store.log.recorder
    recorder.feed.settle_seconds = 0.2
    start = recorder.max_notification_id()
    with _held_insert(store) as (held, position):
        store.append_message("c", _text("after the hole"))
        assert _read_all(recorder, start) == []
        held.rollback()
        after = [p for p in _all_positions(store) if p > start]
        assert position not in after
        assert _read_all(recorder, start) == after
        assert recorder.max_notification_id() == after[-1]


@contextmanager
def _gate(store: ConversationStore, key: uuid.UUID) -> Iterator[psycopg.Connection[Any]]:
    """Inserts of conversation ``key`` stop (after taking their position) until the gate opens."""
    schema = _env(store)["POSTGRES_SCHEMA"]
    function = sql.Identifier(schema, "test_gate")
    setup = _connect(store, autocommit=True)
    setup.execute(
        sql.SQL(
            "CREATE FUNCTION {} () RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_advisory_xact_lock_shared({}); RETURN NEW; END $$"
        ).format(function, sql.Literal(GATE))
    )
    setup.execute(
        sql.SQL(
            "CREATE TRIGGER test_gate AFTER INSERT ON {} FOR EACH ROW "
            "WHEN (NEW.originator_id = {}) EXECUTE FUNCTION {} ()"
        ).format(_events(store), sql.Literal(str(key)), function)
    )
    setup.execute("SELECT pg_advisory_lock(%s)", (GATE,))
    try:
        yield setup
    finally:
        setup.execute("SELECT pg_advisory_unlock_all()")
        setup.close()


def _wait_until_blocked(store: ConversationStore, writer: threading.Thread) -> None:
    """Until a backend waits on the gate (it has taken its position); fails if the writer ended instead."""
    done = threading.Event()
    with _connect(store, autocommit=True) as watch:
        for _ in range(2000):
            (waiting,) = watch.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND objid = %s",
                (GATE & 0xFFFFFFFF,),
            ).fetchone()
            if waiting:
                return
            assert writer.is_alive(), "the gated write ended without waiting at the gate"
            done.wait(0.01)
    pytest.fail("the gated write never reached the gate")


@pytest.mark.timeout(120)
def test_projections_wait_for_a_store_write_held_between_its_insert_and_commit(
    postgres_backend: Backend,
) -> None:
    """A real write stopped after taking its position; another store commits later positions.

    The projection (conversation list) must not move past the held write;
    once it commits, every event is applied exactly once.
    """
    held_store = postgres_backend.open()
    free_store = postgres_backend.open()
    reader = postgres_backend.open()
    held_store.start_conversation("held")
    free_store.start_conversation("free")
    reader.operations.catch_up()
    recorder: Any = reader.log.recorder
    recorder.feed.settle_seconds = 0.2
    before = reader.projector.position()
    failure: list[BaseException] = []

    def write_held() -> None:
        try:
            held_store.append_message("held", _text("held between insert and commit"))
        except BaseException as error:  # reported below
            failure.append(error)

    writer = threading.Thread(target=write_held)
    with _gate(held_store, conversation_id(held_store.tenant, "held")):
        writer.start()
        _wait_until_blocked(held_store, writer)
        free_store.append_message("free", _text("committed while the other is held"))
        assert reader.operations.catch_up() == 0
        assert reader.projector.position() == before
        listed = {c.chat_id: c.message_count for c in reader.list_conversations().conversations}
        assert listed == {"held": 0, "free": 0}
    writer.join(timeout=30)
    assert not failure, failure
    total = len(_all_positions(reader))
    assert reader.operations.catch_up() == total - before
    listed = {c.chat_id: c.message_count for c in reader.list_conversations().conversations}
    assert listed == {"held": 1, "free": 1}
    assert reader.projector.position() == max(_all_positions(reader))


# -- several processes ---------------------------------------------------------------


def _write(url: str, index: int, conversations: int, barrier: Any, results: Any) -> None:
    """One writer process: conversations with streamed turns, and a rolled-back insert now and then."""
    try:
        with ConversationStore.open(url) as store:
            barrier.wait(timeout=60)
            for n in range(conversations):
                chat = f"w{index}-{n}"
                store.start_conversation(chat)
                for turn in range(2):
                    store.append_message(chat, _text(f"turn {turn}"))
                    stream = store.open_stream(chat)
                    stream.append({"type": "start"})
                    stream.append({"type": "text-start", "id": "t"})
                    for k in range(5 + (index + n + turn) % 7):
                        stream.append({"type": "text-delta", "id": "t", "delta": f"{k} "})
                    stream.append({"type": "text-end", "id": "t"})
                    stream.append({"type": "finish"})
                    stream.close(outcome="finished")
                if n % 3 == index % 3:  # a position that will never be filled
                    with _held_insert(store) as (held, _):
                        held.rollback()
        results.put((index, "ok"))
    except BaseException as error:  # reported to the test
        results.put((index, f"{type(error).__name__}: {error}"))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(2))
def test_several_writer_processes_every_event_read_once_in_order(
    postgres_backend: Backend, seed: int
) -> None:
    """4 processes write at once; a tailing reader and the projector each see every event exactly once."""
    processes_count, conversations = 4, 6 + seed * 3
    reader = postgres_backend.open()
    recorder: Any = reader.log.recorder
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(processes_count + 1)
    results = context.Queue()
    processes = [
        context.Process(
            target=_write, args=(postgres_backend.url, i, conversations, barrier, results)
        )
        for i in range(processes_count)
    ]
    for process in processes:
        process.start()
    seen: list[tuple[int, uuid.UUID, int]] = []
    applied = 0
    position = 0
    barrier.wait(timeout=60)
    while any(process.is_alive() for process in processes):
        page = recorder.select_notifications(position, 50, inclusive_of_start=False)
        seen += [(n.id, n.originator_id, n.originator_version) for n in page]
        if page:
            position = page[-1].id
        applied += reader.operations.catch_up()
    outcomes = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=30)
    assert outcomes == dict.fromkeys(range(processes_count), "ok")
    while page := recorder.select_notifications(position, 50, inclusive_of_start=False):
        seen += [(n.id, n.originator_id, n.originator_version) for n in page]
        position = page[-1].id
    applied += reader.operations.catch_up()

    committed = _all_positions(reader)
    positions = [p for p, _, _ in seen]
    assert positions == committed  # every event once, in position order
    versions: dict[uuid.UUID, list[int]] = {}
    for _, key, version in seen:
        versions.setdefault(key, []).append(version)
    assert all(v == list(range(1, len(v) + 1)) for v in versions.values())
    assert applied == len(committed)
    listed = reader.list_conversations(limit=100).conversations
    assert len(listed) == processes_count * conversations
    assert all(c.version == len(versions[c.conversation_id]) for c in listed)
    assert recorder.feed.waits >= 1  # the reader met holes (rolled back, or still in flight)
