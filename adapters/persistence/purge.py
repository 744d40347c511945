"""The SQL of erasure on the log's own tables: tombstones in place of events, snapshots deleted.

Used by ``chatledger.adapters.store.operations.erasure`` inside the
transaction that appends the ``ConversationErased`` event
(``insert_events(..., also=...)``). What the files keep afterwards is
``chatledger.adapters.persistence.compaction``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from psycopg import sql

__all__ = ["LogPurge"]


class LogPurge:
    """Overwrites one conversation's events and deletes its snapshots (SQLite or PostgreSQL)."""

    def __init__(self, log: Any) -> None:
        self._log = log
        self.backend: str = log.config.backend

    def _statement(self, template: str) -> Any:
        recorder = self._log.recorder
        snapshots = self._log.snapshots.recorder.events_table_name
        if self.backend == "postgres":
            schema = recorder.datastore.schema
            return sql.SQL(template.replace("?", "%s")).format(
                events=sql.Identifier(schema, recorder.events_table_name),
                snapshots=sql.Identifier(schema, snapshots),
            )
        return template.format(events=recorder.events_table_name, snapshots=snapshots)

    def _id(self, key: UUID) -> Any:
        return key if self.backend == "postgres" else key.hex

    def replace(self, c: Any, key: UUID, states: Sequence[tuple[int, bytes]]) -> None:
        """In transaction ``c``: store ``states`` (version, bytes) in place of the conversation's events."""
        c.executemany(
            self._statement(
                "UPDATE {events} SET state = ? WHERE originator_id = ? AND originator_version = ?"
            ),
            [(state, self._id(key), version) for version, state in states],
        )

    def drop_snapshots(self, c: Any, key: UUID) -> None:
        """In transaction ``c``: delete every snapshot of the conversation."""
        c.execute(
            self._statement("DELETE FROM {snapshots} WHERE originator_id = ?"), (self._id(key),)
        )

    def zero_deletes(self, c: Any) -> int | None:
        """SQLite, in transaction ``c``: overwrite what the erasure deletes with zeros (``secure_delete``).

        Whatever ``SQLITE_SECURE_DELETE`` says for the store's other writes.
        Returns the connection's setting, for ``restore_deletes``.
        """
        if self.backend != "sqlite":
            return None
        c.execute("PRAGMA secure_delete")
        before = int(c.fetchone()[0])
        c.execute("PRAGMA secure_delete=ON")
        return before

    def restore_deletes(self, c: Any, before: int | None) -> None:
        """Undo ``zero_deletes``: the connection's own setting again."""
        if before is not None:  # PRAGMA secure_delete=2 would read as ON: name it
            c.execute(f"PRAGMA secure_delete={('OFF', 'ON', 'FAST')[before]}")
