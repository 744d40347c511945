"""The read models' bookkeeping: the tracking position, quarantined events, and the store's settings.

- the tracking table (``tracking`` on SQLite, ``chatledger_tracking`` on
  PostgreSQL) is ``eventsourcing``'s, created and read by its own tracking
  recorder; pages move it by compare-and-set (``TrackingTable.advance``);
- ``chatledger_quarantine``: events the projector could not apply (derived
  from the log, so emptied with the read models);
- ``chatledger_settings``: what the store records about itself (the key
  check value), kept when the read models are reset.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteTrackingRecorder

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.read_models.columns import iso_time, safe_text
from chatledger.adapters.persistence.read_models.dialect import Dialect
from chatledger.projections.read_models import QuarantinedEvent, TrackingMovedError

__all__ = ["QuarantineTable", "SettingsTable", "TrackingRecorders", "TrackingTable"]

_INSERT_TRACKING = (
    "INSERT INTO {tracking} VALUES (?, ?) ON CONFLICT (application_name) DO NOTHING"
    " RETURNING notification_id"
)
_ADVANCE_TRACKING = (
    "UPDATE {tracking} SET notification_id = ? WHERE application_name = ? AND notification_id = ?"
    " RETURNING notification_id"
)
TrackingRecorders = SQLiteTrackingRecorder | PostgresTrackingRecorder
"""``eventsourcing``'s tracking recorders: they create (and migrate) the tracking table, and read it."""

_DELETE_TRACKING = "DELETE FROM {tracking} WHERE application_name = ?"
_INSERT_QUARANTINE = (
    "INSERT INTO {quarantine} VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (notification_id) DO NOTHING"
)
_SELECT_QUARANTINE = (
    "SELECT notification_id, conversation_id, originator_version, topic, error, quarantined_at"
    " FROM {quarantine} ORDER BY notification_id"
)
_INSERT_SETTING = "INSERT INTO {settings} VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
_SELECT_SETTING = "SELECT value FROM {settings} WHERE name = ?"


class TrackingTable:
    """The projector's position in the log: ``eventsourcing``'s tracking table, moved by compare-and-set."""

    def __init__(self, dialect: Dialect, recorder: TrackingRecorders) -> None:
        self._dialect = dialect
        self.recorder = recorder
        """``eventsourcing``'s tracking recorder: creates the table (and migrates old ones), reads it."""

    def advance(self, c: Any, tracking: Tracking, after: int) -> None:
        """In transaction ``c``: compare-and-set the tracking record, ``after`` -> ``tracking.notification_id``.

        Stricter than ``eventsourcing``'s guarded upsert (which only checks that
        the position grows): a projector whose cached state predates a rebuild
        or another projector's page cannot write over their work.
        """
        if after == 0:
            c.execute(
                self._dialect.statement(_INSERT_TRACKING),
                (tracking.application_name, tracking.notification_id),
            )
            if c.fetchone() is None:
                raise TrackingMovedError("another projector applied the first events meanwhile")
            return
        c.execute(
            self._dialect.statement(_ADVANCE_TRACKING),
            (tracking.notification_id, tracking.application_name, after),
        )
        if c.fetchone() is None:
            raise TrackingMovedError(
                f"read models moved past position {after} meanwhile (another projector or a rebuild)"
            )

    def rows(self) -> dict[str, Any]:
        """Every row of the table, position by application name (for ``verify``)."""
        with self._dialect.transaction(commit=False) as c:
            c.execute(
                self._dialect.statement("SELECT application_name, notification_id FROM {tracking}")
            )
            return {row["application_name"]: row["notification_id"] for row in c.fetchall()}

    def forget(self, c: Any, application_name: str) -> None:
        """In transaction ``c``: drop the application's position (the next catch-up starts over)."""
        c.execute(self._dialect.statement(_DELETE_TRACKING), (application_name,))


class QuarantineTable:
    """Events the projector could not apply, skipped so that the rest of the store keeps working."""

    DDL = (
        "CREATE TABLE IF NOT EXISTS {quarantine} ("
        " notification_id BIGINT PRIMARY KEY, conversation_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL, topic TEXT NOT NULL, error TEXT NOT NULL,"
        " quarantined_at TEXT NOT NULL)",
    )
    PURGE = ("DELETE FROM {quarantine} WHERE conversation_id = ?",)
    RESET = ("DELETE FROM {quarantine}",)

    def __init__(self, dialect: Dialect, key: ColumnKey) -> None:
        self._dialect = dialect
        self._key = key

    def purge(self, c: Any, key: str) -> None:
        """In transaction ``c``: delete the conversation's rows."""
        self._dialect.run(c, self.PURGE, (key,))

    def record(self, c: Any, event: QuarantinedEvent) -> None:
        """In transaction ``c``: add ``event`` (once: a second record of it changes nothing)."""
        c.execute(
            self._dialect.statement(_INSERT_QUARANTINE),
            (
                event.notification_id,
                str(event.conversation_id),
                event.version,
                safe_text(event.topic),
                self._key.seal(safe_text(event.error)),
                iso_time(event.quarantined_at),
            ),
        )

    def events(self) -> list[QuarantinedEvent]:
        """The quarantined events, oldest first."""
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(_SELECT_QUARANTINE))
            rows = c.fetchall()
        return [
            QuarantinedEvent(
                row["notification_id"],
                UUID(row["conversation_id"]),
                row["originator_version"],
                row["topic"],
                self._key.unseal(row["error"]) or "",
                datetime.fromisoformat(row["quarantined_at"]),
            )
            for row in rows
        ]


class SettingsTable:
    """Named values the store records about itself (never sealed: read before the key is checked)."""

    DDL = ("CREATE TABLE IF NOT EXISTS {settings} (name TEXT PRIMARY KEY, value TEXT NOT NULL)",)

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect

    def setting(self, name: str, default: str) -> str:
        """The setting ``name``; ``default`` is recorded first if there is none (first writer wins)."""
        with self._dialect.transaction(commit=True) as c:
            c.execute(self._dialect.statement(_INSERT_SETTING), (name, default))
            c.execute(self._dialect.statement(_SELECT_SETTING), (name,))
            value: str = c.fetchone()["value"]
        return value

    def rows(self) -> dict[str, str]:
        """Every setting, by name (for ``verify``)."""
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement("SELECT name, value FROM {settings}"))
            return {row["name"]: row["value"] for row in c.fetchall()}

    def stored_setting(self, name: str) -> str | None:
        """The setting ``name``, or None."""
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(_SELECT_SETTING), (name,))
            row = c.fetchone()
        return None if row is None else str(row["value"])
