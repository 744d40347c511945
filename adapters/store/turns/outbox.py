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
        self._ready = asyncio.Event()

    def put(self, chunk: Any) -> None:
        """Add one chunk for the client (dropped once it fell behind or the outbox ended)."""
        if self.ended or self.overflowed or self.limit <= 0:
            return
        if len(self._chunks) >= self.limit:
            self.overflowed = True
            self._chunks.clear()
        else:
            self._chunks.append(chunk)
        self._ready.set()

    def end(self) -> None:
        """No more chunks will come."""
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

    def take(self) -> list[Any]:
        """Every chunk waiting now (the transport sends them in one write)."""
        chunks = list(self._chunks)
        self._chunks.clear()
        if not self.ended and not self.overflowed:
            self._ready.clear()
        return chunks

    @property
    def waiting(self) -> int:
        """How many chunks wait for the client."""
        return len(self._chunks)
