"""The conversations read model: one row per conversation (version, status) and one per message.

- ``chatledger_conversations_v2``: one row per conversation;
- ``chatledger_messages_v2``: its messages, one row per message as JSON (not
  compressed: read on every turn start, inflating them tripled that read)
  with a digest of the JSON: a page rewrites only the messages whose digest
  changed (a turn writes its new messages, not the whole conversation again).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from chatledger.adapters.persistence.keys import ColumnKey
from chatledger.adapters.persistence.packing import pack_plain, unpack
from chatledger.adapters.persistence.read_models.attached import ReadModelBlobs
from chatledger.adapters.persistence.read_models.columns import iso_time, json_text, readable
from chatledger.adapters.persistence.read_models.dialect import Dialect
from chatledger.projections.read_models import ConversationRow, ConversationView

__all__ = ["ConversationTables"]

_UPSERT_CONVERSATION = (
    "INSERT INTO {conversations} VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (conversation_id) DO UPDATE SET version = excluded.version,"
    " status = excluded.status, updated_at = excluded.updated_at"
)
_SELECT_DIGESTS = "SELECT position, digest FROM {messages} WHERE conversation_id = ?"
_UPSERT_MESSAGE = (
    "INSERT INTO {messages} VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id, position)"
    " DO UPDATE SET digest = excluded.digest, message = excluded.message"
)
_TRIM_MESSAGES = "DELETE FROM {messages} WHERE conversation_id = ? AND position >= ?"
_SELECT_CONVERSATION = (  # one statement: one snapshot of the row and its messages
    "SELECT c.version, c.status, m.message FROM {conversations} c"
    " LEFT JOIN {messages} m ON m.conversation_id = c.conversation_id"
    " WHERE c.conversation_id = ? ORDER BY m.position"
)

_SELECT_AT_HEAD = (  # the same, and the log's newest version of the conversation: one snapshot
    "SELECT c.version, c.status, m.message,"
    " (SELECT MAX(e.originator_version) FROM {events} e WHERE e.originator_id = ?) AS head"
    " FROM {conversations} c"
    " LEFT JOIN {messages} m ON m.conversation_id = c.conversation_id"
    " WHERE c.conversation_id = ? ORDER BY m.position"
)


class ConversationTables:
    """Each conversation's row and messages; chat id sealed, tenant tagged with a store key."""

    DDL = (
        "CREATE TABLE IF NOT EXISTS {conversations} ("
        " conversation_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, chat_id TEXT NOT NULL,"
        " version INTEGER NOT NULL, status TEXT NOT NULL, updated_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {messages} ("
        " conversation_id TEXT NOT NULL, position INTEGER NOT NULL, digest BIGINT NOT NULL,"
        " message {blob} NOT NULL, PRIMARY KEY (conversation_id, position))",
    )
    PURGE = (
        "DELETE FROM {conversations} WHERE conversation_id = ?",
        "DELETE FROM {messages} WHERE conversation_id = ?",
    )

    def __init__(self, dialect: Dialect, key: ColumnKey) -> None:
        self._dialect = dialect
        self._key = key
        self.attached = ReadModelBlobs()
        """Attachments kept as references to their blobs (set by ``ReadModels.attach_blobs``)."""

    def purge(self, c: Any, key: str) -> None:
        """In transaction ``c``: delete the conversation's rows."""
        self._dialect.run(c, self.PURGE, (key,))

    def write(self, c: Any, rows: Iterable[ConversationRow], *, rewrite: bool) -> None:
        """In transaction ``c``: upsert the rows and their changed messages (all of them if ``rewrite``)."""
        seal, statement = self._key, self._dialect.statement
        rows = list(rows)
        if not rows:
            return
        c.executemany(
            statement(_UPSERT_CONVERSATION),
            [
                (
                    str(row.conversation_id),
                    seal.tag(row.tenant),
                    seal.seal(row.chat_id),
                    row.version,
                    row.status,
                    iso_time(row.updated_at),
                )
                for row in rows
            ],
        )
        self._write_messages(c, rows, rewrite=rewrite)

    def _write_messages(self, c: Any, rows: list[ConversationRow], *, rewrite: bool) -> None:
        """Write the messages whose digest differs from the stored one, drop those past the end."""
        seal, statement = self._key, self._dialect.statement
        changed, trimmed = [], []
        for row in rows:
            key = str(row.conversation_id)
            c.execute(statement(_SELECT_DIGESTS), (key,))
            stored = {found["position"]: found["digest"] for found in c.fetchall()}
            for position, message in enumerate(row.messages):
                text = json_text(message)
                digest = seal.digest(text)
                if rewrite or stored.get(position) != digest:
                    kept = self.attached.lift(c, key, message, text)
                    if kept is not message:
                        text = json_text(kept)
                    changed.append((key, position, digest, pack_plain(seal, text)))
            if len(stored) > len(row.messages):
                trimmed.append((key, len(row.messages)))
        if changed:
            c.executemany(statement(_UPSERT_MESSAGE), changed)
        if trimmed:
            c.executemany(statement(_TRIM_MESSAGES), trimmed)

    def _messages(self, rows: list[Any]) -> list[str]:
        """The messages' JSON texts of a conversation's rows."""
        key = self._key
        if key.enabled:
            return [unpack(key, row["message"]) for row in rows if row["message"] is not None]
        return [  # stored as they are (the raw tag, then UTF-8): no call per message
            bytes(row["message"][1:]).decode("utf-8", "surrogatepass")
            if row["message"][:1] == b"\x00"
            else unpack(key, row["message"])
            for row in rows
            if row["message"] is not None
        ]

    def read(self, conversation_id: UUID) -> ConversationView | None:
        """The conversation's row with its messages, or None if it was never projected."""
        with self._dialect.transaction(commit=False) as c:
            c.execute(self._dialect.statement(_SELECT_CONVERSATION), (str(conversation_id),))
            rows = c.fetchall()
        return self._view(conversation_id, rows)

    def read_at_head(self, conversation_id: UUID) -> tuple[ConversationView | None, int]:
        """``read``, and the log's newest version of the conversation (0: none), in ONE
        statement outside a transaction: a load on a fresh handle is one query (one round
        trip), not the row's and the log's, each in a transaction of its own."""
        dialect = self._dialect
        params = (dialect.log_id(conversation_id), str(conversation_id))
        with dialect.one_statement() as c:
            c.execute(dialect.statement(_SELECT_AT_HEAD), params)
            rows = c.fetchall()
        return self._view(conversation_id, rows), (rows[0]["head"] or 0) if rows else 0

    def _view(self, conversation_id: UUID, rows: list[Any]) -> ConversationView | None:
        if not rows:
            return None
        messages = readable(
            "messages",
            lambda: [
                self.attached.restore_text(conversation_id, text) for text in self._messages(rows)
            ],
        )
        first = rows[0]
        return ConversationView(first["version"], f"[{','.join(messages)}]", first["status"])
