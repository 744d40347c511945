"""The responder ``bench/live_load.py`` serves: a text answer paced at a fixed rate, like a model.

``chatledger serve --responder live_responder:responder`` (with ``bench/`` on
``PYTHONPATH``). Each answer is ``start``, ``start-step``, ``text-start``,
then ``LIVE_CHUNKS`` text deltas (default 500) at ``LIVE_RATE`` per second
(default 50), then ``text-end``, ``finish-step``, ``finish``. The deltas keep
to a fixed schedule from the answer's start (a late one does not push the
rest back), so the offered rate holds however busy the server is. Each
delta's text is the wall-clock time the responder yielded it, so a client can
tell how long it took to reach it through the store.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["PacedResponder", "responder"]


class PacedResponder:
    """Yields ``chunks`` text deltas at ``rate`` per second, each stamped with the time it was yielded."""

    actor = "agent:paced"

    def __init__(self, chunks: int, rate: float) -> None:
        self.chunks = chunks
        self.period = 1.0 / rate

    async def respond(self, request: Any) -> AsyncIterator[dict[str, Any]]:
        """The answer: every delta at its scheduled time (no drift), stamped with ``time.time()``."""
        yield {"type": "start"}
        yield {"type": "start-step"}
        yield {"type": "text-start", "id": "t"}
        begun = time.monotonic()
        for i in range(self.chunks):
            wait = begun + i * self.period - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            yield {"type": "text-delta", "id": "t", "delta": f"{time.time():.6f} "}
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish-step"}
        yield {"type": "finish", "finishReason": "stop"}


responder = PacedResponder(
    int(os.environ.get("LIVE_CHUNKS", "500")), float(os.environ.get("LIVE_RATE", "50"))
)
