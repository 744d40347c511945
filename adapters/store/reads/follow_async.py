"""``follow`` for asyncio: a stream's chunks from the log, with no thread waiting per follower.

The same stream, cursors and timeout as ``follow`` (``chatledger.adapters.store.reads.follow``).
An ``AsyncFollower`` sleeps on the event loop; only reads of the log run in a
worker thread (``follow_pool``), one query at a time and only while there is
something to read. A server can so resume many clients at the cost of a
coroutine each, not an OS thread each.

The followers of one stream on one event loop read its log once, together
(``chatledger.adapters.store.reads.catchup``): one resolution for those who
start together, one read per page for all, one wake-up from the store's
``News`` hub. Each follower takes at most a page of chunks (256) per step and
lets the loop serve other requests between pages, so a burst of followers
does not hold up the rest of the server.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from chatledger.adapters.store.reads.catchup import PAGE, Catchup, catchups
from chatledger.adapters.store.reads.follow import FollowedChunk
from chatledger.adapters.store.reads.follow_pool import READER_THREADS
from chatledger.adapters.store.reads.live_stream import LiveStream
from chatledger.adapters.store.reads.news import News
from chatledger.domain.errors import FollowTimeoutError, InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["READER_THREADS", "RECHECK_SECONDS", "AsyncFollower", "open_follower"]

RECHECK_SECONDS = 1.0
"""The longest a stream's catch-up sleeps without a wake-up before reading anyway (a safety net)."""


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
    live: LiveStream | None = None,
) -> AsyncFollower:
    """An async follower of the conversation's stream after ``after`` (the rules of ``follow``).

    ``ConversationNotFoundError`` and ``InvalidInputError`` are raised here,
    before any iteration. ``expire(stream_id)`` closes the stream if its
    writer's lease ran out; while the stream is quiet it is called at once
    and then every ``expire_every`` seconds, as ``follow`` does. ``live``: the stream as
    this process's writer of it holds it (``Catchups.resolve``).
    """
    if timeout is not None and timeout <= 0:
        raise InvalidInputError(f"timeout must be positive seconds, not {timeout!r}")
    if recheck_seconds <= 0:
        raise InvalidInputError(f"recheck_seconds must be positive, not {recheck_seconds!r}")
    shared = catchups(news)
    if live is not None and expire is not None:
        expire = _unless_written(live, expire)
    reader = await shared.resolve(log, tenant, chat_id, after, live)
    if reader is None:
        return AsyncFollower(chat_id, None, None, timeout)
    catchup = shared.join(reader, recheck_seconds, expire, expire_every)
    return AsyncFollower(chat_id, catchup, reader.cursor, timeout, reader.start_position)


def _unless_written(live: LiveStream, expire: Callable[[str], bool]) -> Callable[[str], bool]:
    """``expire``, but not while this process's writer of the stream is open: it keeps the
    stream's lease renewed, so asking (a load of the conversation) would find nothing to do."""

    def unless_written(stream_id: str) -> bool:
        return False if live.writer.writing(stream_id) else expire(stream_id)

    return unless_written


class AsyncFollower(AsyncIterator[FollowedChunk]):
    """Yields the followed chunks in order until the stream closes; ``aclose`` when done early."""

    def __init__(
        self,
        chat_id: str,
        catchup: Catchup | None,
        cursor: str | None,
        timeout: float | None,
        after_position: int = -1,
    ) -> None:
        self._chat_id = chat_id
        self._catchup = catchup
        self._cursor = cursor
        self._timeout = timeout
        self._after = after_position
        self._index = 0
        """The next of the catch-up's chunks to take."""
        self._ready: deque[FollowedChunk] = deque()
        self._joined_at = time.monotonic()
        self._woken = False
        """This step of the loop began with a wake-up from the catch-up (a page may be taken)."""

    def __aiter__(self) -> AsyncFollower:
        return self

    @property
    def cursor(self) -> str | None:
        """The cursor of the last chunk read from the log (resume after it)."""
        return self._cursor

    async def __anext__(self) -> FollowedChunk:
        while not self._ready:
            catchup = self._catchup
            if catchup is None:
                raise StopAsyncIteration
            await self._fill(catchup)
        return self._ready.popleft()

    def take_ready(self) -> list[FollowedChunk]:
        """The chunks already read and not yet yielded, taken at once (no read, no wait).

        After ``__anext__`` returned a chunk, these are the rest of its page:
        a server sends them to its client in one write instead of one each.
        """
        ready = list(self._ready)
        self._ready.clear()
        return ready

    async def _fill(self, catchup: Catchup) -> None:
        """Take the next page of what the catch-up read; wait for more when there is none yet."""
        chunks = catchup.chunks
        if self._index < len(chunks):
            if self._woken:  # this step began with the wake-up: its one page is this one
                self._woken = False
            else:
                await asyncio.sleep(0)  # one page per step of the loop: others get their turn
            chunks = catchup.chunks
            end = min(len(chunks), self._index + PAGE)
            page = [item for item in chunks[self._index : end] if item.position > self._after]
            self._index = end
            if page:
                self._ready.extend(page)
                self._cursor = page[-1].cursor
            return
        if catchup.error is not None:
            await self.aclose()
            raise catchup.error
        if catchup.ended:
            await self.aclose()
            return
        wait: float | None = None
        if self._timeout is not None:
            news_at = max(self._joined_at, catchup.news_at)
            wait = self._timeout - (time.monotonic() - news_at)
            if wait <= 0:
                stream_id = catchup.reader.stream_id
                await self.aclose()
                raise FollowTimeoutError(self._chat_id, stream_id, self._timeout, self._cursor)
        await catchup.changed(wait)
        self._woken = True

    def __del__(self) -> None:  # dropped without aclose: leave the catch-up all the same
        if self._catchup is not None:
            self._catchup.leave()
            self._catchup = None

    async def aclose(self) -> None:
        """Stop following (also done when the stream ends or times out)."""
        if self._catchup is not None:
            self._catchup.leave()
            self._catchup = None
