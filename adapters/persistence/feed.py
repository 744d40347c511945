"""PostgreSQL: the store-wide feed of events in position order, read without a lock on writers.

Every event gets a position (``notification_id``, from a sequence) when it is
inserted, but transactions commit in their own order: with writers that do
not queue behind one lock, position 11 can be visible while position 10 is
still in a transaction that has not committed. A reader that moved its
position to 11 would never read 10. ``eventsourcing`` prevents that by having
every insert take ``LOCK TABLE ... IN EXCLUSIVE MODE``, which serialises every
writer of the database. chatledger's writers take no such lock; the readers
(projector, ``follow``'s wake-ups, the OpenTelemetry exporter, verify) read
through this feed instead, which only moves past a position once nothing can
still appear there.

The rule (a *visibility horizon* found from the writers' own table locks):

1. Read the events after the reader's position, in position order.
2. Deliver the run of consecutive positions right after it: a position
   visible now can only be followed, later, by larger ones.
3. At the first missing position, look at who might still fill it. A
   sequence hands out values in order, so a missing position below the
   largest one read was taken before that larger one was, hence before the
   read. Whoever took it did so inside an ``INSERT`` into the events table,
   which holds a ROW EXCLUSIVE lock on the table from before it takes the
   value until its transaction ends. Locks are not subject to MVCC:
   ``pg_locks`` shows them at once. So: note the transactions holding that
   lock now; wait until each has ended; read again. Every position at or
   below the largest one first read is now final (committed, or never to
   be: a rolled-back insert, a failed one, a sequence gap), so the reader
   may pass the missing ones; above it, rule 2 holds again.

The wait is bounded (``settle_seconds``): a writer that stays in its
transaction longer leaves the reader where the consecutive run ended, and it
goes on from there at its next read; while that writer stays, later reads
stop at the hole without waiting for it again. No position is skipped and none is read
twice; per conversation the order is the version order (a version is only
written once the one before is committed).

Only transactions that wrote to this store's events table are waited for,
whatever else runs on the server. This also holds for writers of an older
chatledger (or plain ``eventsourcing``), which lock the whole table: they too
hold the ROW EXCLUSIVE lock. The reverse does not: an older chatledger's
reader assumes positions commit in order, so upgrade every process that reads
the feed (``chatledger project``, servers) together.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from operator import attrgetter, itemgetter
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.persistence import Notification
from psycopg import sql
from psycopg.rows import tuple_row

from chatledger.adapters.persistence.rendered_sql import rendered

__all__ = ["SETTLE_SECONDS", "Feed", "consecutive"]

SETTLE_SECONDS = 2.0
"""How long a read waits, at most, for the writers that may still fill a missing position."""

_R = TypeVar("_R")
_NOTIFICATION_ID: Callable[[Notification], int] = attrgetter("id")
_FIRST: Callable[[tuple[int, UUID]], int] = itemgetter(0)

_FIRST_WAIT = 0.0005
_LONGEST_WAIT = 0.02


def consecutive(ids: Sequence[int], after: int, final_up_to: int = 0) -> int:
    """How many of ``ids`` (ascending) may be delivered after position ``after``.

    Positions up to ``final_up_to`` are final (a missing one will never
    appear); above it, delivery stops at the first missing position.
    """
    expected = after + 1
    for count, position in enumerate(ids):
        if position != expected and position - 1 > final_up_to:  # a hole not known final
            return count
        expected = position + 1
    return len(ids)


class Feed:
    """The events table of one PostgreSQL store read as a gap-safe feed (see the module docstring)."""

    def __init__(
        self, datastore: Any, events_table: str, *, settle_seconds: float = SETTLE_SECONDS
    ) -> None:
        self.datastore = datastore
        self.settle_seconds = settle_seconds
        """The longest a read waits for writers that may fill a missing position (0: never wait)."""
        self.waits = 0
        """How many times a read found a missing position and waited for the writers (for tests)."""
        table = sql.Identifier(datastore.schema, events_table)
        self._qualified = f'"{datastore.schema}"."{events_table}"'
        self._rows = rendered(  # read at every NOTIFY: rendered once (see ``rendered``)
            sql.SQL(
                "SELECT notification_id, originator_id, originator_version, topic, state FROM {} "
                "WHERE notification_id > %s AND notification_id <= %s "
                "ORDER BY notification_id LIMIT %s"
            ).format(table)
        )
        self._keys = rendered(  # the ``News`` hub: which conversations, states left unread
            sql.SQL(
                "SELECT notification_id, originator_id FROM {} "
                "WHERE notification_id > %s AND notification_id <= %s "
                "ORDER BY notification_id LIMIT %s"
            ).format(table)
        )
        self._ids = rendered(
            sql.SQL(
                "SELECT notification_id FROM {} WHERE notification_id > %s "
                "AND notification_id <= %s ORDER BY notification_id LIMIT 100000"
            ).format(table)
        )
        self._max = rendered(sql.SQL("SELECT MAX(notification_id) AS max FROM {}").format(table))
        self.newest_statement = self._max
        """The newest visible position (one column; positions below it may still be in flight)."""
        self._writers = sql.SQL(
            "SELECT virtualtransaction FROM pg_locks WHERE locktype = 'relation' "
            "AND relation = to_regclass(%s) AND mode = 'RowExclusiveLock' AND granted "
            "AND pid <> pg_backend_pid()"
        )
        self._stuck: frozenset[str] = frozenset()
        self._final = 0
        """A position below which every position is known final (none can still appear)."""
        self._still = sql.SQL(
            "SELECT virtualtransaction FROM pg_locks WHERE locktype = 'relation' "
            "AND relation = to_regclass(%s) AND mode = 'RowExclusiveLock' "
            "AND virtualtransaction = ANY(%s)"
        )

    def select(self, after: int, limit: int, stop: int | None = None) -> list[Notification]:
        """Up to ``limit`` events after ``after`` (up to ``stop``); none that a later read could precede."""
        return self._settled(self._read, _NOTIFICATION_ID, after, limit, stop)

    def touched(self, after: int, limit: int) -> list[tuple[int, UUID]]:
        """(position, conversation id) of up to ``limit`` events after ``after``, as ``select``
        delivers them (the same rule), without reading the events themselves."""
        return self._settled(self._read_keys, _FIRST, after, limit, None)

    def _settled(
        self,
        read: Callable[[int, int, int], list[_R]],
        id_of: Callable[[_R], int],
        after: int,
        limit: int,
        stop: int | None,
    ) -> list[_R]:
        """``read``'s rows (``id_of``: a row's position) after ``after`` that no later read could
        precede (the module's rule)."""
        after = max(after, 0)
        upper = stop if stop is not None else 2**63 - 1
        rows = read(after, upper, limit)
        ready = consecutive([id_of(row) for row in rows], after)
        if ready == len(rows):
            return rows
        self.waits += 1
        largest = id_of(rows[-1])  # every position up to it was taken before this read
        if not self._writers_done(self._writers_now()):
            return rows[:ready]
        self._final = max(self._final, largest)
        rows = read(after, upper, limit)
        return rows[: consecutive([id_of(row) for row in rows], after, final_up_to=largest)]

    def head(self) -> int:
        """The largest position below which no event can still appear (0 when empty).

        Waits (bounded) for the writers in flight; if one stays in its
        transaction longer, the end of the consecutive run of positions from
        the last position known final, which is early but never late:
        callers start reading there.
        """
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._max)
            row = curs.fetchone()
        largest = int(row["max"] or 0) if row else 0
        if largest == 0 or self._writers_done(self._writers_now()):
            self._final = max(self._final, largest)
            return largest
        self._final = self._reachable(min(self._final, largest), largest)  # min: a restored log
        return self._final

    # -- reading ------------------------------------------------------------------

    def _read(self, after: int, upper: int, limit: int) -> list[Notification]:
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._rows, (after, upper, limit))
            return [
                Notification(
                    id=row["notification_id"],
                    originator_id=row["originator_id"],
                    originator_version=row["originator_version"],
                    topic=row["topic"],
                    state=bytes(row["state"]),
                )
                for row in curs.fetchall()
            ]

    def _read_keys(self, after: int, upper: int, limit: int) -> list[tuple[int, UUID]]:
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(self._keys, (after, upper, limit))
            return [(int(position), key) for position, key in curs.fetchall()]

    def _reachable(self, position: int, largest: int) -> int:
        """The end of the run of consecutive positions from ``position``, a final one (at most ``largest``)."""
        while position < largest:
            with self.datastore.get_connection() as conn, conn.cursor() as curs:
                curs.execute(self._ids, (position, largest))
                ids = [row["notification_id"] for row in curs.fetchall()]
            ready = consecutive(ids, position)
            if ready:
                position = ids[ready - 1]
            if ready < len(ids) or not ids:
                return position
        return position

    # -- the writers in flight --------------------------------------------------------

    def _writers_now(self) -> list[str]:
        """The transactions that hold the events table's ROW EXCLUSIVE lock now (inserting, or done inserting)."""
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._writers, (self._qualified,))
            return [row["virtualtransaction"] for row in curs.fetchall()]

    def _writers_done(self, writers: list[str]) -> bool:
        """Wait (at most ``settle_seconds``) until every one of ``writers`` has ended; whether they all did.

        A writer still there after a whole wait is remembered: while it stays
        in its transaction, later reads do not wait for it again (they stop
        at the hole at once), so one stuck transaction costs one wait, not one
        per read.
        """
        if not writers:
            self._stuck = frozenset()
            return True
        if self._stuck & set(writers):
            return False
        deadline = time.monotonic() + self.settle_seconds
        pause = _FIRST_WAIT
        while True:
            with self.datastore.get_connection() as conn, conn.cursor() as curs:
                curs.execute(self._still, (self._qualified, writers))
                remaining = [row["virtualtransaction"] for row in curs.fetchall()]
            if not remaining:
                return True
            if time.monotonic() >= deadline:
                self._stuck = frozenset(remaining)
                return False
            # polling the lock table (a bounded wait for other transactions), not timing a test
            time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
            pause = min(pause * 2, _LONGEST_WAIT)
