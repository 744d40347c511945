"""The blob table: each conversation's attachments, stored once by content.

``chatledger_blobs`` holds one row per (conversation, SHA-256 of the bytes):
what ``chatledger.domain.attachments`` lifts out of events and messages. The
same file sent twice in a conversation is one row (the insert does nothing
the second time). In a store with a cipher key a blob is encrypted with its
conversation's data key (``data_keys``), so erasing the conversation (its key
destroyed) shreds every copy; the erasure also deletes its rows, in the
erasing transaction, and compaction removes them from the files.

A blob is kept per conversation, not shared across conversations: a shared
blob could not be encrypted with one conversation's key, and erasing one
conversation must not leave its file readable through another.

Stored bytes: the ``ChunkCompressor``'s tagged form (raw when compressing does
not help: images and PDFs), then, under a data key, ``ENVELOPE || nonce ||
AES-GCM(data key, ..., aad = b"chatledger-blob/1" || conversation || digest)``.
Reading a blob checks its SHA-256 against its name.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from psycopg import sql

from chatledger.adapters.persistence.codec import ChunkCompressor
from chatledger.adapters.persistence.data_keys import ENVELOPE, DataKeys
from chatledger.domain.attachments import DEFAULT_LIFT, Blob, LiftPolicy, blob_digest
from chatledger.domain.errors import (
    ConversationErasedError,
    StoreConfigurationError,
    StoredDataError,
)

__all__ = [
    "BLOBS_TABLE",
    "DATA_URL_SETTING",
    "TOOL_OUTPUT_SETTING",
    "BlobStore",
    "lift_policy",
    "postgres_blob_ddl",
    "sqlite_blob_ddl",
]

BLOBS_TABLE = "chatledger_blobs"
_AAD = b"chatledger-blob/1"
_NONCE = 12
_CACHE_BYTES = 32 * 1024 * 1024

DATA_URL_SETTING = "CHATLEDGER_ATTACHMENT_MIN_BYTES"
"""Data URLs of file parts this long or longer are kept as blobs (0: never; default 1024)."""
TOOL_OUTPUT_SETTING = "CHATLEDGER_TOOL_OUTPUT_MIN_BYTES"
"""Tool outputs whose JSON is this long or longer are kept as blobs (0: never; default 16384)."""


def lift_policy(settings: Mapping[str, str]) -> LiftPolicy:
    """The store's lift policy from its settings (the environment); a bad value is refused."""
    sizes = []
    for name, default in (
        (DATA_URL_SETTING, DEFAULT_LIFT.data_url_bytes),
        (TOOL_OUTPUT_SETTING, DEFAULT_LIFT.tool_output_bytes),
    ):
        text = settings.get(name)
        try:
            size = default if text in (None, "") else int(str(text))
        except ValueError:
            size = -1
        if size < 0:
            raise StoreConfigurationError(
                f"{name} must be a number of bytes (0 keeps every value inline), not {text!r}"
            )
        sizes.append(size)
    return LiftPolicy(*sizes)


def sqlite_blob_ddl() -> list[str]:
    """SQLite: the blob table."""
    return [
        f"CREATE TABLE IF NOT EXISTS {BLOBS_TABLE} (originator_id TEXT NOT NULL, "
        "digest TEXT NOT NULL, body BLOB NOT NULL, size INTEGER NOT NULL, "
        "created_at TEXT NOT NULL, PRIMARY KEY (originator_id, digest))"
    ]


def postgres_blob_ddl(schema: str) -> list[sql.Composed]:
    """PostgreSQL: the blob table in the store's schema."""
    return [
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (originator_id uuid NOT NULL, digest text NOT NULL, "
            "body bytea NOT NULL, size bigint NOT NULL, created_at text NOT NULL, "
            "PRIMARY KEY (originator_id, digest))"
        ).format(sql.Identifier(schema, BLOBS_TABLE))
    ]


class BlobStore:
    """Puts and gets one store's blobs (SQLite or PostgreSQL), sealed with the data keys when enabled."""

    def __init__(self, datastore: Any, backend: str, data_keys: DataKeys) -> None:
        self.datastore = datastore
        self.backend = backend
        self.data_keys = data_keys
        self.compressor = ChunkCompressor()
        self._table: Any = (
            sql.Identifier(datastore.schema, BLOBS_TABLE) if backend == "postgres" else BLOBS_TABLE
        )
        self._cache: OrderedDict[tuple[UUID, str], bytes] = OrderedDict()
        """Recently read or written blobs (plain bytes), up to ``_CACHE_BYTES`` in all."""
        self._cached_bytes = 0
        self._lock = threading.Lock()

    def _statement(self, template: str) -> Any:
        if self.backend == "postgres":
            return sql.SQL(template.replace("?", "%s")).format(blobs=self._table)
        return template.format(blobs=self._table)

    def _id(self, conversation: UUID) -> Any:
        return conversation if self.backend == "postgres" else conversation.hex

    def put(self, conversation: UUID, blobs: Iterable[Blob]) -> None:
        """Store each blob of the conversation once (committed now; a blob already there is left)."""
        todo = [blob for blob in blobs if not self._seen(conversation, blob.digest)]
        if not todo:
            return
        key = self.data_keys.for_write(conversation)
        now = datetime.now(UTC).isoformat()
        rows = [
            (
                self._id(conversation),
                blob.digest,
                self._seal(key, conversation, blob),
                len(blob.data),
                now,
            )
            for blob in todo
        ]
        with self.datastore.transaction(commit=True) as c:
            c.executemany(
                self._statement(
                    "INSERT INTO {blobs} (originator_id, digest, body, size, created_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (originator_id, digest) DO NOTHING"
                ),
                rows,
            )
        for blob in todo:
            self._remember(conversation, blob.digest, blob.data)

    def get(self, conversation: UUID, digest: str) -> bytes:
        """The blob's bytes; StoredDataError when it is missing or damaged."""
        with self._lock:
            data = self._cache.get((conversation, digest))
        if data is not None:
            return data
        with self.datastore.transaction(commit=False) as c:
            c.execute(
                self._statement("SELECT body FROM {blobs} WHERE originator_id = ? AND digest = ?"),
                (self._id(conversation), digest),
            )
            row = c.fetchone()
        if row is None:
            if self.data_keys.erasure(conversation) is not None:
                raise ConversationErasedError(None, None)
            raise StoredDataError(
                f"attachment {digest[:16]} of conversation {conversation} is missing from "
                f"{BLOBS_TABLE} (deleted by hand?)"
            )
        data = self._open(conversation, digest, bytes(row["body"]))
        if blob_digest(data) != digest:
            raise StoredDataError(
                f"attachment {digest[:16]} of conversation {conversation} does not match its "
                "SHA-256 (damaged)"
            )
        self._remember(conversation, digest, data)
        return data

    def present(self, c: Any, conversation: UUID, digests: list[str]) -> set[str]:
        """In transaction ``c``: which of ``digests`` the conversation's blobs hold."""
        if not digests:
            return set()
        marks = ", ".join("?" for _ in digests)
        c.execute(
            self._statement(
                f"SELECT digest FROM {{blobs}} WHERE originator_id = ? AND digest IN ({marks})"
            ),
            (self._id(conversation), *digests),
        )
        return {str(row["digest"]) for row in c.fetchall()}

    def size(self, conversation: UUID | None = None) -> tuple[int, int]:
        """(blobs, bytes as stored) of one conversation or of the whole store."""
        where = " WHERE originator_id = ?" if conversation is not None else ""
        params = (self._id(conversation),) if conversation is not None else ()
        with self.datastore.transaction(commit=False) as c:
            c.execute(
                self._statement(
                    "SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(body)), 0) AS b FROM {blobs}" + where
                ),
                params,
            )
            row = c.fetchone()
        return int(row["n"]), int(row["b"])

    def purge(self, c: Any, conversation: UUID) -> None:
        """In the erasing transaction (cursor ``c``): delete the conversation's blobs."""
        c.execute(
            self._statement("DELETE FROM {blobs} WHERE originator_id = ?"),
            (self._id(conversation),),
        )

    def forget(self, conversation: UUID) -> None:
        """Drop what this process cached of the conversation's blobs (after erasing it)."""
        with self._lock:
            for key in [key for key in self._cache if key[0] == conversation]:
                self._cached_bytes -= len(self._cache.pop(key))

    # -- internals ------------------------------------------------------------------------

    def _seen(self, conversation: UUID, digest: str) -> bool:
        with self._lock:
            return (conversation, digest) in self._cache

    def _remember(self, conversation: UUID, digest: str, data: bytes) -> None:
        if len(data) > _CACHE_BYTES // 8:
            return
        with self._lock:
            if (conversation, digest) in self._cache:
                return
            self._cache[(conversation, digest)] = data
            self._cached_bytes += len(data)
            while self._cached_bytes > _CACHE_BYTES:
                self._cached_bytes -= len(self._cache.popitem(last=False)[1])

    def _seal(self, key: Any, conversation: UUID, blob: Blob) -> bytes:
        packed = self.compressor.compress(blob.data)
        if key is None:
            return packed
        nonce = os.urandom(_NONCE)
        aad = _AAD + conversation.bytes + blob.digest.encode()
        sealed: bytes = key.encrypt(nonce, packed, aad)
        return ENVELOPE + nonce + sealed

    def _open(self, conversation: UUID, digest: str, body: bytes) -> bytes:
        if body[: len(ENVELOPE)] == ENVELOPE:
            from cryptography.exceptions import InvalidTag

            key = self.data_keys.for_read(conversation)
            if key is None:
                if self.data_keys.erasure(conversation) is not None:
                    raise ConversationErasedError(None, None)
                raise StoredDataError(
                    f"the data key of conversation {conversation} is missing (deleted by hand?)"
                )
            inner = body[len(ENVELOPE) :]
            try:
                body = bytes(
                    key.decrypt(
                        inner[:_NONCE], inner[_NONCE:], _AAD + conversation.bytes + digest.encode()
                    )
                )
            except InvalidTag:
                raise StoredDataError(
                    f"attachment {digest[:16]} of conversation {conversation} does not decrypt "
                    "with its data key (damaged, or moved from another conversation)"
                ) from None
        return bytes(self.compressor.decompress(body))
