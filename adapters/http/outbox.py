"""The SSE events of one answer on their way to its client, bounded.

The responder is never held up by its client: every chunk is stored as it
comes, and its event waits here until the client takes it. A client that
stops reading (a stalled connection, a tab in the background) must not make
the server hold the whole answer in memory: past ``limit`` waiting events the
outbox drops them all and the response ends with an ``error`` chunk telling
the client to resume from the log (``GET /api/chat/{id}/stream``), where the
whole answer is. An outbox nobody reads (``limit=0``: a continuation run in
the background) keeps nothing.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["FELL_BEHIND", "MAX_WAITING_EVENTS", "Outbox"]

MAX_WAITING_EVENTS = 4096
"""Events an answer's client may leave unread before it is dropped to resume-from-log."""

FELL_BEHIND = (
    "the client fell behind the answer; it goes on in the log: resume it with "
    "GET /api/chat/{id}/stream"
)
"""The ``errorText`` ending the response of a client that fell behind."""


class Outbox:
    """The events waiting for one client, at most ``limit`` of them; then the end."""

    def __init__(self, limit: int = MAX_WAITING_EVENTS) -> None:
        self.limit = limit
        self.overflowed = False
        """Whether the client fell behind (its events were dropped)."""
        self.ended = False
        self._events: deque[str] = deque()
        self._ready = asyncio.Event()

    def put(self, event: str) -> None:
        """Add one event for the client (dropped once it fell behind or the outbox ended)."""
        if self.ended or self.overflowed or self.limit <= 0:
            return
        if len(self._events) >= self.limit:
            self.overflowed = True
            self._events.clear()
        else:
            self._events.append(event)
        self._ready.set()

    def end(self) -> None:
        """No more events will come."""
        self.ended = True
        self._ready.set()

    async def wait(self, timeout: float) -> bool:
        """Wait until something can be taken; False after ``timeout`` seconds of nothing."""
        if self._ready.is_set():  # the common case under load: no timer
            return True
        try:
            async with asyncio.timeout(timeout):  # no task per wait, as wait_for makes on 3.11
                await self._ready.wait()
        except TimeoutError:
            return False
        return True

    def take(self) -> list[str]:
        """Every event waiting now (the client sends them in one write)."""
        events = list(self._events)
        self._events.clear()
        if not self.ended and not self.overflowed:
            self._ready.clear()
        return events

    @property
    def waiting(self) -> int:
        """How many events wait for the client."""
        return len(self._events)
