"""The pool the async followers read the log on: a few threads of their own, for the whole process.

Not the event loop's default executor: a server's writes go there, and under
load a commit waits its turn for seconds; a follower's read must not wait
behind it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["READER_THREADS", "read_in_pool"]

READER_THREADS = 4
"""Threads reading the log for every async follower of the process (created on first use)."""

T = TypeVar("T")
_readers: ThreadPoolExecutor | None = None
_readers_lock = threading.Lock()


async def read_in_pool(work: Callable[..., T], *args: object) -> T:
    """Run a read of the log on the followers' own pool."""
    global _readers
    if _readers is None:
        with _readers_lock:
            if _readers is None:
                _readers = ThreadPoolExecutor(
                    READER_THREADS, thread_name_prefix="chatledger-follow"
                )
    return await asyncio.get_running_loop().run_in_executor(_readers, work, *args)
