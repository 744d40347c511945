"""A stream opened with ``commit=False`` has its open committed with its first batch: a fast
turn is one transaction.

``open_stream(..., commit=False)`` decides the open (and the user message given
with it) at once and leaves it pending in the writer: the stream's first commit carries it, the
flusher commits it alone after the settle time, and anything else in the
process that reads or decides on the conversation commits it first. Another
store (another process) that opens a stream on the same conversation meanwhile
is found at commit: exactly one stream is recorded, and the other writer ends
with ``StreamOpenLostError``. The default (``commit=True``) stores the open
before ``open_stream`` returns.

Interleavings are forced by the order of the calls and by a barrier (the
batch timers are set far off, so nothing commits under a test's feet).
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from chatledger import (
    ConversationStore,
    NoOpenStreamError,
    StreamAlreadyOpenError,
    StreamOpenLostError,
)
from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.services import StoreParts
from chatledger.adapters.store.store import open_store, store_over
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.domain.aggregate import conversation_id
from tests.integration.conftest import Backend
from tests.integration.test_commit_cadence import _reply, _user, counting_commits
from tests.support.ledger import stored_chunk_count, stored_events

UNTIMED = BatchPolicy(1000, 600.0, settle=600.0)
"""Timers that never fire in a test: what commits is what the calls cause."""


def _open(backend: Backend, policy: BatchPolicy = UNTIMED) -> ConversationStore:
    """A store with its own batch policy (memory://: a new, separate store)."""
    store = open_store(backend.url, StoreOptions(batch=policy))
    backend.stores.append(store)
    return store


def _twin(backend: Backend, store: ConversationStore) -> ConversationStore:
    """A second store on the same database, with its own cache, flusher and writers (another
    process, as far as the store can tell; on memory:// the same log)."""
    if backend.durable:
        return _open(backend, store.batch)
    parts = StoreParts(store.config, store.log, store.read_models, store.projector)
    twin = store_over(parts, StoreOptions(batch=store.batch))
    backend.stores.insert(0, twin)  # closed before the store whose log it shares
    return twin


def _opened(store: ConversationStore, chat: str) -> list[str]:
    """The ids of the streams the log holds an open of."""
    return [e.stream_id for e in stored_events(store, chat) if type(e).__name__ == "StreamOpened"]


def _transactions(store: ConversationStore, chat: str, after_version: int) -> int:
    """PostgreSQL: how many transactions wrote the conversation's events after a version (the
    inserting transaction of each row, its ``xmin``)."""
    recorder: Any = store.log.recorder
    parts = urlsplit(store.config.display)
    with psycopg.connect(urlunsplit(parts._replace(query=""))) as db:
        row = db.execute(
            sql.SQL(
                "SELECT count(DISTINCT xmin::text) FROM {} "
                "WHERE originator_id = %s AND originator_version > %s"
            ).format(sql.Identifier(recorder.datastore.schema, recorder.events_table_name)),
            (conversation_id(store.tenant, chat), after_version),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_fast_turn_is_one_transaction(backend: Backend) -> None:
    """User message, open, every chunk and the close: one commit (PostgreSQL: one writing
    transaction, counted by the server), where it was two (the open with its message, then
    the rest). The timers are off: a loaded machine pausing the test for 5 ms between two
    chunks would otherwise commit the open alone, which is the timer's job."""
    store = _open(backend)
    store.start_conversation("chat")
    version = store.version("chat")
    chunks = _reply(150)
    with counting_commits(store) as commits:
        stream = store.open_stream("chat", user_message=_user("u1"), commit=False)
        for chunk in chunks:
            stream.append(chunk)
        stream.close()
    assert commits[0] == 1
    if backend.name == "postgres":
        assert _transactions(store, "chat", version) == 1
    assert stored_chunk_count(store, "chat") == len(chunks)
    assert [m["role"] for m in store.messages("chat")] == ["user", "assistant"]


def test_a_pending_open_is_committed_before_this_process_reads_or_decides(
    backend: Backend,
) -> None:
    """Until its first commit the open is in this process only; a read here (status, the
    aggregate, a follower) or a decision (a message sent mid-answer) commits it first, so each
    sees the stream, as if it had been committed at once."""
    store = _open(backend)
    store.start_conversation("chat")
    stream = store.open_stream("chat", user_message=_user("u1"), commit=False)
    assert _opened(store, "chat") == []  # pending: nothing stored yet
    assert store.status("chat").status == "streaming"
    assert _opened(store, "chat") == [stream.stream_id]

    stream.close()
    second = store.open_stream("chat", user_message=_user("u2"), commit=False)
    store.append_message("chat", _user("u3"))  # v7: mid-answer, queued for the open stream
    assert _opened(store, "chat") == [stream.stream_id, second.stream_id]
    assert [m["id"] for m in store.steering("chat")] == ["u3"]
    second.append({"type": "start"})
    second.close()
    assert [m["id"] for m in store.messages("chat") if m["role"] == "user"] == ["u1", "u2", "u3"]


def test_a_follower_in_this_process_sees_a_stream_whose_open_is_pending(
    backend: Backend,
) -> None:
    """``follow`` right after ``open_stream`` follows the new stream, not the one before."""
    store = _open(backend)
    store.start_conversation("chat")
    with store.open_stream("chat", user_message=_user("u1"), commit=False) as first:
        first.append({"type": "start"})
    stream = store.open_stream("chat", user_message=_user("u2"), commit=False)
    assert _opened(store, "chat") == [first.stream_id]
    follower = store.follow("chat", timeout=30)
    chunks = _reply(5)
    for chunk in chunks:
        stream.append(chunk)
    stream.close()
    assert [item.chunk for item in follower] == chunks


def test_a_pending_open_is_committed_by_the_timer_after_the_settle_time(
    backend: Backend,
) -> None:
    """A model slow to start (nothing appended): the open is committed alone once the settle
    time has passed, not before, and not only when the first chunk comes."""
    store = _open(backend, BatchPolicy(1000, 1.0, settle=0.3))
    reader = _twin(backend, store) if backend.durable else store
    store.start_conversation("chat")
    began = time.monotonic()
    stream = store.open_stream("chat", user_message=_user("u1"), commit=False)
    if time.monotonic() - began < 0.2:  # a test paused that long by a loaded machine proves nothing
        assert _opened(reader, "chat") == []
    while not _opened(reader, "chat") and time.monotonic() - began < 10:
        time.sleep(0.01)
    assert _opened(reader, "chat") == [stream.stream_id]
    assert time.monotonic() - began >= 0.3
    stream.append({"type": "start"})
    stream.close()
    assert stored_chunk_count(reader, "chat") == 1


def _turn(store: ConversationStore, chat: str, user_id: str, barrier: threading.Barrier) -> Any:
    """Open a stream (with a user message), wait until the other side opened too, then write a
    reply and close. Returns the stream id, or the error its writer ended with."""
    stream = store.open_stream(chat, user_message=_user(user_id), commit=False)
    barrier.wait(timeout=30)  # both opens decided, neither committed
    try:
        for chunk in _reply(20):
            stream.append(chunk)
        stream.close()
    except NoOpenStreamError as error:
        return error
    return stream.stream_id


@pytest.mark.parametrize("attempt", range(3))
def test_two_stores_opening_one_conversation_at_once_record_one_stream(
    backend: Backend, attempt: int
) -> None:
    """Two stores (processes) each open a stream on the conversation before either commits
    (a barrier holds both between the open and the reply): one reply is recorded whole, the
    other writer ends with StreamOpenLostError naming the winner, nothing of it stored, and the
    log verifies."""
    first = _open(backend)
    second = _twin(backend, first)
    first.start_conversation("chat")
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def run(name: str, store: ConversationStore, user_id: str) -> None:
        results[name] = _turn(store, "chat", user_id, barrier)

    threads = [
        threading.Thread(target=run, args=("first", first, "u1")),
        threading.Thread(target=run, args=("second", second, "u2")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    won = [name for name, result in results.items() if isinstance(result, str)]
    lost = [result for result in results.values() if isinstance(result, NoOpenStreamError)]
    assert len(won) == 1 and len(lost) == 1, results
    assert isinstance(lost[0], StreamOpenLostError)
    winner = results[won[0]]
    assert lost[0].other_stream_id == winner
    reader = _twin(backend, first)
    assert _opened(reader, "chat") == [winner]
    assert stored_chunk_count(reader, "chat") == len(_reply(20))
    users = [m["id"] for m in reader.messages("chat") if m["role"] == "user"]
    assert users == (["u1"] if won == ["first"] else ["u2"])
    assert reader.status("chat").status == "idle"
    assert reader.operations.verify().ok


def test_an_open_lost_found_by_a_read_ends_the_writer_at_its_next_call(backend: Backend) -> None:
    """The loser's open is committed by a read in its own process (not by the writer): the
    read sees the winner's stream, and the writer's next call raises StreamOpenLostError."""
    first = _open(backend)
    second = _twin(backend, first)
    first.start_conversation("chat")
    losing = first.open_stream("chat", user_message=_user("u1"), commit=False)
    with second.open_stream("chat", user_message=_user("u2"), commit=False) as winning:
        winning.append({"type": "start"})
        winning.flush()  # the other store commits first
        status = first.status("chat")  # commits the pending open, which loses
        assert (status.status, status.stream_id) == ("streaming", winning.stream_id)
        with pytest.raises(StreamOpenLostError) as lost:
            losing.append({"type": "start"})
        assert lost.value.other_stream_id == winning.stream_id
    losing.close()  # told already: closing does nothing, as after a stop from elsewhere
    assert _opened(first, "chat") == [winning.stream_id]


def test_an_open_stands_when_only_bookkeeping_came_between(backend: Backend) -> None:
    """Another store sets the title while this open is pending: the messages the answer was
    begun on are unchanged, so the open is decided again on the stored state and commits."""
    first = _open(backend)
    second = _twin(backend, first)
    first.start_conversation("chat")
    stream = first.open_stream("chat", user_message=_user("u1"), commit=False)
    assert _opened(first, "chat") == []  # pending
    second.set_title("chat", "named elsewhere")
    for chunk in _reply(5):
        stream.append(chunk)
    stream.close()
    kinds = [type(e).__name__ for e in stored_events(first, "chat")]
    assert kinds[1:4] == ["TitleSet", "MessageAppended", "StreamOpened"]  # decided again after
    assert _opened(first, "chat") == [stream.stream_id]
    assert [m["role"] for m in first.messages("chat")] == ["user", "assistant"]
    assert stored_chunk_count(first, "chat") == len(_reply(5))
    assert first.operations.verify().ok


def test_an_open_is_lost_when_a_message_came_between(backend: Backend) -> None:
    """Another store appends a user message while this open is pending: the answer was begun
    without it, so the open is lost (not recorded after it); the message stays, and the next
    turn answers it."""
    first = _open(backend)
    second = _twin(backend, first)
    first.start_conversation("chat")
    stream = first.open_stream("chat", user_message=_user("u1"), commit=False)
    second.append_message("chat", _user("u2"))
    stream.append({"type": "start"})
    with pytest.raises(StreamOpenLostError) as lost:
        stream.close()
    assert lost.value.other_stream_id is None
    assert _opened(first, "chat") == []
    assert [m["id"] for m in first.messages("chat")] == ["u2"]
    with first.open_stream("chat") as answer:
        answer.append({"type": "start"})
    assert [m["role"] for m in first.messages("chat")] == ["user", "assistant"]


def test_by_default_the_open_is_recorded_before_open_stream_returns(backend: Backend) -> None:
    """``open_stream()`` (``commit=True``, the default): the open is stored when the call
    returns (another process may act on the stream at once), at the cost of its own commit."""
    store = _open(backend)
    store.start_conversation("chat")
    for user_id, commit in (("u1", {}), ("u2", {"commit": True})):
        with counting_commits(store) as commits:
            stream = store.open_stream("chat", user_message=_user(user_id), **commit)
            assert _opened(store, "chat")[-1] == stream.stream_id
            stream.append({"type": "start"})
            stream.close()
        assert commits[0] == 2


def test_by_default_a_racing_open_is_refused_at_once(backend: Backend) -> None:
    """With the default open, a second store opening a stream on the conversation is refused
    in ``open_stream`` itself (StreamAlreadyOpenError), not later from its writer."""
    first = _open(backend)
    second = _twin(backend, first)
    first.start_conversation("chat")
    with first.open_stream("chat", user_message=_user("u1")) as stream:
        with pytest.raises(StreamAlreadyOpenError):
            second.open_stream("chat", user_message=_user("u2"))
        stream.append({"type": "start"})
    assert _opened(first, "chat") == [stream.stream_id]
    assert [m["id"] for m in first.messages("chat") if m["role"] == "user"] == ["u1"]
