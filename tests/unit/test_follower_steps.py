"""An async follower's steps on the event loop: a page per step, the first in the step of its wake-up.

A follower woken by its catch-up takes its page in that very step (a second
step only to take it would cost a loop iteration per batch the stream
commits); a follower with more than a page waiting still takes one page per
step, so a burst of followers lets the rest of the server run between pages.
And a catch-up's wait that runs out or is cancelled leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.store.reads.catchup import PAGE
from chatledger.adapters.store.reads.follow import FollowedChunk
from chatledger.adapters.store.reads.follow_async import AsyncFollower
from tests.support.builders import opened_text_stream

pytestmark = pytest.mark.timeout(60)


class _Feed:
    """What an ``AsyncFollower`` reads of its catch-up, fed by the test."""

    def __init__(self) -> None:
        self.chunks: list[FollowedChunk] = []
        self.error: BaseException | None = None
        self.ended = False
        self.news_at = time.monotonic()
        self._waiters: list[asyncio.Future[None]] = []

    async def changed(self, seconds: float | None) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def publish(self, count: int) -> None:
        start = len(self.chunks)
        self.chunks.extend(
            FollowedChunk(f"s:1:{i}", {"type": "text-delta", "id": "t", "delta": str(i)}, "s", i)
            for i in range(start, start + count)
        )
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.set_result(None)

    def leave(self) -> None:
        pass


def _follower(feed: _Feed) -> AsyncFollower:
    return AsyncFollower("chat", feed, None, None)  # type: ignore[arg-type]


def test_a_woken_follower_takes_its_page_in_the_step_of_the_wake_up() -> None:
    async def run() -> None:
        feed = _Feed()
        follower = _follower(feed)
        first = asyncio.ensure_future(follower.__anext__())
        await asyncio.sleep(0)  # the follower waits for news
        assert not first.done()
        feed.publish(3)
        await asyncio.sleep(0)  # one step: the follower's wake-up
        assert first.done()
        assert first.result().position == 0
        assert [item.position for item in follower.take_ready()] == [1, 2]

    asyncio.run(run())


def test_a_follower_with_pages_waiting_takes_one_page_per_step() -> None:
    async def run() -> None:
        feed = _Feed()
        follower = _follower(feed)
        pages: list[int] = []

        async def take() -> None:
            async for _ in follower:
                pages.append(1 + len(follower.take_ready()))

        taking = asyncio.ensure_future(take())
        await asyncio.sleep(0)
        feed.publish(2 * PAGE + 1)
        await asyncio.sleep(0)  # the wake-up's step: one page
        assert pages == [PAGE]
        await asyncio.sleep(0)
        assert pages == [PAGE, PAGE]
        await asyncio.sleep(0)
        assert pages == [PAGE, PAGE, 1]
        taking.cancel()

    asyncio.run(run())


def test_a_wait_of_the_catch_up_that_runs_out_or_is_cancelled_leaves_nothing_behind() -> None:
    store = ConversationStore.open("memory://")
    try:
        opened_text_stream(store, "c")

        async def run() -> None:
            follower = await store.follow_async("c")
            catchup: Any = follower._catchup
            assert catchup is not None
            while catchup.reads == 0:  # the first read of the log, done in a worker thread
                await catchup.changed(None)
            for _ in range(3):
                await catchup.changed(0.001)  # nothing comes: each wait runs out
            assert catchup._waiters == []
            waiting = asyncio.ensure_future(catchup.changed(None))
            await asyncio.sleep(0)
            assert len(catchup._waiters) == 1
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
            assert catchup._waiters == []
            await follower.aclose()

        asyncio.run(run())
    finally:
        store.close()
