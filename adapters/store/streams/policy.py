"""When a stream's buffered chunks are committed: ``BatchPolicy``, its defaults and ``AT_ONCE``."""

from __future__ import annotations

from chatledger.domain.errors import StoreConfigurationError

__all__ = [
    "AT_ONCE",
    "COMMIT_BUDGET",
    "DEFAULT_BATCH_CHUNKS",
    "DEFAULT_BATCH_MS",
    "DEFAULT_SETTLE",
    "BatchPolicy",
]

DEFAULT_BATCH_MS = 50
"""Milliseconds within which an appended chunk is committed (durable): the crash window, the
most a ``kill -9`` may lose. The batch's commit starts earlier (``COMMIT_BUDGET``), so that it
has ended by then: at the default, a batch is committed when its oldest chunk is 35 ms old."""

COMMIT_BUDGET = 0.3
"""Share of ``max_delay`` left for the commit itself: a batch's commit starts when its oldest
chunk is ``max_delay * (1 - COMMIT_BUDGET)`` old (``BatchPolicy.commit_age``), so the commit
(a few ms), a late wake of the flusher's thread and a wait for the interpreter lock fit in the
rest (15 ms at the default) before the chunk is ``max_delay`` old."""

DEFAULT_BATCH_CHUNKS = 1024
"""Most chunks one batch holds. A cap on memory and event size, not the usual commit trigger:
batches are committed on age (``DEFAULT_BATCH_MS``), so a model streaming at any realistic
rate commits about every 50 ms, and a reply written faster than that (an import, a replay, a
fast model) is one commit instead of one per 64 chunks. The crash window is ``DEFAULT_BATCH_MS``
either way."""

DEFAULT_SETTLE = 0.005
"""Seconds a batch ended by a boundary chunk waits for the close or the next chunk."""

AT_ONCE = frozenset({"tool-input-available", "tool-approval-request", "steering-message"})
"""Boundary chunks that ask someone outside to act (run a client-side tool, answer an approval)
or that others read at once (an AI SDK 7 steering message taken off the queue): committed at
once, since the answer may reach another process before the writer's next call."""


class BatchPolicy:
    """When buffered chunks are committed: by age, by count (a cap), and after boundary chunks.

    ``max_delay`` bounds how long an appended chunk stays uncommitted (the
    crash window): a batch's commit starts when its oldest chunk is
    ``commit_age`` old (``max_delay`` less the ``COMMIT_BUDGET`` share: 35 of
    50 ms by default), so that it has ended before the chunk is ``max_delay``
    old; the store's flusher wakes at that moment. A batch is also committed
    when it holds ``max_chunks`` (by default 1,024: a cap, rarely reached, so
    a fast reply is one commit rather than one per few dozen chunks).

    A chunk that asks someone outside to act (``AT_ONCE``: tool input
    available, an approval request) is committed at once, with everything
    before it. Any other boundary chunk (tool output, finish-step, finish,
    error, abort) ends its batch: the batch is committed before the writer
    takes the next plain chunk, in the same transaction as the close if the
    stream closes next, by the timer ``settle`` seconds after the boundary if
    nothing follows, and before anything else in this process decides on or
    reads the conversation. A reply's end (finish-step, finish, close) is so
    one transaction instead of three; at most ``settle`` (<= ``max_delay``)
    of chunks is at risk meanwhile. ``settle=0`` commits at once after every
    boundary.
    """

    def __init__(
        self,
        max_chunks: int = DEFAULT_BATCH_CHUNKS,
        max_delay: float = DEFAULT_BATCH_MS / 1000,
        settle: float | None = None,
    ) -> None:
        if max_chunks < 1 or max_delay < 0:
            raise StoreConfigurationError(
                f"batching needs batch_chunks >= 1 and batch_ms >= 0, not {max_chunks!r} and "
                f"{max_delay * 1000!r} ms"
            )
        if settle is None:
            settle = min(DEFAULT_SETTLE, max_delay)
        if not 0 <= settle <= max_delay:
            raise StoreConfigurationError(
                f"batching needs 0 <= settle <= max_delay ({max_delay} s), not settle={settle}"
            )
        self.max_chunks = max_chunks
        self.max_delay = max_delay
        self.commit_age = max_delay * (1 - COMMIT_BUDGET)
        """Seconds after its oldest chunk's append a batch's commit starts (see ``COMMIT_BUDGET``)."""
        self.overdue_age = max_delay * (1 - COMMIT_BUDGET / 2)
        """Seconds after which ``append`` commits the batch itself: the flusher is late by half
        the budget (busy, or its thread not scheduled), the commit still fits before ``max_delay``."""
        self.settle = settle
