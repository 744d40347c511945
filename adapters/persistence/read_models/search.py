"""The conversation list's full-text search, one way per database.

- SQLite (``Fts5Index``): ``chatledger_conversation_search_v2``, an FTS5
  table (its rowid is the list row's rowid) over the title and message
  text, with ``detail=none`` (it records which rows hold a word, not where:
  a search only asks which);
- PostgreSQL (``TsvectorIndex``): the list row's ``search`` column, the
  ``tsvector`` of that text (``simple`` configuration, so no language's
  stemming) without positions, with a GIN index; the text itself is not kept.
"""

from __future__ import annotations

import re
from typing import Any

from chatledger.adapters.persistence.read_models.conversation_list import (
    COLUMNS,
    UPDATE,
    ListRow,
    SearchIndex,
)
from chatledger.adapters.persistence.read_models.dialect import Dialect

__all__ = ["Fts5Index", "TsvectorIndex"]

_PIECE = re.compile(r"[^\W_]+", re.UNICODE)
"""What both indexes take for one word: letters and digits (an underscore separates words)."""


def _pieces(terms: list[str]) -> list[str]:
    """The terms as the indexes split them: ``otel_exporter`` is ``otel`` and ``exporter``.

    Left whole, FTS5 reads such a term as a phrase, which an index without
    positions refuses (an error, not an empty result).
    """
    return [piece for term in terms for piece in _PIECE.findall(term)] or terms


class Fts5Index(SearchIndex):
    """SQLite: the list table plus an FTS5 table keyed by the list row's rowid."""

    LIST_DDL = (
        "CREATE TABLE IF NOT EXISTS {list} ("
        " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
        " title TEXT NOT NULL, titled INTEGER NOT NULL, created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL, version INTEGER NOT NULL, message_count INTEGER NOT NULL,"
        " status TEXT NOT NULL, pending_approvals INTEGER NOT NULL, metadata TEXT)",
        "CREATE INDEX IF NOT EXISTS {list_by_tenant} ON {list} (tenant, updated_at, conversation_id)",
        "CREATE VIRTUAL TABLE IF NOT EXISTS {search} USING fts5("
        " body, tokenize = 'unicode61 remove_diacritics 2', detail = none)",
    )
    RESET = ("DELETE FROM {search}",)
    # FTS5 keeps a replaced row's words in its index segments (behind a delete marker)
    # until the segments merge; 'optimize' merges them all now.
    SCRUB = ("INSERT INTO {search} ({search}) VALUES ('optimize')",)
    PURGE = (
        "DELETE FROM {search} WHERE rowid IN (SELECT rowid FROM {list} WHERE conversation_id = ?)",
        "DELETE FROM {list} WHERE conversation_id = ?",
    )
    _UPSERT = (
        "INSERT INTO {list} (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" + UPDATE
    )

    def write(self, dialect: Dialect, c: Any, rows: list[ListRow]) -> None:
        """Upsert the list rows; the FTS row of each is replaced (SQLite keeps the rowid on upsert)."""
        for row, body in rows:
            # The list row keeps no text on SQLite: the FTS table holds it.
            c.execute(dialect.statement(self._UPSERT), row)
            c.execute(
                dialect.statement("SELECT rowid FROM {list} WHERE conversation_id = ?"), (row[0],)
            )
            rowid = c.fetchone()[0]
            c.execute(dialect.statement("DELETE FROM {search} WHERE rowid = ?"), (rowid,))
            c.execute(
                dialect.statement("INSERT INTO {search} (rowid, body) VALUES (?, ?)"),
                (rowid, body),
            )

    def condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]:
        """Rows whose FTS row matches every term."""
        # Terms are runs of word characters, so quoting each one is enough to keep
        # FTS5's query syntax out; a trailing * makes it a prefix match.
        star = "*" if prefix else ""
        match = " ".join(f'"{term}"{star}' for term in _pieces(terms))
        return "rowid IN (SELECT rowid FROM {search} WHERE {search} MATCH ?)", [match]


class TsvectorIndex(SearchIndex):
    """PostgreSQL: the list table with a ``tsvector`` column (no positions) and its GIN index.

    The GIN index is built without a pending list (``fastupdate = off``): each
    turn replaces the row's vector, and a pending list held every replaced
    vector's words until the next vacuum (most of the store's size).
    """

    LIST_DDL = (
        "CREATE TABLE IF NOT EXISTS {list} ("
        ' conversation_id TEXT COLLATE "C" PRIMARY KEY, tenant TEXT NOT NULL,'
        " chat_id TEXT NOT NULL, title TEXT NOT NULL, titled INTEGER NOT NULL,"
        ' created_at TEXT NOT NULL, updated_at TEXT COLLATE "C" NOT NULL,'
        " version INTEGER NOT NULL, message_count INTEGER NOT NULL, status TEXT NOT NULL,"
        " pending_approvals INTEGER NOT NULL, metadata TEXT, search tsvector NOT NULL)",
        "CREATE INDEX IF NOT EXISTS {list_by_tenant} ON {list} (tenant, updated_at, conversation_id)",
        "CREATE INDEX IF NOT EXISTS {list_search} ON {list} USING GIN (search)"
        " WITH (fastupdate = off)",
    )
    PURGE = ("DELETE FROM {list} WHERE conversation_id = ?",)
    _UPSERT = (
        "INSERT INTO {list} (" + COLUMNS + ", search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        " strip(to_tsvector('simple', ?)))" + UPDATE + ", search = excluded.search"
    )

    def write(self, dialect: Dialect, c: Any, rows: list[ListRow]) -> None:
        """Upsert the list rows (PostgreSQL derives the search vector itself)."""
        c.executemany(dialect.statement(self._UPSERT), [(*row, body) for row, body in rows])

    def condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]:
        """Rows whose vector holds every term."""
        # Terms are runs of word characters; quoted, they are plain lexemes, :* a prefix.
        star = ":*" if prefix else ""
        tsquery = " & ".join(f"'{term}'{star}" for term in _pieces(terms))
        return "search @@ to_tsquery('simple', ?)", [tsquery]
