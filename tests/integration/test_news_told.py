"""The ``News`` hub learns this process's own events from the recorder, and reads the log only
for the others (another store on the same database, as another process would write).

The hub's thread is held before each pass (``_HubGate``) while the test commits, then let
through exactly once: what one pass reads and wakes is then fixed, not raced. Reads are
counted on the hub's thread: eventsourcing's ``select_notifications`` (what the hub read
before) and the hub's own lean reads (``Touched.reads``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent

from chatledger import ConversationStore
from chatledger.adapters.store.reads.news import News
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend
from tests.support.builders import opened_text_stream

pytestmark = pytest.mark.anyio

HUB = "chatledger-news"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _delta(stream: Any, i: int) -> None:
    stream.append({"type": "text-delta", "id": "t", "delta": f"w{i} "})
    stream.flush()


def _news(store: ConversationStore) -> News:
    return store._services.news


class _HubReads:
    """Reads of the log made on the hub's thread (wrapping the recorder's feed read)."""

    def __init__(self, store: ConversationStore) -> None:
        self._news = _news(store)
        self._recorder: Any = store._services.parts.log.recorder
        self._selects = 0
        real = self._recorder.select_notifications

        def counted(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread().name == HUB:
                self._selects += 1
            return real(*args, **kwargs)

        self._recorder.select_notifications = counted

    @property
    def count(self) -> int:
        reading = getattr(self._news, "reading", None)
        return self._selects + (getattr(reading, "reads", 0) if reading is not None else 0)


class _HubGate:
    """Holds the hub's thread before each pass until ``one_pass`` lets it through once."""

    def __init__(self, news: News) -> None:
        self.arrived = threading.Event()
        self._release = threading.Event()
        self._finished = threading.Event()
        self._open = False
        self._real = news._wake_followers
        news._wake_followers = self._pass  # type: ignore[method-assign]
        assert self.arrived.wait(30), "the hub never came to a pass"

    def _pass(self, *args: Any) -> Any:
        if not self._open:
            self.arrived.set()
            assert self._release.wait(60)
            self._release.clear()
        try:
            return self._real(*args)
        finally:
            self._finished.set()

    def one_pass(self) -> None:
        """Let the held hub make one pass over what is committed now; return when it is done."""
        assert self.arrived.wait(30)
        self.arrived.clear()
        self._finished.clear()
        self._release.set()
        assert self._finished.wait(30), "the pass did not end"

    def open(self) -> None:
        """Let the hub run freely again."""
        self._open = True
        self._release.set()


def _woken(subscription: Any) -> bool:
    """Whether a wake-up is pending (taken: the next check needs a new one)."""
    return bool(subscription.wait(0))


async def test_this_process_commits_wake_followers_without_a_read_of_the_log(
    durable_backend: Backend,
) -> None:
    """Commits of this process, to a conversation fed in memory and to one that is not: one
    pass of the hub wakes the threaded followers of both (a fed follower is not woken, it has
    them already) and reads nothing from the log; the fed follower gets every chunk."""
    store = durable_backend.open()
    fed, unfed = opened_text_stream(store, "c"), opened_text_stream(store, "d")
    follower = await store.follow_async("c")
    for _ in range(3):
        await asyncio.wait_for(follower.__anext__(), 30)
    news = _news(store)
    key_c, key_d = conversation_id("default", "c"), conversation_id("default", "d")
    sub_c = await asyncio.to_thread(news.subscribe, key_c)
    sub_d = await asyncio.to_thread(news.subscribe, key_d)
    reads = _HubReads(store)
    gate = await asyncio.to_thread(_HubGate, news)
    try:
        _woken(sub_c)  # wake-ups from before the gate: taken
        _woken(sub_d)
        for round_ in range(3):
            for i in range(4):
                _delta(fed, round_ * 4 + i)
                _delta(unfed, round_ * 4 + i)
            await asyncio.to_thread(gate.one_pass)
            assert _woken(sub_c) and _woken(sub_d), round_
            assert reads.count == 0, f"the hub read the log for its own commits ({round_})"
        got: list[Any] = []
        while len(got) < 12:
            got.append(await asyncio.wait_for(follower.__anext__(), 30))
        assert [item.chunk["delta"] for item in got] == [f"w{i} " for i in range(12)]
        assert news.fanout._told == {}, "what the hub passed is forgotten"
    finally:
        gate.open()
        news.unsubscribe(sub_c)
        news.unsubscribe(sub_d)
    fed.close()
    unfed.close()
    assert [item async for item in follower] == []


def test_another_process_commit_between_this_process_commits_is_read_once(
    durable_backend: Backend,
) -> None:
    """A commit through another store on the same database, between two of this process: the
    one pass after them wakes the followers of both conversations, with one read of the log
    (for the position it was not told); later passes over this process's commits read nothing."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    mine, theirs = opened_text_stream(store, "a"), opened_text_stream(other, "b")
    news = _news(store)
    sub_a = news.subscribe(conversation_id("default", "a"))
    sub_b = news.subscribe(conversation_id("default", "b"))
    reads = _HubReads(store)
    gate = _HubGate(news)
    try:
        gate.one_pass()  # anything committed before the gate is passed
        _woken(sub_a)  # wake-ups from before: taken
        _woken(sub_b)
        before = reads.count
        _delta(mine, 0)
        _delta(theirs, 0)
        _delta(mine, 1)
        gate.one_pass()
        assert _woken(sub_b), "not woken for the other process's commit"
        assert _woken(sub_a)
        assert reads.count == before + 1
        for i in range(2, 5):
            _delta(mine, i)
        gate.one_pass()
        assert _woken(sub_a) and not _woken(sub_b)
        assert reads.count == before + 1, "read again for positions already passed"
    finally:
        gate.open()
        news.unsubscribe(sub_a)
        news.unsubscribe(sub_b)
    mine.close()
    theirs.close()


def test_a_position_never_filled_is_read_once_then_passed(postgres_backend: Backend) -> None:
    """PostgreSQL: a position taken from the sequence and never used (as a rolled-back insert
    leaves it) is read once, found final, and passed: the next commits cost no read."""
    store = postgres_backend.open()
    stream = opened_text_stream(store, "a")
    news = _news(store)
    sub = news.subscribe(conversation_id("default", "a"))
    reads = _HubReads(store)
    gate = _HubGate(news)
    recorder: Any = store._services.parts.log.recorder
    table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
    try:
        gate.one_pass()
        before = reads.count
        with recorder.datastore.get_connection() as conn:
            conn.execute("SELECT nextval(pg_get_serial_sequence(%s, 'notification_id'))", (table,))
        _delta(stream, 0)
        gate.one_pass()
        assert _woken(sub)
        assert reads.count == before + 1
        for i in range(1, 4):
            _delta(stream, i)
            gate.one_pass()
            assert _woken(sub)
        assert reads.count == before + 1, "the unused position is read at every pass"
    finally:
        gate.open()
        news.unsubscribe(sub)
    stream.close()


def test_nothing_is_kept_for_the_hub_while_nobody_follows(durable_backend: Backend) -> None:
    """Commits while no follower is subscribed (before the first, after the last) leave
    nothing behind for the hub; while it watches, what it passed is forgotten."""
    store = durable_backend.open()
    stream = opened_text_stream(store, "a")
    news = _news(store)
    fanout = news.fanout
    _delta(stream, 0)
    assert fanout._told == {}
    sub = news.subscribe(conversation_id("default", "a"))
    gate = _HubGate(news)
    _delta(stream, 1)
    assert len(fanout._told) >= 1, "this process's commit was not told to the hub"
    gate.one_pass()
    assert fanout._told == {}
    thread = news._thread
    assert thread is not None
    news.unsubscribe(sub)
    gate.open()
    thread.join(timeout=30)
    assert not thread.is_alive()
    for i in range(2, 6):
        _delta(stream, i)
    assert fanout._told == {}
    stream.close()


def test_a_commit_seen_before_it_is_told_is_neither_read_nor_passed(
    sqlite_store: ConversationStore,
) -> None:
    """SQLite: the hub's connection sees this process's commit before the recorder has told
    it (the hub makes its pass inside the ``on_inserted`` hooks): it does not read the log for
    it, nor wake or pass it; the pass after the hooks wakes the follower, still without a read."""
    store = sqlite_store
    stream = opened_text_stream(store, "a")
    news = _news(store)
    sub = news.subscribe(conversation_id("default", "a"))
    reads = _HubReads(store)
    gate = _HubGate(news)
    recorder: Any = store._services.parts.log.recorder
    passes: list[bool] = []

    def pass_before_told(events: Any, positions: Any) -> None:
        gate.one_pass()  # committed: visible to the hub's connection, not told yet
        passes.append(_woken(sub))

    try:
        gate.one_pass()
        _woken(sub)
        recorder.on_inserted.insert(0, pass_before_told)
        try:
            _delta(stream, 0)
        finally:
            recorder.on_inserted.remove(pass_before_told)
        assert passes == [False], "woken before the commit was told"
        assert reads.count == 0, "the hub read the log for this process's commit"
        gate.one_pass()
        assert _woken(sub)
        assert reads.count == 0
    finally:
        gate.open()
        news.unsubscribe(sub)
    stream.close()


def test_positions_of_a_failed_commit_do_not_hold_the_hub(durable_backend: Backend) -> None:
    """A transaction that fails after its inserts (its positions already given to the hub on
    SQLite, then dropped): another process's event at such a position is still read, and wakes
    its follower, at the next pass."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    stream, theirs = opened_text_stream(store, "a"), opened_text_stream(other, "b")
    news = _news(store)
    sub_b = news.subscribe(conversation_id("default", "b"))
    reads = _HubReads(store)
    gate = _HubGate(news)
    recorder: Any = store._services.parts.log.recorder
    key = conversation_id("default", "a")
    last = recorder.select_events(key)[-1]

    def boom(cursor: Any) -> None:
        raise RuntimeError("failed after the inserts")

    try:
        gate.one_pass()
        _woken(sub_b)
        before = reads.count
        with pytest.raises(RuntimeError):
            recorder.insert_events(
                [
                    StoredEvent(
                        originator_id=key,
                        originator_version=last.originator_version + 1,
                        topic=last.topic,
                        state=last.state,
                    )
                ],
                also=boom,
            )
        _delta(theirs, 0)  # SQLite: at the position the failed transaction had
        gate.one_pass()
        assert _woken(sub_b), "the other process's event was not read"
        assert reads.count == before + 1
    finally:
        gate.open()
        news.unsubscribe(sub_b)
    stream.close()
    theirs.close()
