"""A burst of async followers of one stream reads its log once, not once per follower.

Fifty clients resuming one open answer at the same moment must cost the
log (and the event loop) what one does: otherwise catching them up starves
every other request of the server. The interleaving is forced: the first
read of the stream's pages is held until every follower has started and
more chunks have arrived.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.reads import FollowedChunk
from tests.integration.conftest import Backend

pytestmark = pytest.mark.anyio

Chunk = dict[str, Any]
EARLY = 300
"""Chunks in the log before the burst, one event each: more than a page of events (256)."""
LATE = 20
"""Chunks that arrive while the followers are catching up."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _CountedLog:
    """Counts the store's reads and decodes of the log; holds the first page read until released."""

    def __init__(self, store: ConversationStore, monkeypatch: pytest.MonkeyPatch) -> None:
        log = store.log
        self.calls: Counter[str] = Counter()
        self.held = threading.Event()
        self.release = threading.Event()
        select, decode = log.select_events, log.decode

        def select_events(*args: Any, **options: Any) -> Any:
            self.calls["select_events"] += 1
            if options.get("gt") is not None and not self.held.is_set():  # a page of the stream
                self.held.set()
                assert self.release.wait(60), "the test never released the first page read"
            return select(*args, **options)

        def counted_decode(stored: Any) -> Any:
            self.calls["decode"] += 1
            return decode(stored)

        monkeypatch.setattr(log, "select_events", select_events)
        monkeypatch.setattr(log, "decode", counted_decode)


def _new_chat(store: ConversationStore, chat: str) -> None:
    store.start_conversation(chat)
    store.append_message(
        chat, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    )


def _delta(i: int) -> Chunk:
    return {"type": "text-delta", "id": "t", "delta": f"w{i} "}


async def _until(condition: Any) -> None:
    """Wait (on the loop) until ``condition()``: at most 60 s."""
    async with asyncio.timeout(60):
        while not condition():
            await asyncio.sleep(0.005)


async def _burst(
    writer: ConversationStore,
    store: ConversationStore,
    chat: str,
    followers: int,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Counter[str], list[list[FollowedChunk]]]:
    """``followers`` resume (on ``store``) the open stream of ``chat`` at once, while more chunks arrive.

    The chunks are written by ``writer``, as by another process: a follower
    has no writes of its own to commit first. Returns the reads and decodes
    of the log the followers made, and what each got.
    """
    _new_chat(writer, chat)
    stream = writer.open_stream(chat)
    for chunk in [{"type": "start"}, {"type": "text-start", "id": "t"}]:
        stream.append(chunk)
    for i in range(EARLY):
        stream.append(_delta(i))
        stream.flush()  # an event each
    with monkeypatch.context() as patched:
        counted = _CountedLog(store, patched)

        async def follow() -> list[FollowedChunk]:
            follower = await store.follow_async(chat)
            return [item async for item in follower]

        tasks = [asyncio.create_task(follow()) for _ in range(followers)]
        await asyncio.to_thread(counted.held.wait, 60)  # the first page read is held
        # Every follower has started (and is waiting to be woken) before anything is read.
        await _until(lambda: store._services.news.followers == followers)
        for i in range(EARLY, EARLY + LATE):  # more arrive during the catch-up
            await asyncio.to_thread(stream.append, _delta(i))
        await asyncio.to_thread(stream.append, {"type": "text-end", "id": "t"})
        await asyncio.to_thread(stream.close)
        counted.release.set()
        got = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        calls = counted.calls
    return calls, got


async def test_a_burst_of_followers_reads_the_log_as_one_follower_does(
    durable_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty followers resuming one stream at once read and decode its log as often as one does.

    And each still gets exactly the stored chunks in order, those that
    arrived during the burst too, with the cursors a lone follower gets.
    """
    writer, store = durable_backend.open(), durable_backend.open()
    alone, [lone] = await _burst(writer, store, "alone", 1, monkeypatch)
    burst, got = await _burst(writer, store, "burst", 50, monkeypatch)

    assert burst == alone, f"50 followers: {dict(burst)}; one follower: {dict(alone)}"
    stored = list(store.follow("burst"))
    chunks = [item.chunk for item in stored]
    assert len(chunks) == 2 + EARLY + LATE + 1
    assert chunks[2 + EARLY + LATE - 1] == _delta(EARLY + LATE - 1)
    assert all(each == stored for each in got)
    assert [item.chunk for item in lone] == chunks
    assert store._services.news.followers == 0  # every follower left


async def test_a_follower_joining_late_gets_the_stream_from_its_start_then_live(
    durable_backend: Backend,
) -> None:
    """A follower that joins a stream others are following gets it all, from the start or a cursor."""
    store = durable_backend.open()
    _new_chat(store, "c")
    stream = store.open_stream("c")
    for chunk in [{"type": "start"}, {"type": "text-start", "id": "t"}, _delta(0)]:
        stream.append(chunk)
    stream.flush()
    first = await store.follow_async("c")
    early = [await first.__anext__(), *first.take_ready()]
    assert len(early) == 3
    late = await store.follow_async("c")  # joins while the first is waiting for more
    after = await store.follow_async("c", after=early[0].cursor)
    stream.append(_delta(1))
    stream.close()
    rest = [item async for item in first]
    whole = [*early, *rest]
    assert [item async for item in late] == whole
    assert [item async for item in after] == whole[1:]
    assert whole == list(store.follow("c"))
    assert store._services.news.followers == 0
