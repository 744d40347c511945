"""The chunks of one answer on their way to its client, bounded.

The responder is never held up by its client: every chunk is stored as it
comes, and what the client is to get for it waits here until the transport
(SSE, WebSocket) takes it. A client that stops reading (a stalled connection,
a tab in the background) must not make the server hold the whole answer in
memory: past ``limit`` waiting chunks the outbox drops them all and says the
client ``overflowed``; the transport then ends its response and tells the
client to resume from the log, where the whole answer is. An outbox nobody
reads (``limit=0``: a continuation run in the background) keeps nothing.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

__all__ = ["MAX_WAITING", "Outbox"]

MAX_WAITING = 4096
"""Chunks an answer's client may leave unread before it is dropped to resume-from-log."""


class Outbox:
    """The chunks waiting for one client, at most ``limit`` of them; then the end."""

    def __init__(self, limit: int = MAX_WAITING) -> None:
        self.limit = limit
        self.overflowed = False
        """Whether the client fell behind (its chunks were dropped)."""
        self.ended = False
        self._chunks: deque[Any] = deque()
        self._ready = False
        """Something can be taken (or the wait under way is woken by its alarm)."""
        self._waiter: asyncio.Future[None] | None = None
        """The wait under way (``wait``), woken by ``_wake``: a future, not an ``asyncio.Event``
        (a client waits once per chunk, and the Event's waiter list cost as much as the wait)."""
        self._quiet_at = 0.0
        """When the wait under way gives up (``loop.time()``), if nothing comes before."""
        self._alarm: asyncio.TimerHandle | None = None
        """The one timer of the waits (see ``wait``); None when none is scheduled."""
        self._alarm_at = 0.0
        self._waiting = False
        self._rang = False
        """The alarm woke the wait under way: nothing came within its timeout."""

    def put(self, chunk: Any) -> None:
        """Add one chunk for the client (dropped once it fell behind or the outbox ended)."""
        if self.ended or self.overflowed or self.limit <= 0:
            return
        if len(self._chunks) >= self.limit:
            self.overflowed = True
            self._chunks.clear()
        else:
            self._chunks.append(chunk)
        if not self._ready:
            self._wake()

    def end(self) -> None:
        """No more chunks will come."""
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        self._ready = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float) -> bool:
        """Wait until something can be taken; False after ``timeout`` seconds of nothing.

        No timer per wait: a client waits once per chunk, and a timer set and
        cancelled each time cost more than the wait itself. One alarm serves
        all the waits: set for the first, it is moved on when it rings before
        the wait under way is due (chunks came meanwhile), and wakes the wait
        only once that wait has gone ``timeout`` seconds without anything.
        """
        if self._ready:  # the common case under load
            return True
        loop = asyncio.get_running_loop()
        self._quiet_at = quiet_at = loop.time() + timeout
        if self._alarm is None or self._alarm_at > quiet_at:
            if self._alarm is not None:
                self._alarm.cancel()
            self._alarm_at = quiet_at
            self._alarm = loop.call_at(quiet_at, self._ring)
        self._waiting, self._rang = True, False
        self._waiter = waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiting = False
            self._waiter = None
        if self._rang and not self._chunks and not self.ended and not self.overflowed:
            self._ready = False  # set by the alarm only
            return False
        return True

    def _ring(self) -> None:
        """The alarm: wake the wait under way if it is due; otherwise ring again when it is."""
        self._alarm = None
        if not self._waiting:
            return  # the next wait sets it again
        loop = asyncio.get_running_loop()
        if loop.time() < self._quiet_at:
            self._alarm_at = self._quiet_at
            self._alarm = loop.call_at(self._quiet_at, self._ring)
            return
        self._rang = True
        self._wake()

    def take(self) -> list[Any]:
        """Every chunk waiting now (the transport sends them in one write)."""
        chunks = list(self._chunks)
        self._chunks.clear()
        if not self.ended and not self.overflowed:
            self._ready = False
        return chunks

    @property
    def waiting(self) -> int:
        """How many chunks wait for the client."""
        return len(self._chunks)
