"""chatledger's SQLite persistence for ``eventsourcing``: the recorder (events, chain links and the
snapshot in one transaction) and the factory (``PRAGMA synchronous`` and ``secure_delete``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing import sqlite
from eventsourcing.sqlite import SQLiteApplicationRecorder

from chatledger.adapters.persistence.blobs import sqlite_blob_ddl
from chatledger.adapters.persistence.chain import (
    PREFIX_BYTES,
    HeadCache,
    chain_events,
    split_link,
    sqlite_chain_ddl,
)
from chatledger.adapters.persistence.data_keys import (
    sqlite_data_key_ddl,
)
from chatledger.adapters.persistence.inserts import call_inserted, snapshots_of
from chatledger.adapters.persistence.signed_heads import HeadSigner
from chatledger.domain.errors import StoreConfigurationError

__all__ = ["SYNCHRONOUS_MODES", "SQLiteConversationRecorder", "SQLiteFactory"]

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


class SQLiteConversationRecorder(SQLiteApplicationRecorder):
    """SQLite: events, their chain links, then the snapshot passed as ``snapshot=``, in one transaction."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.heads = HeadCache()
        self.signer: HeadSigner | None = None
        """Signs each commit's new heads (signed writes; None: off)."""
        self.on_inserted: list[Callable[[Sequence[Any], Sequence[int]], None]] = []
        """Called once a commit is done, before listeners are woken, with its stored events and
        their positions (in-process followers mark what they are fed: ``Fanout``)."""
        self.on_inserting: list[Callable[[Sequence[Any], Sequence[int]], None]] = []
        """Called inside the transaction, before its COMMIT, with its stored events and their
        positions: another connection may see them committed before ``on_inserted`` runs.
        Every call is followed by ``on_inserted`` (committed) or ``on_abandoned`` (not)."""
        self.on_abandoned: list[Callable[[Sequence[int]], None]] = []
        """Called with the positions given to ``on_inserting`` when their transaction failed."""

    def insert_events(self, stored_events: Any, **kwargs: Any) -> Any:
        """Put each event's link in front of its state, insert in one transaction, remember the heads.

        The previous link is read before the write transaction begins: in WAL
        mode a transaction that reads and then writes fails at once ("database
        is locked") when another writer committed in between, where a write
        first waits its turn. The event read is committed and never changes
        (the conversation was loaded from it), so reading it first is safe.
        """

        def previous_of(key: Any, version: int) -> bytes | None:
            with self.datastore.transaction(commit=False) as c:
                c.execute(
                    f"SELECT substr(state, 1, {PREFIX_BYTES}) AS prefix FROM "
                    f"{self.events_table_name} WHERE originator_id = ? AND originator_version = ?",
                    (key.hex, version),
                )
                row = c.fetchone()
            return None if row is None else split_link(bytes(row["prefix"]))[0]

        chained, heads = chain_events(stored_events, previous_of, self.heads)
        pending: list[int] = []
        try:
            ids = super().insert_events(chained, **kwargs, new_heads=heads, pending=pending)
        except BaseException:
            if pending:  # told ``on_inserting``: these positions will not be committed
                for abandoned in self.on_abandoned:
                    with contextlib.suppress(Exception):
                        abandoned(pending)
            raise
        self.heads.update(heads)
        call_inserted(self.on_inserted, stored_events, ids)
        return ids

    def construct_create_table_statements(self) -> list[str]:
        """eventsourcing's events table, then the chain and seal tables."""
        statements = super().construct_create_table_statements()
        return [
            *statements,
            *sqlite_chain_ddl(self.events_table_name),
            *sqlite_data_key_ddl(),
            *sqlite_blob_ddl(),
        ]

    def _insert_events(self, c: Any, stored_events: Any, **kwargs: Any) -> Any:
        ids = super()._insert_events(c, stored_events, **kwargs)
        pending = kwargs.get("pending")
        if self.on_inserting and pending is not None and ids:
            pending.extend(ids)
            call_inserted(self.on_inserting, stored_events, ids)
        if self.signer is not None:
            self.signer.write(c, kwargs.get("new_heads", {}))
        also = kwargs.get("also")
        if also is not None:
            also(c)
        for snapshot in snapshots_of(kwargs):
            table = kwargs["snapshot_table"]
            key = snapshot.originator_id.hex  # type: ignore[union-attr]
            c.execute(
                f"INSERT INTO {table} VALUES (?,?,?,?)",
                (key, snapshot.originator_version, snapshot.topic, snapshot.state),
            )
            c.execute(
                f"DELETE FROM {table} WHERE originator_id = ? AND originator_version < ?",
                (key, snapshot.originator_version),
            )
        return ids


class SQLiteFactory(sqlite.SQLiteFactory):
    """SQLite persistence with chatledger's recorder and ``PRAGMA synchronous`` from ``SQLITE_SYNCHRONOUS``.

    The default, NORMAL, is what SQLite recommends with WAL: every commit
    survives a crash of the process (``kill -9``); a power loss may roll back
    the last commits. FULL also survives that, at the cost of an fsync per
    commit.

    ``PRAGMA secure_delete`` is ON (``SQLITE_SECURE_DELETE`` ON, FAST or OFF,
    to measure its cost; many SQLite builds, Debian's among them, default to
    ON anyway): deleted content is overwritten with zeros, so an erased
    conversation leaves no text, and no copy of its data key, in free pages.
    The erasure's own transaction turns it ON whatever the setting.
    """

    application_recorder_class = SQLiteConversationRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        mode = (self.env.get("SQLITE_SYNCHRONOUS") or "NORMAL").upper()
        if mode not in SYNCHRONOUS_MODES:
            raise StoreConfigurationError(
                f"SQLITE_SYNCHRONOUS must be one of {', '.join(SYNCHRONOUS_MODES)}, not {mode!r}"
            )
        secure = (self.env.get("SQLITE_SECURE_DELETE") or "ON").upper()
        if secure not in ("ON", "OFF", "FAST"):
            raise StoreConfigurationError(
                f"SQLITE_SECURE_DELETE must be ON, OFF or FAST, not {secure!r}"
            )
        pool = self.datastore.pool
        create = pool._create_connection

        def create_connection() -> Any:
            connection = create()
            connection._sqlite_conn.execute(f"PRAGMA synchronous={mode}")
            # Deleted rows are overwritten with zeros, not left in free pages: an erased
            # conversation's rows and its data key must not survive in the file.
            connection._sqlite_conn.execute(f"PRAGMA secure_delete={secure}")
            return connection

        pool._create_connection = create_connection  # type: ignore[method-assign]
