"""Group commit: one tick of the flusher records the due batches of all open streams in one transaction.

The store's policy here never fires on its own (batches wait 600 s), so the
only commits of chunks are the ones a tick (``Flusher.commit_due`` at a
moment when every batch is due) makes. Transactions are counted at the
recorder: each ``insert_events`` call is one transaction (the real call
runs; it is only counted), and on PostgreSQL also by the ``xmin`` (the
inserting transaction) of the rows themselves.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import pytest
from psycopg import sql

from chatledger import ConversationStore
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import DEFAULT_BATCH_CHUNKS, BatchPolicy
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.domain.snapshot_cadence import SNAPSHOT_EVERY
from tests.integration.conftest import Backend
from tests.support.ledger import aggregate_id, snapshot_versions
from tests.support.transactions import recorded_inserts

STREAMS = 4
LATER = 3600.0
"""Seconds ahead of now a tick is run at: every batch (and lease) is due then."""


def _open(backend: Backend) -> ConversationStore:
    """A store whose batches are committed by nobody but an explicit tick (or the close)."""
    store = open_store(backend.url, StoreOptions(batch=BatchPolicy(DEFAULT_BATCH_CHUNKS, 600.0)))
    backend.stores.append(store)
    return store


def _user(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def _delta(text: str) -> dict[str, Any]:
    return {"type": "text-delta", "id": "t", "delta": text}


def _start(store: ConversationStore, chats: list[str]) -> list[StreamWriter]:
    writers = []
    for chat in chats:
        store.start_conversation(chat)
        writer = store.open_stream(chat, user_message=_user(f"u-{chat}"))
        for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
            writer.append(chunk)
        writers.append(writer)
    return writers


def _tick(store: ConversationStore) -> None:
    """One tick of the store's flusher, at a moment when every batch is due."""
    store._services.flusher.commit_due(time.monotonic() + LATER)


@contextmanager
def transactions(store: ConversationStore) -> Iterator[list[set[UUID]]]:
    """The conversations of each transaction that inserts events (one ``insert_events`` call each)."""
    with recorded_inserts(store, lambda events: {event.originator_id for event in events}) as calls:
        yield calls


def _postgres_xmins(store: ConversationStore, after: int) -> set[str]:
    """The PostgreSQL transactions that inserted the events after position ``after``."""
    recorder: Any = store.log.events.recorder
    table = sql.Identifier(recorder.datastore.schema, recorder.events_table_name)
    with recorder.datastore.get_connection() as conn, conn.cursor() as curs:
        curs.execute(
            sql.SQL("SELECT DISTINCT xmin::text AS x FROM {} WHERE notification_id > %s").format(
                table
            ),
            (after,),
        )
        return {row["x"] for row in curs.fetchall()}


def _text(store: ConversationStore, chat: str) -> str:
    message = store.conversation(chat).state.messages[-1]
    return "".join(part.get("text", "") for part in message["parts"] if part["type"] == "text")


def test_one_tick_commits_the_batches_of_several_streams_in_one_transaction(
    backend: Backend,
) -> None:
    """Every tick is one transaction holding every stream's batch, also the tick where the
    batches are due a snapshot (on a database the snapshots join the transaction)."""
    store = _open(backend)
    chats = [f"c{i}" for i in range(STREAMS)]
    writers = _start(store, chats)
    versions = {chat: store.version(chat) for chat in chats}
    head = store.operations.head()
    rounds = SNAPSHOT_EVERY + 2  # the versions pass a multiple of SNAPSHOT_EVERY
    for round_ in range(rounds):
        for i, writer in enumerate(writers):
            for j in range(3):
                writer.append(_delta(f"{i}.{round_}.{j} "))
        snapshot_due = (versions[chats[0]] + round_ + 1) % SNAPSHOT_EVERY == 0
        with transactions(store) as calls:
            _tick(store)
        if snapshot_due and not backend.durable:
            assert len(calls) == STREAMS  # in memory, a batch due a snapshot commits alone
        else:
            assert calls == [{aggregate_id(store, chat) for chat in chats}]  # one, holding all
        if backend.name == "postgres":
            assert len(_postgres_xmins(store, head)) == 1
            head = store.operations.head()
    for chat in chats:  # one event per conversation per tick, in order
        assert store.version(chat) == versions[chat] + rounds
        snapshot = (versions[chat] + rounds) // SNAPSHOT_EVERY * SNAPSHOT_EVERY
        assert snapshot_versions(store, chat) == [snapshot]
    for writer in writers:
        writer.close()
    for i, chat in enumerate(chats):
        expected = "".join(f"{i}.{r}.{j} " for r in range(rounds) for j in range(3))
        assert _text(store, chat) == expected  # each chunk exactly once, in order
    assert store.operations.verify().ok  # hash chains, snapshots and read models agree


def test_a_group_with_a_conversation_written_meanwhile_commits_every_members_chunks_once(
    backend: Backend,
) -> None:
    """Another store writes one member's conversation after the writer loaded it: the group's
    transaction clashes, every member commits on its own, and the next tick is a group again."""
    store = _open(backend)
    other = backend.other_store(store)
    chats = [f"c{i}" for i in range(STREAMS)]
    writers = _start(store, chats)
    for i, writer in enumerate(writers):
        writer.append(_delta(f"{i}.a "))
    other.set_title("c1", "written elsewhere")  # c1's writer is one version behind now
    with transactions(store) as calls:
        _tick(store)
    everyone = {aggregate_id(store, chat) for chat in chats}
    assert calls[0] == everyone  # the group was tried first (and clashed on c1)
    assert sorted(calls[1:], key=lambda c: sorted(c)) == sorted(
        ({key} for key in everyone), key=lambda c: sorted(c)
    )  # then each member once, on its own
    for i, writer in enumerate(writers):
        writer.append(_delta(f"{i}.b "))
    with transactions(store) as calls:
        _tick(store)
    assert calls == [everyone]  # the clash cost one retry, not the group
    for writer in writers:
        writer.close()
    for i, chat in enumerate(chats):
        assert _text(store, chat) == f"{i}.a {i}.b "
    assert store.conversation("c1").state.title == "written elsewhere"
    assert store.operations.verify().ok


@pytest.mark.anyio
async def test_followers_and_the_projector_see_every_event_of_a_group(backend: Backend) -> None:
    store = _open(backend)
    reader = backend.other_store(store)
    chats = [f"c{i}" for i in range(STREAMS)]
    writers = _start(store, chats)
    got: dict[str, list[str]] = {}

    def deltas(items: list[Any]) -> list[str]:
        return [item.chunk["delta"] for item in items if item.chunk["type"] == "text-delta"]

    def follow(chat: str) -> None:  # a follower from the stream's start: it cannot miss the open
        got[chat] = deltas(list(reader.follow(chat, timeout=60)))

    threads = [threading.Thread(target=follow, args=(chat,)) for chat in chats[1:]]
    for thread in threads:
        thread.start()
    follower = await reader.follow_async(chats[0], timeout=60)
    ticks: list[list[set[UUID]]] = []
    for round_ in range(4):
        for i, writer in enumerate(writers):
            writer.append(_delta(f"{i}.{round_} "))
        with transactions(store) as calls:
            await asyncio.to_thread(_tick, store)
        ticks.append(calls)
    for writer in writers:
        writer.close()
    got[chats[0]] = deltas([item async for item in follower])
    for thread in threads:
        thread.join(timeout=60)
    everyone = {aggregate_id(store, chat) for chat in chats}
    assert ticks == [[everyone]] * 4  # each tick one transaction holding every stream's batch
    for i, chat in enumerate(chats):
        expected = [f"{i}.{r} " for r in range(4)]
        assert got[chat] == expected  # each follower: every chunk once, in order
        assert "".join(expected) in str(reader.messages(chat)[-1])  # the projector too


@contextmanager
def held_transaction(store: ConversationStore) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Hold the store's next event insert at its start: (entered, release)."""
    recorder: Any = store.log.events.recorder
    real = recorder.insert_events
    entered, release = threading.Event(), threading.Event()

    def insert_events(stored_events: Any, **kwargs: Any) -> Any:
        if not entered.is_set():
            entered.set()
            assert release.wait(timeout=60)
        return real(stored_events, **kwargs)

    recorder.insert_events = insert_events
    try:
        yield entered, release
    finally:
        release.set()
        del recorder.insert_events


def test_appends_go_on_during_a_group_commit_and_a_write_meanwhile_loses_no_chunk(
    backend: Backend,
) -> None:
    """While the group's transaction is held, every member takes chunks without waiting for it,
    and another store writes one member's conversation (a durable backend: the group then
    clashes and each member commits alone); every chunk is stored once, in order."""
    store = _open(backend)
    other = backend.other_store(store)
    chats = [f"c{i}" for i in range(STREAMS)]
    writers = _start(store, chats)
    for i, writer in enumerate(writers):
        writer.append(_delta(f"{i}.a "))
    with held_transaction(store) as (entered, release):
        tick = threading.Thread(target=_tick, args=(store,))
        tick.start()
        assert entered.wait(timeout=30)  # the group is in its transaction, held there
        elsewhere = threading.Thread(target=other.set_title, args=("c1", "written elsewhere"))
        elsewhere.start()
        if backend.durable:
            elsewhere.join(timeout=30)  # committed while the group waits
            assert not elsewhere.is_alive()

        def more() -> None:
            for i, writer in enumerate(writers):
                writer.append(_delta(f"{i}.b "))

        appending = threading.Thread(target=more)
        appending.start()
        appending.join(timeout=30)
        appended_during_the_commit = not appending.is_alive()
        release.set()
        tick.join(timeout=60)
        appending.join(timeout=60)
        elsewhere.join(timeout=60)
    assert appended_during_the_commit  # no append waited for the group's transaction
    for writer in writers:
        writer.close()
    for i, chat in enumerate(chats):
        assert _text(store, chat) == f"{i}.a {i}.b "
    assert store.conversation("c1").state.title == "written elsewhere"
    assert store.operations.verify().ok


def test_a_pending_open_commits_alone_and_its_later_batches_join_the_group(
    backend: Backend,
) -> None:
    """A stream opened with ``commit=False`` whose open is due at a tick: the open is
    committed alone, by the writer's own path (where a lost open is handled), and the
    batches after it join the other streams' transaction."""
    store = _open(backend)
    chats = [f"c{i}" for i in range(STREAMS)]
    writers = _start(store, chats[1:])  # opened with the default: stored at once
    store.start_conversation(chats[0])
    pending = store.open_stream(chats[0], user_message=_user("u-c0"), commit=False)
    for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
        pending.append(chunk)
    writers.insert(0, pending)
    ids = [aggregate_id(store, chat) for chat in chats]
    with transactions(store) as calls:
        _tick(store)
    # The open alone, then the group, which its buffered batch (due too) joins.
    assert calls == [{ids[0]}, set(ids)]
    for round_ in range(3):
        for i, writer in enumerate(writers):
            writer.append(_delta(f"{i}.{round_} "))
        with transactions(store) as calls:
            _tick(store)
        assert calls == [set(ids)]  # one, holding all, the once-pending stream too
    for writer in writers:
        writer.close()
    for i, chat in enumerate(chats):
        assert _text(store, chat) == "".join(f"{i}.{r} " for r in range(3))
        assert [m["role"] for m in store.messages(chat)] == ["user", "assistant"]
    assert store.operations.verify().ok
