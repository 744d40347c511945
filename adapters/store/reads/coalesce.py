"""Reads asked together, run once: a burst of the same read costs one read, never a stale one.

A hundred clients resuming one answer at the same moment each ask where the
conversation stands and which stream to follow: the same read of the log, a
hundred times over, on the same few threads that every other request needs.
``Coalesced`` runs one read for all who ask the same while it waits its turn,
like a group commit: a read joins only a run that has not started yet, so
its answer is never older than the question. While one run is under way,
those who ask meanwhile wait for the next run, which starts when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["Coalesced"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def _retrieved(done: asyncio.Future[Any]) -> None:
    """Mark a run's failure as seen (each asker raises it; none left is not an error)."""
    if not done.cancelled():
        done.exception()


class Coalesced(Generic[K, T]):
    """One run of a read per key for those who ask it together (on the running event loop)."""

    def __init__(self) -> None:
        self._asked: dict[K, asyncio.Future[T]] = {}
        """Runs asked for and not started yet, by key: whoever asks the same joins."""
        self._running: dict[K, asyncio.Task[None]] = {}
        """The last run started per key (the next one starts after it)."""
        self.runs = 0
        """Reads run (for the curious and the tests)."""

    async def __call__(self, key: K, read: Callable[[], Awaitable[T]]) -> T:
        """``await read()``, or the result of the run that starts next for ``key`` (same read)."""
        run = self._asked.get(key)
        if run is None:
            loop = asyncio.get_running_loop()
            run = self._asked[key] = loop.create_future()
            run.add_done_callback(_retrieved)
            before = self._running.get(key)
            self._running[key] = loop.create_task(self._run(key, run, before, read))
        return await asyncio.shield(run)

    async def _run(
        self,
        key: K,
        run: asyncio.Future[T],
        before: asyncio.Task[None] | None,
        read: Callable[[], Awaitable[T]],
    ) -> None:
        if before is not None:
            await asyncio.wait({before})  # one run at a time per key: this one starts after it
        if self._asked.get(key) is run:
            del self._asked[key]  # started: whoever asks from now on waits for the next run
        try:
            self.runs += 1
            run.set_result(await read())
        except BaseException as error:  # every asker raises it
            run.set_exception(error)
        finally:
            if self._running.get(key) is asyncio.current_task():
                del self._running[key]
