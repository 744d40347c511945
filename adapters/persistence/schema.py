"""Creating a store's tables once, safely, when many processes open it at the same time.

PostgreSQL: opening a store whose tables all exist runs no DDL at all (DDL
on every open made processes that started together fail with "tuple
concurrently updated"). A store that lacks some table (new, or made by an
older version) is created under a PostgreSQL advisory lock named after its
schema: the first process creates what is missing, the others wait, look
again, and find everything there.

SQLite: opening a store whose tables all exist runs no DDL either. The
``IF NOT EXISTS`` statements ran in a deferred transaction, which fails at
once with "database is locked" (no wait) when another process commits a
write between its first read and its first write: a worker started next to
``serve`` failed that way. A new or older SQLite store is still created by
those statements (SQLite serialises them by its file lock).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import psycopg
from psycopg import sql

from chatledger.adapters.persistence.blobs import BLOBS_TABLE
from chatledger.adapters.persistence.chain import TABLES as CHAIN_TABLES
from chatledger.adapters.persistence.config import StoreConfig
from chatledger.adapters.persistence.data_keys import TABLES as DATA_KEY_TABLES
from chatledger.adapters.persistence.read_models.dialect import (
    QUARANTINE,
    SEARCH_TABLE,
    SETTINGS,
    TABLES,
)
from chatledger.domain.errors import StoreConfigurationError

__all__ = ["SQLITE_TABLES", "STORE_TABLES", "direct_connection", "preparing"]

GRANTS_TABLE = "chatledger_grants_events"
"""The standing approval grants' ledgers (``chatledger.adapters.grants.log``)."""

STORE_TABLES = (
    "chatledger_events",
    "chatledger_snapshots",
    "chatledger_tracking",
    *TABLES.values(),
    QUARANTINE,
    SETTINGS,
    *CHAIN_TABLES,
    *DATA_KEY_TABLES,
    BLOBS_TABLE,
    GRANTS_TABLE,
)
"""Every table of a PostgreSQL store (events, snapshots, tracking, read models, settings, chain)."""

SQLITE_TABLES = (
    "stored_events",
    "stored_snapshots",
    "tracking",
    *STORE_TABLES[3:],
    SEARCH_TABLE,
)
"""Every table of a SQLite store (eventsourcing's names for the first three; the full-text index)."""

_COUNT_TABLES = (
    "SELECT COUNT(*) FROM information_schema.tables"
    " WHERE table_schema = %s AND table_name = ANY(%s)"
)


@contextmanager
def preparing(config: StoreConfig) -> Iterator[bool]:
    """Yield whether the store's tables must be created (then under its creation lock, held until exit)."""
    if config.backend == "sqlite":
        yield not _sqlite_complete(config)
        return
    if config.backend != "postgres":
        yield False
        return
    schema = config.schema or "public"
    try:
        connection = direct_connection(config)
    except psycopg.Error as error:
        raise _cannot_open(config, error) from error
    with connection:
        try:
            if _complete(connection, schema):
                must_create = False
            else:
                connection.execute("SELECT pg_advisory_lock(%s)", (_lock_id(schema),))
                if schema != "public":
                    connection.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
                    )
                must_create = not _complete(connection, schema)  # another process may have made it
        except psycopg.Error as error:
            raise _cannot_open(config, error) from error
        yield must_create  # the lock (if taken) ends with the connection


def _complete(connection: Any, schema: str) -> bool:
    (count,) = connection.execute(_COUNT_TABLES, (schema, list(STORE_TABLES))).fetchone()
    return bool(count == len(STORE_TABLES))


def _sqlite_complete(config: StoreConfig) -> bool:
    """Whether the SQLite file holds every table (a read: it waits for no writer, blocks none)."""
    path = config.sqlite_path
    if path is None or not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(path, timeout=5)) as connection:
            rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            names = {name for (name,) in rows}
    except sqlite3.Error:
        return False  # not a database yet, or unreadable: opening it says why
    return all(name in names for name in SQLITE_TABLES)


def _lock_id(schema: str) -> int:
    """The advisory lock of one schema's store (a signed 64-bit number)."""
    digest = hashlib.sha256(f"chatledger-create:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def direct_connection(config: StoreConfig) -> Any:
    """A connection of its own to the PostgreSQL server, outside the pool, in autocommit mode."""
    env = config.env
    return psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=int(env["POSTGRES_PORT"]),
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
        connect_timeout=int(env["POSTGRES_CONNECT_TIMEOUT"]),
        autocommit=True,
    )


def _cannot_open(config: StoreConfig, error: Exception) -> StoreConfigurationError:
    return StoreConfigurationError(f"cannot open the store at {config.display}: {error}")
