"""In-process fan-out: the followers of a conversation get the events this process commits from memory.

A stream written by this process reaches its followers on this process's
event loops without a read of the log: after each commit the log hands its
events (as committed, already decoded) to ``Fanout.committed``, which passes
those of followed conversations to their feeds on their loops, one hand-over
per loop and commit. The log stays the truth: a feed takes events only when
they follow on from the version it has read (``StreamReader.apply``), and
reads the log for anything in between (another process's events, a commit
made before it was fed). Followers in other processes, and catch-up from the
start or a cursor, read the log as before.

The store's ``News`` hub still watches the log, for the events of other
processes. It does not wake a feed for an event that was fed to it
(``Fanout.was_fed``): that would be a read of the log finding nothing new.
The recorder marks those events (``Fanout.inserted``) before it wakes the
listeners (PostgreSQL's NOTIFY), so the hub never sees them unmarked: a
commit of a conversation fed here (``Fanout.feeds``) sends its NOTIFY after
the marks, any other sends it with the commit itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from typing import Any, Protocol
from uuid import UUID

__all__ = ["Fanout", "Feed"]


class Feed(Protocol):
    """A follower of one conversation on an event loop, fed the events committed in this process."""

    loop: asyncio.AbstractEventLoop

    def fed(self, events: Sequence[Any]) -> None:
        """Take ``events`` (of this conversation, in version order), on the feed's loop."""


class Fanout:
    """Hands each commit's events to the feeds of their conversations (any thread commits)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._feeds: dict[UUID, list[Feed]] = {}
        self._fed: set[int] = set()
        """Store positions of events handed to a feed, until ``News`` has passed them."""

    def add(self, key: UUID, feed: Feed) -> None:
        """Feed ``feed`` the events of conversation ``key`` committed from now on."""
        with self._lock:
            self._feeds.setdefault(key, []).append(feed)

    def remove(self, key: UUID, feed: Feed) -> None:
        """Stop feeding ``feed``."""
        with self._lock:
            feeds = self._feeds.get(key)
            if feeds is not None and feed in feeds:
                feeds.remove(feed)
                if not feeds:
                    del self._feeds[key]

    def committed(self, events: list[Any], positions: list[int]) -> None:
        """The log's commit hook: ``events`` are committed; hand them to their feeds."""
        if not self._feeds:  # read without the lock: a feed added meanwhile reads the log first
            return
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Feed, list[Any]]]] = {}
        with self._lock:
            mine: dict[UUID, list[Any]] = {}
            for event in events:
                key = event.originator_id
                if key in self._feeds:
                    mine.setdefault(key, []).append(event)
            for key, taken in mine.items():
                for feed in self._feeds[key]:
                    by_loop.setdefault(feed.loop, []).append((feed, taken))
        for loop, handed in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: its followers are gone
                loop.call_soon_threadsafe(_hand_over, handed)

    def feeds(self, stored_events: Sequence[Any]) -> bool:
        """Whether a feed here takes some of these events (the recorder's ``marking``: their
        NOTIFY then waits for ``inserted``). Read without the lock: a feed added meanwhile
        reads the log first, and a wake-up it did not need costs one read."""
        feeds = self._feeds
        return bool(feeds) and any(stored.originator_id in feeds for stored in stored_events)

    def inserted(self, stored_events: Sequence[Any], positions: Sequence[int]) -> None:
        """The recorder's hook, once a commit is done and before listeners are woken: the
        positions of the events ``committed`` is about to hand to feeds (so ``News``, woken
        next, does not wake those feeds for them)."""
        if not self._feeds or not positions:
            return
        with self._lock:
            for stored, position in zip(stored_events, positions, strict=False):
                if stored.originator_id in self._feeds:
                    self._fed.add(position)

    def was_fed(self, position: int) -> bool:
        """Whether the event at store ``position`` was handed to every feed of its conversation."""
        with self._lock:
            return position in self._fed

    def passed(self, position: int) -> None:
        """``News`` has read up to ``position``: forget the fed positions up to it."""
        with self._lock:
            if self._fed:
                self._fed = {fed for fed in self._fed if fed > position}


def _hand_over(handed: list[tuple[Feed, list[Any]]]) -> None:
    """On a feed's loop: give each feed its events."""
    for feed, events in handed:
        feed.fed(events)
