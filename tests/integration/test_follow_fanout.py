"""In-process fan-out: followers on this process's event loop get its commits from memory.

The log stays the truth: a follower is fed only events that follow on from
what it read, never before their commit, each once and in order; for anything
else it reads the log. The interleavings are forced (deliveries made by hand
before the queued ones, a read held open while commits are fed), not slept for.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.reads.catchup import Catchup
from chatledger.adapters.store.reads.follow import stream_reader
from chatledger.adapters.store.reads.follow_async import AsyncFollower
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.events import ChunksReceived
from tests.integration.conftest import Backend
from tests.support.builders import opened_text_stream

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _delta(i: int) -> Chunk:
    return {"type": "text-delta", "id": "t", "delta": f"w{i} "}


def _catchup(follower: AsyncFollower) -> Catchup:
    catchup = follower._catchup
    assert catchup is not None
    return catchup


def _committed(store: ConversationStore) -> list[list[Any]]:
    """Every commit's events from now on, as the log hands them to its hooks (a list per commit)."""
    commits: list[list[Any]] = []
    store._services.parts.log.on_commit.insert(0, lambda events, _: commits.append(list(events)))
    return commits


async def _take(follower: AsyncFollower, count: int) -> list[Any]:
    got: list[Any] = []
    while len(got) < count:
        got.append(await asyncio.wait_for(follower.__anext__(), 30))
        got.extend(follower.take_ready())
    return got


def _deltas(items: list[Any]) -> list[str]:
    return [item.chunk["delta"] for item in items if item.chunk["type"] == "text-delta"]


async def test_each_commit_reaches_the_follower_from_memory_once_in_order_and_committed(
    durable_backend: Backend,
) -> None:
    """Commit by commit, the follower gets every chunk once, in order, each already in the log
    (read back through a second store, as another process would), without a read per commit."""
    store = durable_backend.open()
    other = durable_backend.other_store(store)
    stream = opened_text_stream(store, "c")
    follower = await store.follow_async("c")
    assert [item.chunk["type"] for item in await _take(follower, 3)] == [
        "start",
        "start-step",
        "text-start",
    ]
    reads, started = _catchup(follower).reads, time.monotonic()
    key, log = conversation_id("default", "c"), other._services.parts.log
    got: list[Any] = []
    for i in range(30):
        stream.append(_delta(i))
        stream.flush()
        for item in await _take(follower, 1):
            version = int(item.cursor.rsplit(":", 1)[1])
            assert log.select_events(key, gt=version - 1, lte=version), "shown before committed"
            got.append(item)
    assert _deltas(got) == [f"w{i} " for i in range(30)]
    assert len({item.cursor for item in got}) == 30
    # the log is read on the safety re-check and when a hand-over finds a read under way, not once
    # per commit: quiet, none of the 30 commits is re-read; a full suite running beside this one
    # on PostgreSQL (two runs on a 2-core box) saw 9
    assert _catchup(follower).reads - reads < 15 + (time.monotonic() - started)
    stream.close()
    assert [item async for item in follower] == []


async def test_deliveries_out_of_order_or_twice_give_each_chunk_once_in_order(
    durable_backend: Backend,
) -> None:
    """A later commit handed over first (a gap: the log is read), then the queued hand-overs
    again (already taken): the follower still gets each chunk once, in order."""
    store = durable_backend.open()
    stream = opened_text_stream(store, "c")
    follower = await store.follow_async("c")
    await _take(follower, 3)
    commits = _committed(store)
    for i in range(3):  # on the loop's thread: their hand-overs wait for the loop
        stream.append(_delta(i))
        stream.flush()
    catchup = _catchup(follower)
    catchup.fed(commits[2])  # a gap: it must not be taken before the two before it
    assert catchup.chunks[-1].chunk["type"] == "text-start"
    catchup.fed(commits[0] + commits[1] + commits[2])
    catchup.fed(commits[0])  # again: already taken
    got = await _take(follower, 3)
    for i in range(3, 5):
        stream.append(_delta(i))
        stream.flush()
    got += await _take(follower, 2)
    assert _deltas(got) == [f"w{i} " for i in range(5)]
    stream.close()
    assert [item async for item in follower] == []


async def test_commits_fed_while_the_log_is_read_are_taken_after_the_read(
    durable_backend: Backend,
) -> None:
    """A read of the log under way when commits are handed over: they wait for it, and are taken
    after it in order, once, with no second read."""
    store = durable_backend.open()
    stream = opened_text_stream(store, "c")
    follower = await store.follow_async("c")
    await _take(follower, 3)
    catchup = _catchup(follower)
    real_read, entered, go = catchup.reader.read, threading.Event(), threading.Event()

    def held_read() -> tuple[list[Any], bool]:
        found = real_read()  # the read is done; its result comes back only once released
        entered.set()
        assert go.wait(30)
        return found

    catchup.reader.read = held_read  # type: ignore[method-assign]
    reads = catchup.reads
    assert catchup._wakeup is not None
    catchup._wakeup.wake()  # as the safety re-check would
    assert await asyncio.to_thread(entered.wait, 30)
    for i in range(3):
        stream.append(_delta(i))
        stream.flush()
    await asyncio.sleep(0)  # let the hand-overs run: they must wait for the read
    assert catchup.chunks[-1].chunk["type"] == "text-start"
    catchup.reader.read = real_read  # type: ignore[method-assign]
    go.set()
    got = await _take(follower, 3)
    assert _deltas(got) == ["w0 ", "w1 ", "w2 "]
    assert catchup.reads == reads + 1
    stream.close()
    assert [item async for item in follower] == []


def test_a_reader_takes_committed_events_only_where_they_follow_on(
    durable_backend: Backend,
) -> None:
    """``StreamReader.apply``: events after a gap are refused (nothing taken), events read
    already are left out, and a read of the log afterwards finds nothing twice."""
    store = durable_backend.open()
    stream = opened_text_stream(store, "c")
    reader = stream_reader(store._services.parts.log, "default", "c", None)
    assert reader is not None
    assert [item.chunk["type"] for item in reader.read()[0]] == [
        "start",
        "start-step",
        "text-start",
    ]
    commits = _committed(store)
    for i in range(3):
        stream.append(_delta(i))
        stream.flush()
    assert all(isinstance(commit[0], ChunksReceived) for commit in commits)
    version, cursor = reader.version, reader.cursor
    assert reader.apply(commits[1]) is None  # a gap: nothing taken
    assert (reader.version, reader.cursor) == (version, cursor)
    assert _deltas(reader.apply(commits[0] + commits[1]) or []) == ["w0 ", "w1 "]
    assert reader.apply(commits[0]) == []  # taken already
    assert _deltas(reader.read()[0]) == ["w2 "]  # the log gives only what was not taken
    assert reader.apply(commits[2]) == []
    stream.close()
    assert reader.read() == ([], False)
    assert reader.ended
