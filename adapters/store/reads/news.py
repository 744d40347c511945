"""One watcher of the log per store that wakes the followers of the conversations that changed.

Followers (``follow``) read their chunks from the log themselves; what they
need from outside is a wake-up when their conversation gets new events. A
``News`` hub gives every follower of one store that wake-up from a single
thread and, on PostgreSQL, a single ``LISTEN`` connection (application name
``chatledger-follow``), however many followers there are: no connection and
no polling loop per follower.

The hub's thread waits for news (PostgreSQL: a NOTIFY, which ``eventsourcing``
sends on every insert; SQLite and memory: a poll every 20 ms), learns which
conversations the events recorded since its last position belong to, and
wakes the followers of those. Most of those events are this process's own:
the recorder told the hub's ``Fanout`` their positions and conversations as
it committed them, so the hub reads only the newest position from the log
(one single-column row) and passes the run of told positions after its own
without another read (a position of this process's commit under way waits
for the next look). Only a position it was not told (another process's
event, or on PostgreSQL one whose hook has not run yet) is read, and then
only positions and conversation ids, never states
(``chatledger.adapters.persistence.touched``; on PostgreSQL gap-safe as
``Feed`` explains: a rolled-back position is passed once, not read again at
every NOTIFY). Each follower's queue
is bounded: one pending wake-up, set or not; wake-ups that arrive while one
is pending merge into it, since the follower re-reads everything new anyway.

Order and completeness do not depend on the hub: a follower reads its own
conversation by version, which has no gaps. The hub only decides when it
reads; a follower also re-reads on its own every second, so a wake-up the hub
missed (a lost connection) delays a chunk, never drops it. The thread (and
its connection) starts with the first follower and ends soon after the last.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING
from uuid import UUID

from chatledger.adapters.persistence.touched import Touched, touched
from chatledger.adapters.store.reads.fanout import Fanout
from chatledger.domain.errors import StoreUnavailableError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["APPLICATION_NAME", "LoopSubscription", "News", "Subscription"]

APPLICATION_NAME = "chatledger-follow"
"""How the hub's LISTEN connection shows in ``pg_stat_activity``."""
POLL_SECONDS = 0.02
"""SQLite and memory: how often the hub looks for new events."""
LISTEN_SECONDS = 0.25
"""PostgreSQL: the longest wait for a NOTIFY before the hub looks anyway (and checks it is still needed)."""
_PAGE = 1000
"""Event positions read per query."""


class Subscription:
    """One follower's wake-up: at most one pending (a bounded queue of one)."""

    fed = False
    """Whether the follower is fed this process's commits (``Fanout``): not woken for those."""

    def __init__(self, key: UUID) -> None:
        self.key = key
        self._pending = threading.Event()

    @property
    def weight(self) -> int:
        """How many followers this wake-up serves (a shared catch-up serves several)."""
        return 1

    def wait(self, seconds: float) -> bool:
        """Sleep until woken or ``seconds`` pass; True if woken. Read the log after it returns."""
        woken = self._pending.wait(seconds)
        self._pending.clear()  # cleared before the caller reads: a later wake-up is kept
        return woken

    def wake(self) -> None:
        """The conversation has new events (merged with any wake-up still pending)."""
        self._pending.set()


class LoopSubscription(Subscription):
    """A follower's wake-up on an asyncio event loop: no thread waits for it.

    The hub's thread hands the wake-up to the loop (``call_soon_threadsafe``)
    at most once until the loop has taken it: still a queue of one.
    """

    def __init__(self, key: UUID, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(key)
        self._loop = loop
        self._woken = asyncio.Event()
        self._handing = False

    async def wait_async(self, seconds: float) -> bool:
        """Sleep (on the loop) until woken or ``seconds`` pass; True if woken. Read the log after."""
        try:
            await asyncio.wait_for(self._woken.wait(), seconds)
            woken = True
        except TimeoutError:
            woken = False
        self._woken.clear()  # cleared before the caller reads: a later wake-up is kept
        return woken

    def wake(self) -> None:
        """The conversation has new events: wake the loop's follower (from any thread)."""
        if self._handing:
            return  # one hand-over is under way: it covers this wake-up too
        self._handing = True
        try:
            self._loop.call_soon_threadsafe(self._take)
        except RuntimeError:  # the loop is closed: nobody waits any more
            self._handing = False

    def _take(self) -> None:
        self._handing = False
        self._woken.set()


class _Watch:
    """One run of the hub's thread: set ``ready`` once watching, or with ``failure`` if it cannot."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.failure: Exception | None = None


class News:
    """The store's single watcher of new events; ``subscribe`` per follower, ``unsubscribe`` when done."""

    def __init__(self, log: ConversationLog, poll_seconds: float = POLL_SECONDS) -> None:
        self._log = log
        self._poll = poll_seconds
        self._wait = LISTEN_SECONDS if log.config.backend == "postgres" else poll_seconds
        self.reading: Touched | None = None
        """The current watch's reads of the log (its ``reads`` count them), None before the first."""
        self._lock = threading.Lock()
        self._followers: dict[UUID, set[Subscription]] = {}
        self._thread: threading.Thread | None = None
        self._watch = _Watch()
        self._closed = False
        self.fanout = Fanout()
        """Hands this process's commits to the followers on event loops (see ``Fanout``)."""
        log.on_commit.append(self.fanout.committed)
        recorder = getattr(log, "recorder", None)
        inserted = getattr(recorder, "on_inserted", None)
        if inserted is not None:  # the database recorders (not memory)
            inserted.append(self.fanout.inserted)
        inserting = getattr(recorder, "on_inserting", None)
        if inserting is not None:  # SQLite: positions known before the COMMIT
            inserting.append(self.fanout.inserting)
            recorder.on_abandoned.append(self.fanout.abandoned)  # type: ignore[union-attr]
        marking = getattr(getattr(log, "recorder", None), "marking", None)
        if marking is not None:  # PostgreSQL: a NOTIFY waits for the marks when it must
            marking.append(self.fanout.feeds)

    @property
    def followers(self) -> int:
        """How many followers are subscribed now."""
        with self._lock:
            return sum(sub.weight for subs in self._followers.values() for sub in subs)

    def subscribe(self, key: UUID, subscription: Subscription | None = None) -> Subscription:
        """Wake-ups for conversation ``key`` from now on (into ``subscription``, or a new one).

        Returns once the hub is watching, so every event recorded after this
        call wakes the subscription; read the log after subscribing.
        StoreUnavailableError if the hub cannot watch (PostgreSQL unreachable).
        """
        if subscription is None:
            subscription = Subscription(key)
        with self._lock:
            if self._closed:
                raise StoreUnavailableError("the store is closed")
            self._followers.setdefault(key, set()).add(subscription)
            if self._thread is None:
                self._watch = _Watch()
                self._thread = threading.Thread(
                    target=self._run, args=(self._watch,), name="chatledger-news", daemon=True
                )
                self._thread.start()
            watch = self._watch
        watch.ready.wait()
        if watch.failure is not None:
            self.unsubscribe(subscription)
            raise StoreUnavailableError(
                f"cannot listen for new events: {watch.failure}"
            ) from watch.failure
        return subscription

    def subscribe_at_once(self, key: UUID, subscription: Subscription) -> bool:
        """``subscribe`` if it need not wait (the hub is watching already): True if subscribed;
        False: nothing done, call ``subscribe`` (off the event loop: it may wait)."""
        with self._lock:
            watch = self._watch if self._thread is not None and not self._closed else None
            if watch is None or not watch.ready.is_set() or watch.failure is not None:
                return False
            self._followers.setdefault(key, set()).add(subscription)
        return True

    def unsubscribe(self, subscription: Subscription) -> None:
        """No more wake-ups for this follower (the thread ends soon after the last one leaves)."""
        with self._lock:
            subs = self._followers.get(subscription.key)
            if subs is not None:
                subs.discard(subscription)
                if not subs:
                    del self._followers[subscription.key]

    def close(self) -> None:
        """Stop watching (the store is closing); followers still waiting re-check on their own."""
        with self._lock:
            self._closed = True
            self._followers.clear()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5)

    # -- the thread ---------------------------------------------------------------

    def _run(self, watch: _Watch) -> None:
        reading: Touched | None = None
        fanout = self.fanout
        try:
            try:
                fanout.watch()  # before the position is read: every later event is told or read
                reading = touched(self._log, APPLICATION_NAME)  # PostgreSQL: LISTENing
                position = reading.start()
                fanout.passed(position)
            except Exception as error:  # reported to the subscribers waiting for readiness
                watch.failure = error
                with self._lock:
                    self._thread = None
                    fanout.unwatch()
                watch.ready.set()
                return
            self.reading = reading
            watch.ready.set()
            while True:
                with self._lock:
                    if not self._followers:
                        self._thread = None  # a new subscriber starts a new thread
                        fanout.unwatch()  # (under the lock: before a new thread's ``watch``)
                        return
                try:
                    reading.wait(self._wait)
                    position = self._wake_followers(reading, position)
                except Exception:  # followers re-check on their own; try again shortly
                    time.sleep(self._poll)
        finally:
            if reading is not None:
                reading.close()

    def _wake_followers(self, reading: Touched, position: int) -> int:
        """Wake the followers of the conversations with events after ``position``, up to the
        newest; return the position passed. Events this process told (``Fanout.known``) are
        not read; the rest are read, in pages."""
        newest = reading.newest()
        fanout = self.fanout
        while position < newest:
            keys: set[UUID] = set()
            fed_keys: set[UUID] = set()
            run, held = fanout.known(position, newest)
            if run:
                position = run[-1][0]
                for _, key, fed in run:
                    (fed_keys if fed else keys).add(key)
            if held:  # this process's commit, told in a moment: the next look passes it
                stuck = True
            elif position < newest:  # not told: another process's event (or not told yet)
                found, through = reading.after(position, newest, _PAGE)
                for at, key in found:
                    (fed_keys if fanout.was_fed(at) else keys).add(key)
                stuck = through <= position
                position = max(position, through)
            else:
                stuck = False
            fanout.passed(position)
            self._wake(keys, fed_keys)
            if stuck:  # PostgreSQL: a writer still in flight below the newest: next wake-up
                break
        return position

    def _wake(self, keys: set[UUID], fed_keys: set[UUID]) -> None:
        """Wake the followers of ``keys``, and those of ``fed_keys`` that are not fed."""
        if not keys and not fed_keys:
            return
        with self._lock:
            woken = [sub for key in keys for sub in self._followers.get(key, ())]
            woken += [
                sub
                for key in fed_keys - keys
                for sub in self._followers.get(key, ())
                if not sub.fed
            ]
        for subscription in woken:
            subscription.wake()
