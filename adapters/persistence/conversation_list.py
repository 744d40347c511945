"""The conversation list's tables: one summary row per conversation, and full-text search over it.

- ``chatledger_conversation_list_v2``: title, times, counts, status, metadata;
- on SQLite, ``chatledger_conversation_search_v2``, an FTS5 table (its rowid is
  the list row's rowid) over the title and message text, with ``detail=none``
  (it records which rows hold a word, not where: a search only asks which);
- on PostgreSQL, the list row's ``search`` column, the ``tsvector`` of that
  text (``simple`` configuration, so no language's stemming) without
  positions, with a GIN index; the text itself is not kept.

Both match every word of the query as a prefix (``deploy prod`` finds
"deployment to production"). In a store with a key the list is sealed like
the other read models (tenant as a keyed tag; chat id, title and metadata
encrypted) and the search text is kept only as keyed tags of its words:
search then matches whole words, never prefixes, and no text is readable. The read model classes in ``read_models`` mix
these in; each statement template names tables as ``{list}`` and
``{search}``, with ``?`` placeholders.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.adapters.persistence.keys import PLAIN, ColumnKey
from chatledger.projections.listing import (
    ConversationList,
    ConversationSummary,
    ListQuery,
    decode_cursor,
    encode_cursor,
    search_terms,
)

__all__ = ["LIST_TABLE", "SEARCH_TABLE", "PostgresListTables", "SQLiteListTables", "list_time"]

LIST_TABLE = "chatledger_conversation_list_v2"
SEARCH_TABLE = "chatledger_conversation_search_v2"
OLD_SEARCH_LAYOUT = ("chatledger_conversation_search",)
"""SQLite's search table as laid out before ``_v2`` (dropped on open, like the other read models)."""

_COLUMNS = (
    "conversation_id, tenant, chat_id, title, titled, created_at, updated_at, version,"
    " message_count, status, pending_approvals, metadata"
)
_UPDATE = (
    " ON CONFLICT (conversation_id) DO UPDATE SET title = excluded.title,"
    " titled = excluded.titled, updated_at = excluded.updated_at, version = excluded.version,"
    " message_count = excluded.message_count, status = excluded.status,"
    " pending_approvals = excluded.pending_approvals, metadata = excluded.metadata"
)
_UPSERT = (
    "INSERT INTO {list} (" + _COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" + _UPDATE
)
_UPSERT_SEARCHED = (
    "INSERT INTO {list} (" + _COLUMNS + ", search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " strip(to_tsvector('simple', ?)))" + _UPDATE + ", search = excluded.search"
)


def list_time(moment: datetime) -> str:
    """A fixed-width UTC ISO time, so that text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _word_tags(key: ColumnKey, words: list[str]) -> list[str]:
    """Keyed tags of words: one search token each (letters and digits only), no text readable."""
    return ["w" + key.tag(word).removeprefix("t1:")[:32] for word in words]


def _body(key: ColumnKey, text: str) -> str:
    """The search text as stored: as it is, or with a key the sorted set of its words' tags."""
    if not key.enabled:
        return text
    return " ".join(sorted(set(_word_tags(key, search_terms(text)))))


class _ListTables:
    """The SQL both databases share; subclasses give the DDL and the search condition.

    Mixed in before the read models class, which gives ``_statement`` and ``_transaction``.
    """

    SEARCH_RESET: tuple[str, ...] = ()
    """Statements that empty the search index when the read models are reset."""
    SEARCH_SCRUB: tuple[str, ...] = ()
    """Statements that drop what the search index keeps of replaced rows (after a redaction)."""

    def _scrub_search(self, c: Any) -> None:
        """Make the search index forget the words of replaced rows, not only stop matching them."""
        for statement in self.SEARCH_SCRUB:
            c.execute(self._statement(statement))

    key: ColumnKey = PLAIN

    if TYPE_CHECKING:

        def _statement(self, template: str) -> Any: ...

        def _transaction(self, *, commit: bool) -> Any: ...

        def _search_condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]: ...

    def _row(self, summary: ConversationSummary) -> tuple[Any, ...]:
        seal = self.key
        metadata = None if summary.metadata is None else json.dumps(summary.metadata)
        return (
            str(summary.conversation_id),
            seal.tag(summary.tenant),
            seal.seal(summary.chat_id),
            seal.seal(summary.title),
            int(summary.titled),
            list_time(summary.created_at),
            list_time(summary.updated_at),
            summary.version,
            summary.message_count,
            summary.status,
            summary.pending_approvals,
            seal.seal(metadata),
        )

    def idle_conversations(
        self, before: datetime, tenant: str | None
    ) -> list[tuple[UUID, datetime]]:
        """(id, last change) of the conversations (of ``tenant``, or all) unchanged since ``before``, oldest first."""
        where = ["updated_at < ?"]
        params: list[Any] = [list_time(_utc(before))]
        if tenant is not None:
            where.append("tenant = ?")
            params.append(self.key.tag(tenant))
        statement = (
            f"SELECT conversation_id, updated_at FROM {{list}} WHERE {' AND '.join(where)}"
            " ORDER BY updated_at, conversation_id"
        )
        with self._transaction(commit=False) as c:
            c.execute(self._statement(statement), params)
            rows = c.fetchall()
        return [
            (UUID(row["conversation_id"]), datetime.fromisoformat(row["updated_at"]))
            for row in rows
        ]

    def list_conversations(self, query: ListQuery) -> ConversationList:
        """One page of the tenant's conversations, newest change first."""
        where = ["tenant = ?"]
        seal = self.key
        params: list[Any] = [seal.tag(query.tenant)]
        if query.status is not None:
            where.append("status = ?")
            params.append(query.status)
        if query.updated_before is not None:
            where.append("updated_at < ?")
            params.append(list_time(_utc(query.updated_before)))
        if query.updated_after is not None:
            where.append("updated_at > ?")
            params.append(list_time(_utc(query.updated_after)))
        if query.cursor is not None:
            updated_at, key = decode_cursor(query.cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND conversation_id < ?))")
            params.extend([updated_at, updated_at, key])
        terms = search_terms(query.query)
        if terms:
            if seal.enabled:
                terms = _word_tags(seal, terms)
            condition, values = self._search_condition(terms, not seal.enabled)
            where.append(condition)
            params.extend(values)
        statement = (
            f"SELECT {_COLUMNS} FROM {{list}} WHERE {' AND '.join(where)}"
            " ORDER BY updated_at DESC, conversation_id DESC LIMIT ?"
        )
        params.append(query.limit + 1)
        with self._transaction(commit=False) as c:
            c.execute(self._statement(statement), params)
            rows = c.fetchall()
        found = [
            ConversationSummary(
                UUID(row["conversation_id"]),
                query.tenant,
                seal.unseal(row["chat_id"]) or "",
                seal.unseal(row["title"]) or "",
                bool(row["titled"]),
                datetime.fromisoformat(row["created_at"]),
                datetime.fromisoformat(row["updated_at"]),
                row["version"],
                row["message_count"],
                row["status"],
                row["pending_approvals"],
                _metadata(seal.unseal(row["metadata"])),
            )
            for row in rows[: query.limit]
        ]
        cursor = None
        if len(rows) > query.limit:
            last = rows[query.limit - 1]
            cursor = encode_cursor(last["updated_at"], UUID(last["conversation_id"]))
        return ConversationList(found, cursor)


def _metadata(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


class SQLiteListTables(_ListTables):
    """The list table plus an FTS5 table keyed by the list row's rowid."""

    LIST_DDL = (
        "CREATE TABLE IF NOT EXISTS {list} ("
        " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
        " title TEXT NOT NULL, titled INTEGER NOT NULL, created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL, version INTEGER NOT NULL, message_count INTEGER NOT NULL,"
        " status TEXT NOT NULL, pending_approvals INTEGER NOT NULL, metadata TEXT)",
        "CREATE INDEX IF NOT EXISTS {list}_by_tenant ON {list} (tenant, updated_at, conversation_id)",
        "CREATE VIRTUAL TABLE IF NOT EXISTS {search} USING fts5("
        " body, tokenize = 'unicode61 remove_diacritics 2', detail = none)",
    )
    SEARCH_RESET = ("DELETE FROM {search}",)
    # FTS5 keeps a replaced row's words in its index segments (behind a delete marker)
    # until the segments merge; 'optimize' merges them all now.
    SEARCH_SCRUB = ("INSERT INTO {search} ({search}) VALUES ('optimize')",)
    LIST_PURGE = (
        "DELETE FROM {search} WHERE rowid IN (SELECT rowid FROM {list} WHERE conversation_id = ?)",
        "DELETE FROM {list} WHERE conversation_id = ?",
    )

    def _write_summaries(self, c: Any, summaries: dict[UUID, ConversationSummary]) -> None:
        """Upsert the list rows; the FTS row of each is replaced (SQLite keeps the rowid on upsert)."""
        for summary in summaries.values():
            # The list row keeps no text on SQLite: the FTS table holds it.
            c.execute(self._statement(_UPSERT), self._row(summary))
            c.execute(
                self._statement("SELECT rowid FROM {list} WHERE conversation_id = ?"),
                (str(summary.conversation_id),),
            )
            rowid = c.fetchone()[0]
            c.execute(self._statement("DELETE FROM {search} WHERE rowid = ?"), (rowid,))
            c.execute(
                self._statement("INSERT INTO {search} (rowid, body) VALUES (?, ?)"),
                (rowid, _body(self.key, summary.search_text)),
            )

    def _search_condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]:
        # Terms are runs of word characters, so quoting each one is enough to keep
        # FTS5's query syntax out; a trailing * makes it a prefix match.
        star = "*" if prefix else ""
        match = " ".join(f'"{term}"{star}' for term in terms)
        return "rowid IN (SELECT rowid FROM {search} WHERE {search} MATCH ?)", [match]


class PostgresListTables(_ListTables):
    """The list table with a ``tsvector`` column (no positions) and its GIN index.

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

    LIST_PURGE = ("DELETE FROM {list} WHERE conversation_id = ?",)

    def _write_summaries(self, c: Any, summaries: dict[UUID, ConversationSummary]) -> None:
        """Upsert the list rows (PostgreSQL derives the search vector itself)."""
        if summaries:
            c.executemany(
                self._statement(_UPSERT_SEARCHED),
                [
                    (*self._row(summary), _body(self.key, summary.search_text))
                    for summary in summaries.values()
                ],
            )

    def _search_condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]:
        # Terms are runs of word characters; quoted, they are plain lexemes, :* a prefix.
        star = ":*" if prefix else ""
        tsquery = " & ".join(f"'{term}'{star}" for term in terms)
        return "search @@ to_tsquery('simple', ?)", [tsquery]
