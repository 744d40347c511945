"""What this process has committed, counted for ``/metrics``: commits, their latency, chunks stored.

One ``METER`` per process (as Prometheus clients keep one registry): every
store of the process commits through a ``UnitOfWork``, which reports each
commit here with its duration and the events it saved. Counters only grow;
rates (chunks per second, commits per second) are the scraper's to compute.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from chatledger.domain.events import ChunksReceived

__all__ = ["COMMIT_BUCKETS", "METER", "Meter", "MeterReading"]

COMMIT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Upper bounds (seconds) of the commit-latency histogram's buckets (``+Inf`` is implied)."""


@dataclass(frozen=True)
class MeterReading:
    """The counters at one moment."""

    commits: int
    """Transactions that saved events."""
    commit_seconds: float
    """Their total duration."""
    commit_buckets: tuple[int, ...]
    """Commits that took at most each of ``COMMIT_BUCKETS`` (cumulative, as Prometheus wants)."""
    chunks: int
    """UI message chunks stored (replayed and refused ones too: they are recorded)."""


class Meter:
    """Counts commits (with their latency) and the chunks they stored; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commits = 0
        self._seconds = 0.0
        self._buckets = [0] * len(COMMIT_BUCKETS)
        self._chunks = 0

    def committed(self, seconds: float, events: Iterable[Any]) -> None:
        """One transaction saved ``events`` in ``seconds``."""
        chunks = sum(len(e.chunks) for e in events if isinstance(e, ChunksReceived))
        with self._lock:
            self._commits += 1
            self._seconds += seconds
            self._chunks += chunks
            for index, bound in enumerate(COMMIT_BUCKETS):
                if seconds <= bound:
                    self._buckets[index] += 1

    def read(self) -> MeterReading:
        """The counters now."""
        with self._lock:
            return MeterReading(self._commits, self._seconds, tuple(self._buckets), self._chunks)


METER = Meter()
"""This process's meter."""
