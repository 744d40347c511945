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
processes, and learns this process's own from here: while the hub watches
(``watch``), the recorder tells ``inserted`` the position and conversation
of every event this process commits, fed or not, so the hub reads the log
only for positions it was not told (``known``: the run of told positions
after its own). It does not wake a feed for an event that was fed to it
(``was_fed``): that would be a read of the log finding nothing new.

The recorder calls ``inserted`` before it wakes the listeners where it
matters: a PostgreSQL commit of a conversation fed here (``feeds``) sends
its NOTIFY after ``inserted``, so that NOTIFY never wakes the hub for a fed
event it was not told; any other commit sends its NOTIFY with the commit
itself (no round trip of its own on the write path: the hub may find such
an event not told yet, and reads its position). SQLite has no NOTIFY,
and the hub's connection may see a commit before ``inserted`` runs: the
recorder gives the positions inside the transaction (``inserting``), and
the hub neither reads nor passes them until they are told (or dropped,
``abandoned``, when the transaction fails). On PostgreSQL a commit seen
before its ``inserted`` (the hub woken by another commit meanwhile) is read,
as another process's would be: a wake-up too many, never one too few.
What the hub has passed is forgotten (``passed``); nothing is kept while
nobody watches.
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
        self._told: dict[int, tuple[UUID, bool]] = {}
        """Store position -> (conversation, handed to its feeds) of this process's events, while
        ``News`` watches, above the position it has passed."""
        self._pending: set[int] = set()
        """Positions of this process's commits under way (SQLite: ``inserting``), not yet told."""
        self._watching = False
        self._passed = 0

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

    def watch(self) -> None:
        """``News`` starts watching: tell it this process's events from now on (read the
        store's position after this call: an event told before it is passed with it)."""
        with self._lock:
            self._watching, self._passed = True, 0
            self._told.clear()
            self._pending.clear()

    def unwatch(self) -> None:
        """``News`` stopped watching: forget what was told, tell nothing more."""
        with self._lock:
            self._watching = False
            self._told.clear()
            self._pending.clear()

    def inserting(self, stored_events: Sequence[Any], positions: Sequence[int]) -> None:
        """The SQLite recorder's hook inside a transaction, before its COMMIT: these positions
        are this process's, to be told (``inserted``) or dropped (``abandoned``); until then
        ``News`` neither passes nor reads them (its own connection may see them committed
        before ``inserted`` runs: it would read them, and wake their feeds for nothing)."""
        if not self._watching or not positions:
            return
        with self._lock:
            if self._watching:
                self._pending.update(positions)

    def abandoned(self, positions: Sequence[int]) -> None:
        """The SQLite recorder's hook: the transaction of these ``inserting`` positions failed."""
        with self._lock:
            self._pending.difference_update(positions)

    def inserted(self, stored_events: Sequence[Any], positions: Sequence[int]) -> None:
        """The recorder's hook, once a commit is done and before listeners are woken: the
        positions of this process's events, and which of them ``committed`` is about to hand
        to feeds (so ``News``, woken next, neither reads them nor wakes those feeds for them)."""
        if not self._watching or not positions:  # read without the lock: an untold event is read
            return
        with self._lock:
            if not self._watching:
                return
            feeds, told, passed = self._feeds, self._told, self._passed
            if self._pending:
                self._pending.difference_update(positions)
            for stored, position in zip(stored_events, positions, strict=False):
                if position > passed:  # (at or below it: ``News`` has read it already)
                    key = stored.originator_id
                    told[position] = (key, key in feeds)

    def known(self, position: int, newest: int) -> tuple[list[tuple[int, UUID, bool]], bool]:
        """The run of told events right after ``position`` (up to ``newest``), in order, each as
        (position, conversation, fed); it stops at the first position not told. And whether it
        stopped at one of this process's commits under way (``inserting``: to be told soon, not
        to be read or passed)."""
        run: list[tuple[int, UUID, bool]] = []
        with self._lock:
            told, pending = self._told, self._pending
            while position < newest:
                position += 1
                found = told.get(position)
                if found is None:
                    return run, position in pending
                run.append((position, *found))
        return run, False

    def was_fed(self, position: int) -> bool:
        """Whether the event at store ``position`` was handed to every feed of its conversation."""
        with self._lock:
            found = self._told.get(position)
        return found is not None and found[1]

    def passed(self, position: int) -> None:
        """``News`` has read up to ``position``: forget what was told up to it."""
        with self._lock:
            if position <= self._passed:
                return
            told, start = self._told, self._passed
            self._passed = position
            if not told:
                return
            if position - start <= len(told):
                for at in range(start + 1, position + 1):
                    told.pop(at, None)
            else:
                self._told = {at: found for at, found in told.items() if at > position}


def _hand_over(handed: list[tuple[Feed, list[Any]]]) -> None:
    """On a feed's loop: give each feed its events."""
    for feed, events in handed:
        feed.fed(events)
