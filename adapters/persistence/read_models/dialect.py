"""How the read models' statements are written for each database: table names, placeholders, DDL types, errors.

Every table object writes its statements once, as templates that name
tables as ``{conversations}``, ``{list}``, ... with ``?`` placeholders. A
``Dialect`` turns a template into what its database runs:

- ``SQLiteDialect``: the names formatted in, ``?`` kept;
- ``PostgresDialect``: ``psycopg.sql`` composition with schema-qualified
  identifiers and ``%s`` placeholders (cached: composing is not free).

DDL templates also name column types (``{blob}``, ``{uuid}``,
``{without_rowid}``) and indexes; the statements the databases do not share
(the conversation list's full-text search) are the search index's
(``search``).
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import (
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    PersistenceError,
)
from psycopg import sql

__all__ = [
    "INDEXES",
    "LIST_TABLE",
    "OLD_LAYOUT",
    "QUARANTINE",
    "SEARCH_TABLE",
    "SETTINGS",
    "TABLES",
    "Dialect",
    "PostgresDialect",
    "SQLiteDialect",
]

LIST_TABLE = "chatledger_conversation_list_v2"
SEARCH_TABLE = "chatledger_conversation_search_v2"
"""SQLite's full-text index of the conversation list (PostgreSQL keeps a column instead)."""
TABLES = {
    "conversations": "chatledger_conversations_v2",
    "messages": "chatledger_messages_v2",
    "timeline": "chatledger_timeline_v2",
    "approvals": "chatledger_pending_approvals",
    "continuations": "chatledger_pending_continuations_v2",
    "list": LIST_TABLE,
}
"""The read models' tables: emptied by ``reset``, counted by ``counts``."""
SETTINGS = "chatledger_settings"
"""What the store records about itself (the key check value): kept by ``reset``."""
QUARANTINE = "chatledger_quarantine"
"""Events the projector could not apply (re-derived, so emptied by ``reset`` like the read models)."""
INDEXES = {
    "approvals_by_tenant": "chatledger_pending_approvals_by_tenant",
    "continuations_by_tenant": "chatledger_pending_continuations_v2_by_tenant",
    "list_by_tenant": f"{LIST_TABLE}_by_tenant",
    "list_search": f"{LIST_TABLE}_search",
}
OLD_LAYOUT = (
    "chatledger_conversations",
    "chatledger_timeline",
    "chatledger_conversation_list",
    "chatledger_pending_continuations",  # before requests had an owner
)
"""Read-model tables as laid out before ``_v2``: dropped on open, their rows projected again."""
OLD_SEARCH_LAYOUT = ("chatledger_conversation_search",)
"""SQLite's search table as laid out before ``_v2`` (dropped on open, like the other read models)."""


class Dialect(ABC):
    """One database's way of writing the read models' statements, and its transactions."""

    tracking_table: str
    """The name of ``eventsourcing``'s tracking table in this database."""

    def __init__(self, datastore: Any) -> None:
        self.datastore = datastore
        """The ``eventsourcing`` datastore the read models share with the log."""

    @abstractmethod
    def statement(self, template: str) -> Any:
        """``template`` with its tables named and its placeholders this database's."""

    @abstractmethod
    def ddl(self, template: str) -> Any:
        """A DDL ``template`` with its tables, indexes and column types named."""

    @abstractmethod
    def old_tables(self, c: Any) -> list[str]:
        """In transaction ``c``: which tables of an older layout are there."""

    @abstractmethod
    def drop_table(self, name: str) -> Any:
        """The statement that drops the table ``name`` (if it is there)."""

    @abstractmethod
    def name_log(self, events_table: str) -> None:
        """Name the log's events table ``{events}`` in statements (it shares the database)."""

    @abstractmethod
    def log_id(self, conversation_id: UUID) -> Any:
        """``conversation_id`` as the log's ``originator_id`` column holds it."""

    def run(self, c: Any, templates: Iterable[str], params: tuple[Any, ...] = ()) -> None:
        """In transaction ``c``: run each of ``templates`` (with ``params``, if any)."""
        for template in templates:
            if params:
                c.execute(self.statement(template), params)
            else:
                c.execute(self.statement(template))

    def create(self, templates: Iterable[str]) -> None:
        """Run the DDL ``templates``, in one transaction."""
        with self.datastore.transaction(commit=True) as c:
            for template in templates:
                c.execute(self.ddl(template))

    @contextmanager
    def transaction(self, *, commit: bool) -> Iterator[Any]:
        """A transaction whose driver errors are ``eventsourcing``'s, on both databases."""
        with _translated(), self.datastore.transaction(commit=commit) as cursor:
            yield cursor

    @contextmanager
    def one_statement(self) -> Iterator[Any]:
        """A cursor for ONE reading statement outside a transaction (driver errors as in
        ``transaction``): a single statement reads one snapshot by itself, and on PostgreSQL
        it is one round trip instead of three (BEGIN, the statement, ROLLBACK)."""
        with _translated(), self._autocommit_cursor() as cursor:
            yield cursor

    @abstractmethod
    def _autocommit_cursor(self) -> AbstractContextManager[Any]:
        """A cursor on a pooled connection in autocommit mode."""


@contextmanager
def _translated() -> Iterator[None]:
    """Driver errors raised inside as ``eventsourcing``'s, on both databases."""
    try:
        yield
    except (psycopg.OperationalError, psycopg.InterfaceError) as error:
        raise OperationalError(error) from error
    except psycopg.IntegrityError as error:
        raise IntegrityError(error) from error
    except psycopg.DataError as error:
        raise DataError(error) from error
    except psycopg.Error as error:
        raise PersistenceError(error) from error
    except sqlite3.InterfaceError as error:
        raise InterfaceError(error) from error


class SQLiteDialect(Dialect):
    """SQLite: names formatted into the text, ``?`` placeholders."""

    tracking_table = "tracking"

    def __init__(self, datastore: Any) -> None:
        super().__init__(datastore)
        self._names = {
            **TABLES,
            "search": SEARCH_TABLE,
            "quarantine": QUARANTINE,
            "settings": SETTINGS,
            "tracking": self.tracking_table,
        }
        self._ddl_names = {
            **self._names,
            **INDEXES,
            "blob": "BLOB",
            "uuid": "TEXT",
            "without_rowid": " WITHOUT ROWID",
        }

    def statement(self, template: str) -> str:
        """``template`` with its tables named."""
        return template.format(**self._names)

    @contextmanager
    def _autocommit_cursor(self) -> Iterator[Any]:
        """A reader connection of the pool (``eventsourcing`` keeps them in autocommit mode)."""
        with self.datastore.get_connection(commit=False) as connection, connection.cursor() as c:
            yield c

    def name_log(self, events_table: str) -> None:
        """Name the log's events table ``{events}`` in statements."""
        self._names["events"] = events_table

    def log_id(self, conversation_id: UUID) -> str:
        """The log holds originator ids as 32 hex digits."""
        return conversation_id.hex

    def ddl(self, template: str) -> str:
        """A DDL ``template`` with its tables, indexes and column types named."""
        return template.format(**self._ddl_names)

    def old_tables(self, c: Any) -> list[str]:
        """In transaction ``c``: which tables of an older layout are there (the search table too)."""
        old = [*OLD_LAYOUT, *OLD_SEARCH_LAYOUT]
        c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            f" AND name IN ({', '.join('?' for _ in old)})",
            old,
        )
        return [row[0] for row in c.fetchall()]

    def drop_table(self, name: str) -> str:
        """The statement that drops the table ``name``."""
        return f'DROP TABLE IF EXISTS "{name}"'


class PostgresDialect(Dialect):
    """PostgreSQL: ``psycopg.sql`` composition with identifiers in the store's schema, ``%s`` placeholders."""

    tracking_table = "chatledger_tracking"

    def __init__(self, datastore: Any) -> None:
        super().__init__(datastore)
        schema = datastore.schema
        tables = {**TABLES, "quarantine": QUARANTINE, "settings": SETTINGS}
        self._names: dict[str, sql.Composable] = {
            name: sql.Identifier(schema, table) for name, table in tables.items()
        }
        self._names["tracking"] = sql.Identifier(schema, self.tracking_table)
        self._ddl_names: dict[str, sql.Composable] = {
            **self._names,
            **{name: sql.Identifier(index) for name, index in INDEXES.items()},
            "blob": sql.SQL("BYTEA"),
            "uuid": sql.SQL("UUID"),
            "without_rowid": sql.SQL(""),
        }
        self._cache: dict[str, sql.Composed] = {}

    def statement(self, template: str) -> sql.Composed:
        """``template`` composed with its tables named and ``%s`` placeholders (cached)."""
        statement = self._cache.get(template)
        if statement is None:
            statement = sql.SQL(template.replace("?", "%s")).format(**self._names)
            self._cache[template] = statement
        return statement

    @contextmanager
    def _autocommit_cursor(self) -> Iterator[Any]:
        """A pooled connection's cursor (``eventsourcing`` sets its connections to autocommit)."""
        with self.datastore.get_connection() as connection, connection.cursor() as c:
            yield c

    def name_log(self, events_table: str) -> None:
        """Name the log's events table ``{events}`` in statements (in the store's schema)."""
        self._names["events"] = sql.Identifier(self.datastore.schema, events_table)
        self._cache.clear()

    def log_id(self, conversation_id: UUID) -> UUID:
        """The log's originator ids are UUIDs."""
        return conversation_id

    def ddl(self, template: str) -> sql.Composed:
        """A DDL ``template`` composed with its tables, indexes and column types."""
        return sql.SQL(template).format(**self._ddl_names)

    def create(self, templates: Iterable[str]) -> None:
        """Run the DDL ``templates``, in one transaction (never prepared, as ``eventsourcing`` runs DDL)."""
        with self.datastore.transaction(commit=True) as c:
            for template in templates:
                c.execute(self.ddl(template), prepare=False)

    def old_tables(self, c: Any) -> list[str]:
        """In transaction ``c``: which tables of an older layout are in the store's schema."""
        c.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = %s AND table_name = ANY(%s)",
            (self.datastore.schema, list(OLD_LAYOUT)),
        )
        return [row["table_name"] for row in c.fetchall()]

    def drop_table(self, name: str) -> sql.Composed:
        """The statement that drops the table ``name`` of the store's schema."""
        return sql.SQL("DROP TABLE IF EXISTS {}").format(
            sql.Identifier(self.datastore.schema, name)
        )
