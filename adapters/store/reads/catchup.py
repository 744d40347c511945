"""Shared catch-up: the async followers of one stream in a process read its log once, together.

A burst of clients resuming one answer (a page reloaded by many viewers, a
reconnect storm) would otherwise each resolve the stream, read every page of
its log and decode every batch on their own: N times the same work, which
took the reader threads and the event loop from every other request. Here
the followers of a stream on one event loop share:

* **the resolution** (which stream, from where, which redactions apply):
  followers asking the same thing at the same time wait for one read of the
  log. It is batched like a group commit, so it is never stale: a follower
  joins only a resolution that has not started yet, and one that is under
  way is followed by one more for those who asked meanwhile;
* **the reading** (``Catchup``): one task per stream reads its pages, one
  read at a time on the followers' reader pool, keeps the chunks read so far
  and wakes its followers; each follower takes them from there, at its own
  pace, from its own start. A follower that joins late is served from what
  was read already and then live. The stream's chunks are kept while the
  stream has followers in this process (what its log holds anyway).

The work each follower does on the event loop is bounded: it takes at most a
page of chunks per step and lets the loop run other requests between pages.

A follower joins a stream's ``Catchup`` only when its chunks are the ones it
would have read itself: from its start on, with the same redactions (a
redaction recorded since the catch-up began makes a new one).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from chatledger.adapters.store.reads.coalesce import Coalesced
from chatledger.adapters.store.reads.follow import stream_reader
from chatledger.adapters.store.reads.follow_pool import read_in_pool
from chatledger.adapters.store.reads.live_stream import LiveStream, LiveStreamReader
from chatledger.adapters.store.reads.news import LoopSubscription, News
from chatledger.adapters.store.reads.stream_reader import FollowedChunk, StreamReader
from chatledger.domain.errors import ChatLedgerError

if TYPE_CHECKING:
    from uuid import UUID

    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["PAGE", "Catchup", "Catchups", "catchups"]

PAGE = 256
"""The most chunks a follower takes from its catch-up in one step of the event loop."""

_Ask = tuple[str, str, "str | None"]
"""A resolution asked: tenant, chat, cursor (None: the stream open now)."""


class _Wakeup(LoopSubscription):
    """A catch-up's wake-up from the store's hub, counted as one per follower it serves."""

    fed = True  # its catch-up is fed this process's commits (``Fanout``)

    def __init__(self, catchup: Catchup, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(catchup.reader.key, loop)
        self._catchup = catchup

    @property
    def weight(self) -> int:
        return self._catchup.followers


class Catchup:
    """One stream's chunks read once for all its followers on this event loop."""

    def __init__(
        self,
        owner: Catchups,
        reader: StreamReader,
        recheck_seconds: float,
        expire: Callable[[str], bool] | None,
        expire_every: float,
    ) -> None:
        self._owner = owner
        self.reader = reader
        self.start_position = reader.start_position
        self._redactions = reader.redaction_count
        self.chunks: list[FollowedChunk] = []
        """Every chunk read so far, in stream order."""
        self.ended = False
        """The stream closed and every chunk is in ``chunks``."""
        self.error: BaseException | None = None
        """Why reading stopped, if it failed: each follower raises it once it has the chunks before."""
        self.news_at = time.monotonic()
        """When the last read found news (anything but a writer's lease renewal)."""
        self.followers = 0
        self.reads = 0
        """Reads of the log made (pages), for the curious and the tests."""
        self._recheck = recheck_seconds
        self._expire, self._expire_every = expire, expire_every
        self.loop = asyncio.get_running_loop()
        self._waiters: list[asyncio.Future[bool]] = []
        """The followers' waits for more (``changed``), woken by the next ``_publish``."""
        self._wakeup: _Wakeup | None = None
        self._reading = False
        """A read of the log is under way (in the reader pool): what is fed meanwhile waits."""
        self._backlog: list[Any] = []
        """Events fed while a read was under way, taken after it."""
        self._task = self.loop.create_task(self._read_on())

    def serves(self, reader: StreamReader) -> bool:
        """Whether a follower resolved as ``reader`` gets from here exactly what it would read itself."""
        return (
            self.error is None
            and (self.ended or not self._task.done())
            and reader.stream_id == self.reader.stream_id
            and reader.start_position >= self.start_position
            and reader.redaction_count == self._redactions == self.reader.redaction_count
        )

    async def changed(self, seconds: float | None) -> None:
        """Wait until more is read (or the reading ended), or ``seconds`` pass.

        A future of its own per wait and one timer (``asyncio.wait`` cost three times
        as much, and a follower waits once per batch its stream commits).
        """
        waiter: asyncio.Future[bool] = self.loop.create_future()
        self._waiters.append(waiter)
        timer = None if seconds is None else self.loop.call_later(seconds, _timed_out, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            if waiter.cancelled() or not waiter.result():  # not woken by ``_publish``
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)

    def leave(self) -> None:
        """A follower is done; the last one out stops the reading."""
        self.followers -= 1
        if self.followers <= 0:
            self._owner.drop(self)
            if self._wakeup is not None:
                self._wakeup.wake()  # the reading task sees nobody follows and ends

    def fed(self, events: Sequence[Any]) -> None:
        """On the loop: events of the conversation this process just committed (``Fanout``)."""
        if self.ended or self.error is not None or self.followers <= 0:
            return
        if self._reading:
            self._backlog.extend(events)
            return
        try:
            taken = self._take_fed(events)
        except Exception as error:  # as a failed read: every follower raises it
            self.error = error
            self._owner.drop(self)
            self._publish()
            if self._wakeup is not None:
                self._wakeup.wake()  # the reading task sees it and stops
            return
        if not taken and self._wakeup is not None:
            self._wakeup.wake()  # the log holds events in between: the reading task reads it

    def _take_fed(self, events: Sequence[Any]) -> bool:
        """Take fed events that follow on from what was read; False if the log must be read first."""
        found = self.reader.apply(events)
        if found is None:
            return False
        if self.reader.news:
            self.news_at = time.monotonic()
        if found or self.reader.ended:
            self.chunks.extend(found)
            self.ended = self.reader.ended
            self._publish()
            if self.ended and self._wakeup is not None:
                self._wakeup.wake()  # the reading task sees the end and stops
        return True

    def _publish(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(True)

    async def _read_on(self) -> None:
        """Read the stream's pages as they come, until it closes or nobody follows."""
        reader, news = self.reader, self._owner.news
        checked_at = -math.inf
        fanout = news.fanout
        try:
            wakeup = _Wakeup(self, asyncio.get_running_loop())
            self._reading = True  # what is fed before the first read waits for it
            fanout.add(reader.key, self)
            if not news.subscribe_at_once(reader.key, wakeup):  # the hub is not watching yet
                await read_in_pool(news.subscribe, reader.key, wakeup)  # before the first read
            self._wakeup = wakeup
            more = True
            while self.followers > 0 and not self.ended and self.error is None:
                if not more:
                    if self._expire is not None and time.monotonic() - checked_at >= (
                        self._expire_every
                    ):
                        checked_at = time.monotonic()
                        try:
                            if await read_in_pool(self._expire, reader.stream_id):
                                more = True
                                continue  # closed as interrupted: read that close
                        except ChatLedgerError:  # e.g. unreachable: check again later
                            pass
                    wait = self._recheck
                    if self._expire is not None:
                        wait = min(
                            wait, max(checked_at + self._expire_every - time.monotonic(), 0.001)
                        )
                    await wakeup.wait_async(wait)
                    if self.followers <= 0 or self.ended or self.error is not None:
                        break
                self._reading = True
                found, more = await read_in_pool(reader.read)
                self._reading = False
                self.reads += 1
                if reader.news:
                    self.news_at = time.monotonic()
                self.chunks.extend(found)
                self.ended = reader.ended
                self._publish()
                if self.ended:
                    break
                backlog, self._backlog = self._backlog, []
                if backlog and not self._take_fed(backlog):
                    more = True  # the log holds events in between
        except Exception as error:  # every follower raises it, after the chunks read before
            self.error = error
            self._owner.drop(self)
        finally:
            self._reading = False
            fanout.remove(reader.key, self)
            if self._wakeup is not None:
                news.unsubscribe(self._wakeup)
            if not self.ended:
                self._owner.drop(self)
            self._publish()


def _timed_out(waiter: asyncio.Future[bool]) -> None:
    """A wait in ``Catchup.changed`` ran out of time."""
    if not waiter.done():
        waiter.set_result(False)


class Catchups:
    """The catch-ups of one store's followers on one event loop, by stream."""

    def __init__(self, news: News) -> None:
        self.news = news
        self._streams: dict[tuple[UUID, str], Catchup] = {}
        self._resolutions: Coalesced[_Ask, StreamReader | None] = Coalesced()
        """Which stream, from where: read once for the followers who ask it together."""

    async def resolve(
        self,
        log: ConversationLog,
        tenant: str,
        chat_id: str,
        after: str | None,
        live: LiveStream | None = None,
    ) -> StreamReader | None:
        """``stream_reader(log, tenant, chat_id, after)``, read once for those who ask it together.

        ``live``: the stream open now as this process's writer of it holds it;
        with no cursor, nothing is read here: its start is found by the first
        read of its catch-up (``LiveStreamReader``).
        The reader returned may be shared: start a ``Catchup`` on its ``fresh()`` copy.
        """
        if live is not None and after is None:
            return LiveStreamReader(log, live, tenant, chat_id)
        return await self._resolutions(
            (tenant, chat_id, after),
            lambda: read_in_pool(stream_reader, log, tenant, chat_id, after),
        )

    def join(
        self,
        reader: StreamReader,
        recheck_seconds: float,
        expire: Callable[[str], bool] | None,
        expire_every: float,
    ) -> Catchup:
        """The catch-up a follower resolved as ``reader`` reads from (a new one if none serves it)."""
        key = (reader.key, reader.stream_id)
        catchup = self._streams.get(key)
        if catchup is None or not catchup.serves(reader):
            catchup = Catchup(self, reader.fresh(), recheck_seconds, expire, expire_every)
            self._streams[key] = catchup
        catchup.followers += 1
        return catchup

    def drop(self, catchup: Catchup) -> None:
        """No new follower joins ``catchup`` (its readers still get what it holds)."""
        key = (catchup.reader.key, catchup.reader.stream_id)
        if self._streams.get(key) is catchup:
            del self._streams[key]

    def streams(self) -> list[Catchup]:
        """The catch-ups followers can join now."""
        return list(self._streams.values())


_catchups: weakref.WeakKeyDictionary[
    News, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Catchups]
] = weakref.WeakKeyDictionary()


def catchups(news: News) -> Catchups:
    """The catch-ups of the store whose hub is ``news``, on the running event loop."""
    loops = _catchups.setdefault(news, weakref.WeakKeyDictionary())
    loop = asyncio.get_running_loop()
    found = loops.get(loop)
    if found is None:
        found = loops[loop] = Catchups(news)
    return found
