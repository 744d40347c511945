"""The conversation list read model: one summary row per conversation, paged and searched.

``chatledger_conversation_list_v2`` holds title, times, counts, status and
metadata. Its full-text search is kept the way each database does it best
(a ``SearchIndex``, see ``search``): an FTS5 table on SQLite, a
``tsvector`` column on PostgreSQL. Both match every word of the query as a
prefix (``deploy prod`` finds "deployment to production").

In a store with a key the list is sealed like the other read models (tenant
as a keyed tag; chat id, title and metadata encrypted) and the search text
is kept only as keyed tags of its words: search then matches whole words,
never prefixes, and no text is readable.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from functools import partial
from typing import Any
from uuid import UUID

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.read_models.columns import list_time, readable
from chatledger.adapters.persistence.read_models.dialect import Dialect
from chatledger.projections.listing import (
    ConversationList,
    ConversationSummary,
    ListQuery,
    decode_cursor,
    encode_cursor,
    search_terms,
)

__all__ = ["COLUMNS", "UPDATE", "ConversationListTable", "ListRow", "SearchIndex"]

COLUMNS = (
    "conversation_id, tenant, chat_id, title, titled, created_at, updated_at, version,"
    " message_count, status, pending_approvals, metadata"
)
"""The list row's columns, in the order ``ListRow`` holds their values."""
UPDATE = (
    " ON CONFLICT (conversation_id) DO UPDATE SET title = excluded.title,"
    " titled = excluded.titled, updated_at = excluded.updated_at, version = excluded.version,"
    " message_count = excluded.message_count, status = excluded.status,"
    " pending_approvals = excluded.pending_approvals, metadata = excluded.metadata"
)
"""What an upsert of a list row changes of the stored one."""

ListRow = tuple[tuple[Any, ...], str]
"""A list row as stored (``COLUMNS``' values), and the text search looks in."""


class SearchIndex(ABC):
    """The list table as one database keeps it, with its full-text search."""

    LIST_DDL: tuple[str, ...]
    """The list table, its tenant index, and the search index."""
    PURGE: tuple[str, ...]
    """What erasing a conversation deletes (the conversation id is the parameter)."""
    RESET: tuple[str, ...] = ()
    """Statements that empty the search index when the read models are reset."""
    SCRUB: tuple[str, ...] = ()
    """Statements that drop what the search index keeps of replaced rows (after a redaction)."""

    @abstractmethod
    def write(self, dialect: Dialect, c: Any, rows: list[ListRow]) -> None:
        """In transaction ``c``: upsert the list rows and their search text."""

    @abstractmethod
    def condition(self, terms: list[str], prefix: bool) -> tuple[str, list[Any]]:
        """The WHERE condition (and its parameters) of rows holding every term (as a prefix if ``prefix``)."""


def _word_tags(key: ColumnKey, words: list[str]) -> list[str]:
    """Keyed tags of words: one search token each (letters and digits only), no text readable."""
    return ["w" + key.tag(word).removeprefix("t1:")[:32] for word in words]


def _body(key: ColumnKey, text: str) -> str:
    """The search text as stored: as it is, or with a key the sorted set of its words' tags."""
    if not key.enabled:
        return text
    return " ".join(sorted(set(_word_tags(key, search_terms(text)))))


def _metadata(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


class ConversationListTable:
    """The list's rows: written from each page's summaries, read a page at a time, newest change first."""

    def __init__(self, dialect: Dialect, key: ColumnKey, index: SearchIndex) -> None:
        self._dialect = dialect
        self._key = key
        self.index = index
        """How this database keeps the list and searches it."""

    def write(self, c: Any, summaries: dict[UUID, ConversationSummary]) -> None:
        """In transaction ``c``: upsert the rows of ``summaries``, search text included."""
        key = self._key
        rows = [
            (self._row(summary), _body(key, summary.search_text)) for summary in summaries.values()
        ]
        if rows:
            self.index.write(self._dialect, c, rows)

    def _row(self, summary: ConversationSummary) -> tuple[Any, ...]:
        seal = self._key
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

    def scrub(self, c: Any) -> None:
        """In transaction ``c``: make the search index forget the words of replaced rows (not only skip them)."""
        self._dialect.run(c, self.index.SCRUB)

    def purge(self, c: Any, key: str) -> None:
        """In transaction ``c``: delete the conversation's row and search text."""
        self._dialect.run(c, self.index.PURGE, (key,))

    def idle_conversations(
        self, before: datetime, tenant: str | None
    ) -> list[tuple[UUID, datetime]]:
        """(id, last change) of the conversations (of ``tenant``, or all) unchanged since ``before``, oldest first."""
        where = ["updated_at < ?"]
        params: list[Any] = [list_time(_utc(before))]
        if tenant is not None:
            where.append("tenant = ?")
            params.append(self._key.tag(tenant))
        statement = (
            f"SELECT conversation_id, updated_at FROM {{list}} WHERE {' AND '.join(where)}"
            " ORDER BY updated_at, conversation_id"
        )
        rows = self._select(statement, params)
        return [
            (UUID(row["conversation_id"]), datetime.fromisoformat(row["updated_at"]))
            for row in rows
        ]

    def list_conversations(self, query: ListQuery) -> ConversationList:
        """One page of the tenant's conversations, newest change first."""
        where = ["tenant = ?"]
        seal = self._key
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
            condition, values = self.index.condition(terms, not seal.enabled)
            where.append(condition)
            params.extend(values)
        statement = (
            f"SELECT {COLUMNS} FROM {{list}} WHERE {' AND '.join(where)}"
            " ORDER BY updated_at DESC, conversation_id DESC LIMIT ?"
        )
        params.append(query.limit + 1)
        rows = self._select(statement, params)
        found = [
            readable("conversation list", partial(self._summary, query.tenant, row))
            for row in rows[: query.limit]
        ]
        cursor = None
        if len(rows) > query.limit:
            last = rows[query.limit - 1]
            cursor = encode_cursor(last["updated_at"], UUID(last["conversation_id"]))
        return ConversationList(found, cursor)

    def _summary(self, tenant: str, row: Any) -> ConversationSummary:
        unseal = self._key.unseal
        return ConversationSummary(
            UUID(row["conversation_id"]),
            tenant,
            unseal(row["chat_id"]) or "",
            unseal(row["title"]) or "",
            bool(row["titled"]),
            datetime.fromisoformat(row["created_at"]),
            datetime.fromisoformat(row["updated_at"]),
            row["version"],
            row["message_count"],
            row["status"],
            row["pending_approvals"],
            _metadata(unseal(row["metadata"])),
        )

    def _select(self, statement: str, params: list[Any]) -> list[Any]:
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(statement), params)
            rows: list[Any] = c.fetchall()
        return rows
