"""The flusher: one thread per store that commits the due batches of its open streams, together.

It knows the streams only as ``GroupMember``s: what it asks of each (join a
due group without waiting for it, hear how the group's transaction went, be
marked for reload, the unit of work it commits through) is that protocol,
and ``StreamWriter`` implements it.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, renew_every

__all__ = [
    "LINGER",
    "RECHECK",
    "Flusher",
    "GroupCommitter",
    "GroupMember",
    "Taken",
    "commit_group",
]

RECHECK = 0.05
"""Share of ``max_delay`` after which a writer busy in a call of its own at a tick is checked
again (2.5 ms at the default): it may buffer a batch due before the next tick."""

LINGER = 1.0
"""Seconds the thread keeps ticking after the last open stream closed before it sleeps until
the next ``watch``: a store writing turn after turn then opens streams on a ticking thread,
which needs no wake (a thread switch per turn); an idle store still sleeps."""


@dataclass(frozen=True)
class Taken:
    """What a member gives the flusher's group commit: events taken off its conversation, a snapshot."""

    events: list[Any]
    snapshot: StoredEvent | None = None


class GroupCommitter(Protocol):
    """What a group is committed through: a unit of work."""

    def commit_many(self, events: list[Any], snapshots: list[Any] | None = None, /) -> None:
        """Record the events of several conversations, and snapshots, in one transaction."""


class GroupMember(Protocol):
    """What the flusher needs of an open stream's writer.

    The flusher never waits for a member (``try_hold``), and takes a
    member's events (``join_group``) only while holding it; the group's
    transaction runs unheld, and each member is told how it went.
    """

    key: UUID
    """The id of the conversation the member writes (``settle`` is asked per conversation)."""

    @property
    def unit_of_work(self) -> GroupCommitter:
        """What the member commits through: members of one unit of work share a transaction."""

    def try_hold(self) -> bool:
        """Hold the member if it is free, without waiting; False when it is busy in a call of its own."""

    def release(self) -> None:
        """End a hold ``try_hold`` took."""

    def join_group(self, now: float, ahead: float) -> tuple[Taken | None, float | None]:
        """Held: what the member gives the group due at ``now`` (None: nothing due, or it
        committed alone), and when what it still buffers is due (or None): a batch due
        within ``ahead`` of ``now`` joins (``math.inf``: any batch buffered)."""

    def mark_stale(self) -> None:
        """Held: the member's conversation may be ahead of the log; reload before its next commit."""

    def group_committed(self) -> None:
        """The group's transaction holds what the member gave."""

    def group_failed(self) -> None:
        """The group's transaction failed: the member commits what it gave through its own path."""

    def flush_if_due(self, now: float | None = None) -> float | None:
        """Commit alone what is due at ``now``; when what it still buffers is due (or None)."""

    def settle(self) -> None:
        """Commit now what the member holds back after a boundary chunk, or a pending open."""


class Flusher:
    """One background thread per store that commits the due batches of all its open streams, together.

    It wakes when the first writer's batch is due: when its oldest buffered
    chunk is ``BatchPolicy.commit_age`` old (each tick learns when every
    writer's batch is due; a batch begun after a tick is due ``commit_age``
    after it at the earliest, so a check every ``max_delay / 2`` learns of it
    in time), or when its batch ended by a boundary chunk has settled
    (``due_at`` wakes it at that moment). A commit so starts ``max_delay *
    COMMIT_BUDGET`` before the chunk is ``max_delay`` old, and has ended by
    then. A tick at which some writer's batch is due, or its lease needs
    renewing (``StreamWriter.renew_if_idle``), takes every writer's buffered
    batch, due or not, and records all their events in ONE transaction
    (*group commit*): the streams so begin their next batches together and
    are due together again, and at N live streams the process commits about
    once per ``commit_age`` instead of N times that (a transaction costs far
    more than a member of one). A tick at which none is due takes none. A batch
    due a snapshot is committed on its own (with its snapshot). If the
    group's transaction fails (another process wrote one of the
    conversations meanwhile, or the database failed), each member is
    committed through its own path (reload, re-apply, commit), so one bad
    member costs the others one retry, never their chunks.

    ``append()`` still commits by itself when its oldest chunk reaches
    ``BatchPolicy.overdue_age`` (the flusher fell behind, or the writer was
    busy at the tick). A writer busy in a call of its own at the tick is
    left to that call, and checked again ``max_delay * RECHECK`` later.
    """

    def __init__(
        self, max_delay: float, lease_seconds: float = DEFAULT_STREAM_LEASE_SECONDS
    ) -> None:
        self._period = max(min(max_delay, renew_every(lease_seconds)) / 2, 0.001)
        """Seconds between checks when no writer is due sooner (a new batch is due later)."""
        self._recheck = max_delay * RECHECK
        """Seconds after which a writer busy at a tick is checked again."""
        self._next: float | None = None
        """The earliest moment a writer asked to be checked at (see ``due_at``)."""
        self._wakes_at = 0.0
        """When the thread wakes next by itself (it is woken for an earlier ``due_at`` only)."""
        self._idle_since = float("-inf")
        """When the last watched writer went (the thread keeps ticking ``LINGER`` seconds after)."""
        self._asleep = False
        """Whether the thread waits without a timeout (then ``watch`` must wake it)."""
        self._watched: set[GroupMember] = set()
        self._by_key: dict[UUID, set[GroupMember]] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.group = True
        """Commit the due batches of all writers in one transaction (False: one each, as before)."""

    def watch(self, writer: GroupMember) -> None:
        """Check ``writer`` periodically until it closes."""
        with self._wake:
            self._watched.add(writer)
            self._by_key.setdefault(writer.key, set()).add(writer)
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(
                    target=self._run, name="chatledger-flusher", daemon=True
                )
                self._thread.start()
            if self._asleep:
                # Only a thread that waits without a timeout needs waking: a ticking one
                # checks every writer within its period anyway. Waking it for every new
                # stream cost a thread switch per turn (a quarter of open_stream's time),
                # and the thread ticks on for LINGER after the last stream closed, so a
                # store writing turn after turn does not wake it at each open either.
                self._wake.notify()

    def due_at(self, moment: float) -> None:
        """Check the writers at ``moment`` (``time.monotonic``) if not before (a boundary settles)."""
        with self._wake:
            if self._next is None or moment < self._next:
                self._next = moment
                if moment < self._wakes_at:
                    self._wake.notify()

    def unwatch(self, writer: GroupMember) -> None:
        """Stop checking ``writer``."""
        with self._wake:
            self._watched.discard(writer)
            same = self._by_key.get(writer.key)
            if same is not None:
                same.discard(writer)
                if not same:
                    del self._by_key[writer.key]
            if not self._watched:
                self._idle_since = time.monotonic()

    def settle(self, key: UUID) -> None:
        """Commit now what this process's writers of conversation ``key`` hold after a boundary.

        Called before anything else in this process reads or decides on that
        conversation, so it sees every boundary chunk appended before, as if
        each had been committed at once.
        """
        with self._wake:
            writers = list(self._by_key.get(key, ()))
        for writer in writers:
            writer.settle()

    def writes(self, key: UUID) -> bool:
        """Whether this process has an open writer of conversation ``key``."""
        with self._wake:
            return key in self._by_key

    def writer_of(self, key: UUID) -> GroupMember | None:
        """This process's open writer of conversation ``key`` (None: none, or more than one)."""
        with self._wake:
            writers = self._by_key.get(key, ())
            return next(iter(writers)) if len(writers) == 1 else None

    def settle_all(self) -> None:
        """``settle`` every conversation this process writes (before reading across them)."""
        with self._wake:
            writers = list(self._watched)
        for writer in writers:
            writer.settle()

    def stop(self) -> None:
        """End the thread (the store is closing); a flusher stopped before its first ``watch``
        starts none, and commits only when ``commit_due`` is called."""
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        checked = 0.0
        while True:
            with self._wake:
                if self._stopped:
                    return
                now = time.monotonic()
                if not self._watched:
                    if now - self._idle_since < LINGER:
                        self._wakes_at = now + self._period
                        self._wake.wait(self._period)
                    else:
                        self._asleep = True
                        self._wake.wait()
                        self._asleep = False
                    continue
                due = checked + self._period
                if self._next is not None:
                    due = min(due, self._next)
                if now < due:
                    self._wakes_at = due
                    self._wake.wait(due - now)
                    continue
                if self._next is not None and self._next <= now:
                    self._next = None
                checked = now
                writers = list(self._watched)
            pending = self._commit_due(writers, now)
            if pending is not None:
                self.due_at(pending)  # a batch, or a boundary, due later

    def commit_due(self, now: float | None = None) -> float | None:
        """One tick now: commit what is due of every watched writer (as of ``now``, a
        ``time.monotonic`` moment); returns when the next writer is due (None: none buffers)."""
        with self._wake:
            writers = list(self._watched)
        return self._commit_due(writers, time.monotonic() if now is None else now)

    def _commit_due(self, writers: list[GroupMember], now: float) -> float | None:
        if not self.group:
            pending = [moment for writer in writers if (moment := writer.flush_if_due(now))]
            return min(pending, default=None)
        members: list[tuple[GroupMember, Taken]] = []
        waiting: list[tuple[GroupMember, float]] = []
        pending = []
        for member in writers:
            # Never wait for a writer: one busy in a call of its own commits what is due
            # itself. Not waiting also means no lock order to keep between writers.
            if not member.try_hold():
                pending.append(now + self._recheck)  # it may buffer a batch due before long
                continue
            moment = _join(member, now, 0.0, members)
            if moment is not None:
                waiting.append((member, moment))
        if members:
            # A transaction is due: every batch buffered joins it (a member costs far less
            # than a transaction), so the streams stay in step, due together next time.
            for member, _ in waiting:
                if not member.try_hold():
                    pending.append(now + self._recheck)
                elif (later := _join(member, now, math.inf, members)) is not None:
                    pending.append(later)
            commit_group(members)
        else:
            pending += [moment for _, moment in waiting]
        return min(pending, default=None)


def _join(
    member: GroupMember, now: float, ahead: float, members: list[tuple[GroupMember, Taken]]
) -> float | None:
    """Held (released here): add what ``member`` gives the group due at ``now`` to
    ``members``; when what it still buffers is due (None: nothing)."""
    try:
        taken, moment = member.join_group(now, ahead)
        if taken is not None:
            members.append((member, taken))
        return moment
    except Exception:  # e.g. a fold that failed: reload at the writer's next call
        member.mark_stale()
        return None
    finally:
        member.release()


def commit_group(members: list[tuple[GroupMember, Taken]]) -> None:
    """Commit the members' events taken by ``join_group``, one transaction per unit of work.

    On any failure of a group, each of its members commits on its own
    (``group_failed``).
    """
    groups: dict[int, list[tuple[GroupMember, Taken]]] = {}
    for member, taken in members:
        groups.setdefault(id(member.unit_of_work), []).append((member, taken))
    for group in groups.values():
        events = [event for _, taken in group for event in taken.events]
        snapshots = [taken.snapshot for _, taken in group if taken.snapshot is not None]
        try:
            group[0][0].unit_of_work.commit_many(events, snapshots)
        except Exception:
            for member, _ in group:
                member.group_failed()
        else:
            for member, _ in group:
                member.group_committed()
