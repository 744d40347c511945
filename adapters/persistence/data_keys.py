"""Envelope encryption: a data key per conversation, wrapped by the store's key; and the register of erasures.

In a store with a cipher key, each conversation's events and snapshots are
encrypted with a key of its own (AES-256-GCM, 32 random bytes), made when
the conversation is first written. The data key is kept in
``chatledger_conversation_keys`` wrapped (AES-GCM) by a key derived from the
store's key, so the table alone reveals nothing. Erasing a conversation
deletes its row: whatever still holds its ciphertext (the log, old
snapshots, a copy of the events table, dead row versions) can no longer be
decrypted, with any key (*crypto-shredding*).

A store without a cipher key gets no data keys: a key kept in the clear
next to the data it encrypts protects nothing that deleting the data does
not, and a keyless store keeps its events as plain (compressed) JSON on
purpose. Erasure there purges: the events become tombstones, snapshots and
read-model rows are deleted (see
``chatledger.adapters.store.operations.erasure``).

``chatledger_erasures`` records every erased conversation (when, by whom,
why, its tenant and the version of its ``ConversationErased`` event), so
reads answer ``ConversationErasedError`` at once and retention skips them.

Stored data keys: ``b"w1" || nonce (12) || AES-GCM(wrapping key, data key,
aad = b"chatledger-data-key/1" || conversation id)``. Event bytes encrypted
with one: ``ENVELOPE || nonce (12) || AES-GCM(data key, compressed JSON,
aad = conversation id)``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from psycopg import sql

from chatledger.adapters.persistence.store_key import StoreKey
from chatledger.domain.errors import CipherKeyError, ConversationErasedError

__all__ = [
    "ENVELOPE",
    "ERASURES_TABLE",
    "KEYS_TABLE",
    "TABLES",
    "DataKeys",
    "Erasure",
    "postgres_data_key_ddl",
    "sqlite_data_key_ddl",
]

KEYS_TABLE = "chatledger_conversation_keys"
ERASURES_TABLE = "chatledger_erasures"
TABLES = (KEYS_TABLE, ERASURES_TABLE)
ENVELOPE = b"\xde\x01"
"""The first bytes of an event or snapshot encrypted with its conversation's data key."""
_WRAPPED = b"w1"
_NONCE = 12
_WRAP_AAD = b"chatledger-data-key/1"


def sqlite_data_key_ddl() -> list[str]:
    """SQLite: the data keys and erasures tables."""
    return [
        f"CREATE TABLE IF NOT EXISTS {KEYS_TABLE} (originator_id TEXT PRIMARY KEY, "
        "wrapped BLOB NOT NULL, created_at TEXT NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {ERASURES_TABLE} (originator_id TEXT PRIMARY KEY, "
        "tenant TEXT NOT NULL, version INTEGER NOT NULL, erased_at TEXT NOT NULL, "
        "actor TEXT NOT NULL, reason TEXT NOT NULL)",
    ]


def postgres_data_key_ddl(schema: str) -> list[sql.Composed]:
    """PostgreSQL: the same tables in the store's schema."""
    return [
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (originator_id uuid PRIMARY KEY, "
            "wrapped bytea NOT NULL, created_at text NOT NULL)"
        ).format(sql.Identifier(schema, KEYS_TABLE)),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (originator_id uuid PRIMARY KEY, "
            "tenant text NOT NULL, version bigint NOT NULL, erased_at text NOT NULL, "
            "actor text NOT NULL, reason text NOT NULL)"
        ).format(sql.Identifier(schema, ERASURES_TABLE)),
    ]


@dataclass(frozen=True)
class Erasure:
    """One erased conversation, as ``chatledger_erasures`` records it."""

    conversation: UUID
    tenant: str
    version: int
    """The version of its ``ConversationErased`` event (the events before it are tombstones)."""
    erased_at: str
    actor: str
    reason: str

    def error(self, tenant: str | None, chat_id: str | None) -> ConversationErasedError:
        """The error a read of this conversation answers."""
        return ConversationErasedError(
            tenant, chat_id, erased_at=self.erased_at, actor=self.actor, reason=self.reason
        )


class DataKeys:
    """The conversations' data keys (when the store has a key) and the erasures register, for one store."""

    def __init__(self, datastore: Any, backend: str, store_key: StoreKey | None) -> None:
        self.backend = backend
        self.datastore = datastore
        self.enabled = store_key is not None and backend in ("sqlite", "postgres")
        """Whether events are encrypted with data keys (a store key on SQLite or PostgreSQL)."""
        self._cache: OrderedDict[UUID, Any] = OrderedDict()
        """Each conversation's data key, as a ready AES-GCM object (forgotten on erase)."""
        self._lock = threading.Lock()
        if self.enabled:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            assert store_key is not None
            self._wrap: Any = AESGCM(store_key.derive(b"data-key-wrap-v1"))
        if backend == "postgres":
            schema = datastore.schema
            self._keys: Any = sql.Identifier(schema, KEYS_TABLE)
            self._erasures: Any = sql.Identifier(schema, ERASURES_TABLE)

    # -- statements -----------------------------------------------------------------

    def statement(self, template: str) -> Any:
        """``template`` with ``{keys}``/``{erasures}`` and ``?`` placeholders, for this backend."""
        if self.backend == "postgres":
            return sql.SQL(template.replace("?", "%s")).format(
                keys=self._keys, erasures=self._erasures
            )
        return template.format(keys=KEYS_TABLE, erasures=ERASURES_TABLE)

    def db_id(self, conversation: UUID) -> Any:
        """The conversation id as the tables hold it."""
        return conversation if self.backend == "postgres" else conversation.hex

    def _one(self, template: str, params: tuple[Any, ...]) -> Any:
        with self.datastore.transaction(commit=False) as c:
            c.execute(self.statement(template), params)
            return c.fetchone()

    # -- data keys ----------------------------------------------------------------------

    def for_write(self, conversation: UUID) -> Any:
        """The conversation's data key (an AES-GCM object), made on first use (None without a store key).

        Two processes making the first key of one conversation agree on one
        (first insert wins). An erased conversation gets none:
        ConversationErasedError.
        """
        if not self.enabled:
            return None
        key = self._cached(conversation)
        if key is not None:
            return key
        key = self._load(conversation)
        if key is not None:
            return key
        erasure = self.erasure(conversation)
        if erasure is not None:
            raise erasure.error(None, None)
        fresh = os.urandom(32)
        nonce = os.urandom(_NONCE)
        wrapped = (
            _WRAPPED + nonce + self._wrap.encrypt(nonce, fresh, _WRAP_AAD + conversation.bytes)
        )
        now = datetime.now(UTC).isoformat()
        with self.datastore.transaction(commit=True) as c:
            c.execute(
                self.statement(
                    "INSERT INTO {keys} (originator_id, wrapped, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (originator_id) DO NOTHING"
                ),
                (self.db_id(conversation), wrapped, now),
            )
        key = self._load(conversation)
        assert key is not None
        return key

    def for_read(self, conversation: UUID) -> Any:
        """The conversation's data key (an AES-GCM object), or None (no store key, erased, or
        written before data keys)."""
        if not self.enabled:
            return None
        return self._cached(conversation) or self._load(conversation)

    def _cached(self, conversation: UUID) -> Any:
        with self._lock:
            key = self._cache.get(conversation)
            if key is not None:
                self._cache.move_to_end(conversation)
            return key

    def _load(self, conversation: UUID) -> Any:
        row = self._one(
            "SELECT wrapped FROM {keys} WHERE originator_id = ?", (self.db_id(conversation),)
        )
        if row is None:
            return None
        wrapped = bytes(row["wrapped"])
        from cryptography.exceptions import InvalidTag

        try:
            key = bytes(
                self._wrap.decrypt(
                    wrapped[2 : 2 + _NONCE], wrapped[2 + _NONCE :], _WRAP_AAD + conversation.bytes
                )
            )
        except (InvalidTag, ValueError):
            raise CipherKeyError(
                f"the data key of conversation {conversation} cannot be unwrapped with the store's "
                "key (damaged, or copied from another conversation or store)"
            ) from None
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        aead = AESGCM(key)
        with self._lock:
            self._cache[conversation] = aead
            while len(self._cache) > 10_000:
                self._cache.popitem(last=False)
        return aead

    def forget(self, conversation: UUID) -> None:
        """Drop the conversation's key from this process's memory (after erasing it)."""
        with self._lock:
            self._cache.pop(conversation, None)

    # -- erasures -----------------------------------------------------------------------

    def erasure(self, conversation: UUID) -> Erasure | None:
        """The record of the conversation's erasure, or None if it was not erased."""
        if self.backend not in ("sqlite", "postgres"):
            return None
        row = self._one(
            "SELECT tenant, version, erased_at, actor, reason FROM {erasures} "
            "WHERE originator_id = ?",
            (self.db_id(conversation),),
        )
        if row is None:
            return None
        return Erasure(
            conversation,
            row["tenant"],
            row["version"],
            row["erased_at"],
            row["actor"],
            row["reason"],
        )

    def erased(self) -> set[UUID]:
        """Every erased conversation."""
        if self.backend not in ("sqlite", "postgres"):
            return set()
        with self.datastore.transaction(commit=False) as c:
            c.execute(self.statement("SELECT originator_id FROM {erasures}"))
            return {UUID(str(row["originator_id"])) for row in c.fetchall()}

    def record_erasure(self, c: Any, erasure: Erasure) -> None:
        """In the erasing transaction (cursor ``c``): destroy the data key, record the erasure."""
        key = self.db_id(erasure.conversation)
        c.execute(self.statement("DELETE FROM {keys} WHERE originator_id = ?"), (key,))
        c.execute(
            self.statement(
                "INSERT INTO {erasures} (originator_id, tenant, version, erased_at, actor, reason) "
                "VALUES (?, ?, ?, ?, ?, ?)"
            ),
            (
                key,
                erasure.tenant,
                erasure.version,
                erasure.erased_at,
                erasure.actor,
                erasure.reason,
            ),
        )
