"""Stream leases on real stores: a dead writer's stream ends, a live one never does, and it ends once.

Another process's view of time is forced with the store's injectable clock
(``store.clock``): a store whose clock is an hour ahead sees every lease of
a writer in this process as run out, without waiting an hour. Interleavings
are forced with events and barriers; the one test that lets real time pass
(a live writer renewing) waits for the renewals it needs with a deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.adapters.store.turns.continuations import ContinuationRunner
from chatledger.domain.errors import (
    FollowTimeoutError,
    NoOpenStreamError,
    StreamAlreadyOpenError,
)
from chatledger.projections.read_models import ContinuationRequest
from tests.integration.conftest import Backend
from tests.support.builders import delta, user


def _half_written(store: ConversationStore, chat: str = "c") -> tuple[StreamWriter, str]:
    """A conversation with an answer half written (committed) by a writer of ``store``."""
    store.start_conversation(chat)
    store.append_message(chat, user("u1"))
    writer = store.open_stream(chat, actor="agent:bot")
    for chunk in (
        {"type": "start"},
        {"type": "text-start", "id": "t"},
        delta("half"),
    ):
        writer.append(chunk)
    writer.flush()
    return writer, writer.stream_id


def _an_hour_ahead() -> datetime:
    return datetime.now(UTC) + timedelta(hours=1)


def _closes(store: ConversationStore, chat: str = "c") -> list[object]:
    return store.history(chat, kinds=["stream-closed"])


def test_a_new_turn_closes_a_stream_whose_lease_expired(backend: Backend) -> None:
    writing = backend.open()
    writer, stream_id = _half_written(writing)
    other = backend.other_store(writing)
    with pytest.raises(StreamAlreadyOpenError):  # the writer is alive: its lease holds
        other.open_stream("c", actor="agent:bot")
    other.clock = _an_hour_ahead
    other.append_message("c", user("u2", "are you there?"), actor="user:bob")
    with other.open_stream("c", actor="agent:bot") as answer:
        answer.append({"type": "start"})
    [closed, _] = _closes(other)
    assert closed.details["streamId"] == stream_id
    assert closed.details["outcome"] == "interrupted"
    assert closed.actor == other.process  # who closed it: the process that noticed
    assert "lease expired: its writer agent:bot wrote nothing" in closed.summary
    assert "noticed by a message by user:bob" in closed.details["reason"]
    messages = other.messages("c")
    assert [m["id"] for m in messages][:2] == ["u1", messages[1]["id"]]
    assert messages[1]["parts"][0]["text"] == "half"  # what was committed stays
    assert messages[2]["id"] == "u2"  # a user message, not a steering message queued on it
    with pytest.raises(NoOpenStreamError):  # the old writer learns at its next commit
        writer.append({"type": "text-end", "id": "t"})
        writer.flush()


def test_a_follower_ends_when_the_writers_lease_expires(backend: Backend) -> None:
    writing = backend.open(stream_lease_seconds=600.0)  # no renewal during the test
    _, stream_id = _half_written(writing)
    other = backend.other_store(writing, stream_lease_seconds=1.0)
    other.clock = _an_hour_ahead
    # Without leases this follower would wait for more until its timeout, and raise.
    chunks = [item.chunk for item in other.follow("c", timeout=5)]
    assert [chunk["type"] for chunk in chunks] == ["start", "text-start", "text-delta"]
    [closed] = _closes(other)
    assert closed.details["streamId"] == stream_id
    assert "noticed by a follower" in closed.details["reason"]
    assert other.status("c").status == "idle"
    assert other.status("c").last_outcome == "interrupted"


@pytest.mark.anyio
async def test_the_servers_sweep_closes_expired_streams(backend: Backend) -> None:
    writing = backend.open()
    _half_written(writing, "c")
    _half_written(writing, "d")
    other = backend.other_store(writing)

    async def run(claimed: ContinuationRequest) -> None:
        raise AssertionError("nothing to continue")

    runner = ContinuationRunner(other, run, worker="http:sweeper:1")
    assert await runner.sweep_once() == 0
    assert writing.status("c").status == "streaming"  # live writers: nothing closed
    other.clock = _an_hour_ahead
    assert await runner.sweep_once() == 0
    for chat in ("c", "d"):
        [closed] = _closes(other, chat)
        assert closed.actor == "http:sweeper:1"
        assert "noticed by the sweep" in closed.details["reason"]
        assert other.status(chat).status == "idle"


@pytest.mark.parametrize("closers", [2])
def test_two_processes_noticing_at_once_close_the_stream_once(
    durable_backend: Backend, closers: int
) -> None:
    writing = durable_backend.open()
    _half_written(writing)
    stores = [durable_backend.open() for _ in range(closers)]
    both_decided = threading.Barrier(closers, timeout=30)

    def clock_after_barrier() -> Callable[[], datetime]:
        first = [True]

        def now() -> datetime:
            if first[0]:  # both have loaded the open stream and are deciding on it
                first[0] = False
                both_decided.wait()
            return _an_hour_ahead()

        return now

    results: list[bool] = []
    errors: list[BaseException] = []

    def close(store: ConversationStore) -> None:
        store.clock = clock_after_barrier()
        try:
            results.append(store.streams.expire_stream("c", noticed_by="a racer"))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=close, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(results) == [False] * (closers - 1) + [True]
    assert len(_closes(writing)) == 1


def test_a_commit_that_lands_while_a_closer_decides_keeps_the_stream(
    durable_backend: Backend,
) -> None:
    """The closer judged the lease expired, but the writer committed (renewed) before the
    closer's append: the version check makes it decide again, and the stream stays open."""
    writing = durable_backend.open(stream_lease_seconds=60.0)
    writer, _ = _half_written(writing)
    renewed_at = writing.conversation("c").state.stream.renewed_at  # type: ignore[union-attr]
    decided, go = threading.Event(), threading.Event()
    closer = durable_backend.open()

    def now() -> datetime:
        if not decided.is_set():
            decided.set()
            assert go.wait(30)
        return renewed_at + timedelta(seconds=60, microseconds=1)  # the first lease just ran out

    closer.clock = now
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(closer.streams.expire_stream("c")))
    thread.start()
    assert decided.wait(30)
    writer.append(delta(" and more"))
    writer.flush()  # a commit renews the lease
    go.set()
    thread.join(timeout=60)
    assert result == [False]
    assert _closes(writing) == []
    writer.close("finished")
    assert writing.status("c").last_outcome == "finished"


def test_a_slow_writer_that_is_alive_renews_and_keeps_its_stream(durable_backend: Backend) -> None:
    """No chunk for several leases: the writer's process renews, so nobody may close it."""
    lease = 3.0
    writing = durable_backend.open(stream_lease_seconds=lease)
    writer, stream_id = _half_written(writing)
    other = durable_backend.open(stream_lease_seconds=lease)
    start = writing.version("c")
    deadline = time.monotonic() + 30
    renewals = 0
    while renewals < 3:  # three renewals: more than a whole lease without a chunk
        assert time.monotonic() < deadline, "the idle writer did not renew its lease"
        time.sleep(0.02)
        renewals = len(other.history("c", kinds=["stream-renewed"]))
        if renewals:
            # Right after a renewal every process sees the lease as held.
            assert not other.streams.expire_stream("c")
    assert writing.version("c") - start == renewals  # renewals are the only writes
    with pytest.raises(StreamAlreadyOpenError):
        other.open_stream("c")
    writer.append({"type": "text-end", "id": "t"})
    writer.close("finished")
    [closed] = _closes(other)
    assert (closed.details["streamId"], closed.details["outcome"]) == (stream_id, "finished")


def test_a_writer_that_commits_records_no_renewal(store: ConversationStore) -> None:
    writer, _ = _half_written(store)
    assert not writer.renew_if_idle()  # it just committed
    writer.close("finished")
    assert store.history("c", kinds=["stream-renewed"]) == []


def test_renewals_do_not_hold_back_a_followers_keep_alive(durable_backend: Backend) -> None:
    """A follower's ``timeout`` (the HTTP resume's keep-alive) counts renewals as nothing new."""
    writing = durable_backend.open(stream_lease_seconds=0.9)  # renews every 0.3 s
    writer, _ = _half_written(writing)
    other = durable_backend.open()
    outcome: list[BaseException | None] = []

    def follow() -> None:
        try:
            for _ in other.follow("c", timeout=1.5):
                pass
            outcome.append(None)
        except BaseException as error:  # the expected FollowTimeoutError, checked below
            outcome.append(error)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "renewals kept the follower from ever timing out"
    assert isinstance(outcome[0], FollowTimeoutError)
    assert other.history("c", kinds=["stream-renewed"])  # renewals came meanwhile
    writer.close("finished")
