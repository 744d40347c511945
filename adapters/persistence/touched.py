"""The store's newest position and, for the positions it must read, their conversations: lean reads for ``News``.

The ``News`` hub learns most of what the log records from this process's
own inserts (``Fanout``); from the log it needs only the position of the
newest event and, for the positions it did not learn (another process's
events), which conversation each belongs to. A ``Touched`` gives it just
that, per backend, with statements of its own built once per watch:

- SQLite: a connection of the hub's own (no trip through the store's pool),
  ``MAX(rowid)`` and ``(rowid, originator_id)`` rows, states left unread.
  Writers are serialised, so every position up to the newest is final: a
  position found in no row (an erased conversation's purged events) is
  passed at the first read.
- PostgreSQL: the newest visible position on the hub's ``LISTEN`` connection
  itself (a NOTIFY arriving meanwhile is kept for the next wait), and
  ``(notification_id, originator_id)`` rows through the gap-safe
  ``Feed.touched`` (a position still in flight is waited for as ``Feed``
  explains; a rolled-back one is passed once found final).
- memory: the log's own reads.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from chatledger.adapters.persistence.errors import STORAGE_ERRORS
from chatledger.adapters.persistence.notify import listen, wait_for_notify
from chatledger.adapters.persistence.rendered_sql import rendered
from chatledger.domain.errors import StoreUnavailableError

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog

__all__ = ["Touched", "touched"]

Row = tuple[int, UUID]
"""(position in the store, conversation id) of one event."""


class Touched:
    """What the hub reads of the log (memory: the log's own reads); ``close`` when done watching."""

    def __init__(self, log: ConversationLog) -> None:
        self._log = log
        self.reads = 0
        """How many times the log was read for conversation ids (``after``), for tests."""

    def wait(self, seconds: float) -> None:
        """Sleep until the log may have news (PostgreSQL: a NOTIFY) or ``seconds`` pass."""
        time.sleep(seconds)

    def start(self) -> int:
        """Where a watch starts: a position below which no event can still appear (0 when empty)."""
        return self._log.head()

    def newest(self) -> int:
        """The position of the newest event visible now (0 when empty); events may still appear below it."""
        return self._log.head()

    def after(self, position: int, newest: int, limit: int) -> tuple[list[Row], int]:
        """Up to ``limit`` events after ``position`` (those up to ``newest`` at least), in order, and
        the position the reader may pass to (every position up to it is read or final)."""
        self.reads += 1
        found = self._log.touched_after(position, limit)
        return found, found[-1][0] if found else position

    def close(self) -> None:
        """Release what the watch holds (its connection)."""


class _SQLiteTouched(Touched):
    def __init__(self, log: ConversationLog) -> None:
        super().__init__(log)
        recorder: Any = log.recorder
        table = recorder.events_table_name
        self._newest = f"SELECT MAX(rowid) FROM {table}"
        self._rows = (
            f"SELECT rowid, originator_id FROM {table} WHERE rowid > ? AND rowid <= ? "
            "ORDER BY rowid LIMIT ?"
        )
        try:  # autocommit: each statement reads the newest commit (WAL: without blocking writers)
            self._connection = sqlite3.connect(
                recorder.datastore.pool.db_name, uri=True, isolation_level=None, timeout=5
            )
        except sqlite3.Error as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error

    def newest(self) -> int:
        try:
            row = self._connection.execute(self._newest).fetchone()
        except sqlite3.Error as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        return int(row[0] or 0)

    def after(self, position: int, newest: int, limit: int) -> tuple[list[Row], int]:
        self.reads += 1
        try:
            rows = self._connection.execute(self._rows, (position, newest, limit)).fetchall()
        except sqlite3.Error as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        found = [(at, UUID(hex=key)) for at, key in rows]
        if len(found) < limit:  # serialised writers: every position up to ``newest`` is final
            return found, max(newest, position)
        return found, found[-1][0]

    def close(self) -> None:
        self._connection.close()


class _PostgresTouched(Touched):
    def __init__(self, log: ConversationLog, application_name: str) -> None:
        super().__init__(log)
        recorder: Any = log.recorder
        self._feed = recorder.feed
        self._newest = rendered(self._feed.newest_statement)
        self._listener = listen(log, application_name)  # before the first position is read

    def wait(self, seconds: float) -> None:
        wait_for_notify(self._listener, seconds)

    def newest(self) -> int:
        try:  # notifies arriving meanwhile are kept by psycopg for the next wait
            row = self._listener.execute(self._newest).fetchone()
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        return int(row[0] or 0) if row else 0

    def after(self, position: int, newest: int, limit: int) -> tuple[list[Row], int]:
        self.reads += 1
        try:
            found = cast(list[Row], self._feed.touched(position, limit))
        except STORAGE_ERRORS as error:
            raise StoreUnavailableError(f"cannot read the log: {error}") from error
        return found, found[-1][0] if found else position

    def close(self) -> None:
        self._listener.close()


def touched(log: ConversationLog, application_name: str) -> Touched:
    """The hub's reads of ``log`` for one watch (PostgreSQL: LISTENing as ``application_name``)."""
    backend = log.config.backend
    if backend == "postgres":
        return _PostgresTouched(log, application_name)
    if backend == "sqlite":
        return _SQLiteTouched(log)
    return Touched(log)
