"""The read models on SQLite, PostgreSQL and in memory, and opening them next to a store's log."""

from __future__ import annotations

import uuid
from typing import Any

from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder

from chatledger.adapters.persistence.keys import check_store_key
from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.persistence.read_models.dialect import PostgresDialect, SQLiteDialect
from chatledger.adapters.persistence.read_models.search import Fts5Index, TsvectorIndex
from chatledger.adapters.persistence.read_models.view import ReadModels
from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.projections.read_models import ReadModelView

__all__ = [
    "MemoryReadModels",
    "PostgresReadModels",
    "SQLiteReadModels",
    "memory_read_models",
    "open_read_models",
]


class SQLiteReadModels(ReadModels):
    """The read models in the store's SQLite database (search: FTS5)."""

    def __init__(self, datastore: SQLiteDatastore, key: StoreKey | None = None) -> None:
        super().__init__(
            SQLiteDialect(datastore), SQLiteTrackingRecorder(datastore), Fts5Index(), key
        )


class PostgresReadModels(ReadModels):
    """The read models in the store's PostgreSQL schema (search: a ``tsvector`` column)."""

    def __init__(self, datastore: PostgresDatastore, key: StoreKey | None = None) -> None:
        dialect = PostgresDialect(datastore)
        tracking = PostgresTrackingRecorder(datastore, tracking_table_name=dialect.tracking_table)
        super().__init__(dialect, tracking, TsvectorIndex(), key)


class MemoryReadModels(SQLiteReadModels):
    """Read models of a ``memory://`` store: an in-memory SQLite database of their own."""

    def close(self) -> None:
        """Close the in-memory database (nobody else uses it)."""
        self.dialect.datastore.close()


def memory_read_models(key: StoreKey | None = None) -> MemoryReadModels:
    """Read models for a ``memory://`` store: an in-memory SQLite database of their own."""
    name = f"file:chatledger-read-models-{uuid.uuid4().hex}?mode=memory&cache=shared"
    view = MemoryReadModels(SQLiteDatastore(name), key)
    view.create_table()
    return view


def open_read_models(
    log: ConversationLog, backend: str, key: StoreKey | None, *, create: bool = True
) -> ReadModelView:
    """The read models next to ``log``, sealed with ``key``, tables created if ``create``.

    ``key`` is checked against the check value recorded when the store was
    created (CipherKeyError) before anything else is read or written.
    """
    view: ReadModels
    if backend == "sqlite":
        view = SQLiteReadModels(log.datastore, key)
    elif backend == "postgres":
        view = PostgresReadModels(log.datastore, key)
    else:
        view = memory_read_models(key)
    if backend in ("sqlite", "postgres"):
        recorder: Any = log.recorder
        view.name_log(recorder.events_table_name)  # a load reads the row and the log's head
    blobs = getattr(log.mapper, "blobs", None)
    if blobs is not None:
        view.attach_blobs(blobs, log.mapper.lift_policy)  # type: ignore[attr-defined]
    if backend != "memory" and create:
        view.create_table()
    older = check_store_key(view, key, log)
    if backend != "memory" and create:
        view.drop_old_layout(log.name)  # laid out by an older version: projected again
    if older and key is not None:  # read models of an encrypted store from before they were sealed
        view.reset(log.name)  # re-derived, sealed, by the next catch-up
    if view.list_missing():
        # Read models from before the conversation list: project everything again.
        view.reset(log.name)
    return view
