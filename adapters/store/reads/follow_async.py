"""``follow`` for asyncio: a stream's chunks from the log, with no thread waiting per follower.

The same stream, cursors and timeout as ``follow`` (``chatledger.adapters.store.reads.follow``).
An ``AsyncFollower`` sleeps on the event loop, woken by the store's ``News``
hub (``LoopSubscription``: the hub's one thread hands the wake-up to the
loop); only its reads of the log run in a worker thread, one query at a time
and only while there is something to read. A server can so resume many
clients at the cost of a coroutine each, not an OS thread each.

It reads a page of events (at most 256) at a time and only when its
consumer asks for more: what it holds for a slow client is bounded by a page.
Its reads run on a small pool of their own (``READER_THREADS``), not the
loop's default executor: a server's writes go there, and under load a
commit waits its turn for seconds; a follower's read must not wait behind it.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from chatledger.adapters.store.reads.follow import FollowedChunk, StreamReader, stream_reader
from chatledger.adapters.store.reads.news import LoopSubscription, News
from chatledger.domain.errors import ChatLedgerError, FollowTimeoutError, InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["READER_THREADS", "RECHECK_SECONDS", "AsyncFollower", "open_follower"]

RECHECK_SECONDS = 1.0
"""The longest a follower sleeps without a wake-up before reading anyway (a safety net)."""
READER_THREADS = 4
"""Threads reading the log for every async follower of the process (created on first use)."""

T = TypeVar("T")
_readers: ThreadPoolExecutor | None = None
_readers_lock = threading.Lock()


async def _read(work: Callable[..., T], *args: object) -> T:
    """Run a read of the log on the followers' own pool."""
    global _readers
    if _readers is None:
        with _readers_lock:
            if _readers is None:
                _readers = ThreadPoolExecutor(
                    READER_THREADS, thread_name_prefix="chatledger-follow"
                )
    return await asyncio.get_running_loop().run_in_executor(_readers, work, *args)


async def open_follower(
    log: ConversationLog,
    news: News,
    tenant: str,
    chat_id: str,
    *,
    after: str | None = None,
    timeout: float | None = None,
    recheck_seconds: float = RECHECK_SECONDS,
    expire: Callable[[str], bool] | None = None,
    expire_every: float = 10.0,
) -> AsyncFollower:
    """An async follower of the conversation's stream after ``after`` (the rules of ``follow``).

    ``ConversationNotFoundError`` and ``InvalidInputError`` are raised here,
    before any iteration. ``expire(stream_id)`` closes the stream if its
    writer's lease ran out; a waiting follower calls it at once and then every
    ``expire_every`` seconds, as ``follow`` does.
    """
    if timeout is not None and timeout <= 0:
        raise InvalidInputError(f"timeout must be positive seconds, not {timeout!r}")
    if recheck_seconds <= 0:
        raise InvalidInputError(f"recheck_seconds must be positive, not {recheck_seconds!r}")
    reader = await _read(stream_reader, log, tenant, chat_id, after)
    follower = AsyncFollower(news, chat_id, reader, timeout, recheck_seconds)
    follower.expire, follower.expire_every = expire, expire_every
    return follower


class AsyncFollower(AsyncIterator[FollowedChunk]):
    """Yields the followed chunks in order until the stream closes; ``aclose`` when done early."""

    def __init__(
        self,
        news: News,
        chat_id: str,
        reader: StreamReader | None,
        timeout: float | None,
        recheck_seconds: float,
    ) -> None:
        self._news = news
        self._chat_id = chat_id
        self._reader = reader
        self._timeout = timeout
        self._recheck = recheck_seconds
        self._ready: deque[FollowedChunk] = deque()
        self._subscription: LoopSubscription | None = None
        self._news_at = time.monotonic()
        self._more = True
        self._done = reader is None
        self.expire: Callable[[str], bool] | None = None
        """Closes the stream if its writer's lease ran out (see ``open_follower``)."""
        self.expire_every = 10.0
        self._checked_at = -math.inf

    def __aiter__(self) -> AsyncFollower:
        return self

    @property
    def cursor(self) -> str | None:
        """The cursor of the last chunk read from the log (resume after it)."""
        return None if self._reader is None else self._reader.cursor

    async def __anext__(self) -> FollowedChunk:
        while not self._ready:
            if self._done or self._reader is None:
                await self.aclose()
                raise StopAsyncIteration
            await self._fill(self._reader)
        return self._ready.popleft()

    def take_ready(self) -> list[FollowedChunk]:
        """The chunks already read and not yet yielded, taken at once (no read, no wait).

        After ``__anext__`` returned a chunk, these are the rest of its page:
        a server sends them to its client in one write instead of one each.
        """
        ready = list(self._ready)
        self._ready.clear()
        return ready

    async def _fill(self, reader: StreamReader) -> None:
        """Read what is new, after waiting for news unless more is known to be there."""
        if self._subscription is None:
            # Subscribe before the first read: no event recorded after it is missed.
            subscription = LoopSubscription(reader.key, asyncio.get_running_loop())
            await _read(self._news.subscribe, reader.key, subscription)
            self._subscription = subscription
        elif not self._more and not await self._expired(reader):
            wait = self._recheck
            if self.expire is not None:
                wait = min(
                    wait, max(self._checked_at + self.expire_every - time.monotonic(), 0.001)
                )
            if self._timeout is not None:
                left = self._timeout - (time.monotonic() - self._news_at)
                if left <= 0:
                    await self.aclose()
                    raise FollowTimeoutError(
                        self._chat_id, reader.stream_id, self._timeout, reader.cursor
                    )
                wait = min(wait, left)
            await self._subscription.wait_async(wait)
        found, self._more = await _read(reader.read)
        if reader.news:  # anything but a lease renewal
            self._news_at = time.monotonic()
        self._ready.extend(found)
        self._done = reader.ended

    async def _expired(self, reader: StreamReader) -> bool:
        """Whether the stream was just closed because its writer's lease ran out (checked now and then)."""
        if self.expire is None or time.monotonic() - self._checked_at < self.expire_every:
            return False
        self._checked_at = time.monotonic()
        try:
            return await _read(self.expire, reader.stream_id)
        except ChatLedgerError:  # e.g. unreachable: check again later
            return False

    def __del__(self) -> None:  # dropped without aclose: stop the wake-ups all the same
        if self._subscription is not None:
            self._news.unsubscribe(self._subscription)

    async def aclose(self) -> None:
        """Stop following: no more wake-ups (also done when the stream ends or times out)."""
        self._done = True
        if self._subscription is not None:
            self._news.unsubscribe(self._subscription)
            self._subscription = None
