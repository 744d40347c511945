"""Hand tampering of a real store's tables with plain SQL (SQLite file or PostgreSQL schema).

What a hand edit, a bad restore or an intruder with database access would do;
the integrity checks must name each.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit
from uuid import UUID

import psycopg

from chatledger.adapters.persistence.codec import ChunkCompressor
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.chain import GENESIS, content_digest, link_hash


class Tamperer:
    """Raw SQL on the database behind a store URL, with ids written the way each backend does."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith("postgresql")
        self.events = "chatledger_events" if self.postgres else "stored_events"
        self.snapshots = "chatledger_snapshots" if self.postgres else "stored_snapshots"

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        if self.postgres:
            parts = urlsplit(self.url)
            schema = parse_qs(parts.query)["schema"][0]
            with psycopg.connect(urlunsplit(parts._replace(query="")), autocommit=True) as c:
                c.execute(f'SET search_path TO "{schema}"')
                yield c
        else:
            path = self.url.removeprefix("sqlite:///")
            connection = sqlite3.connect(path, isolation_level=None)
            try:
                yield connection
            finally:
                connection.close()

    def key(self, chat: str, tenant: str = "default") -> Any:
        """The conversation's id as the events table holds it."""
        uid = conversation_id(tenant, chat)
        return uid if self.postgres else uid.hex

    def run(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        """Execute one statement (``?`` placeholders) and return its rows."""
        if self.postgres:
            statement = statement.replace("?", "%s")
        with self._connection() as c:
            cursor = c.execute(statement, params)
            try:
                return [tuple(row) for row in cursor.fetchall()]
            except (psycopg.ProgrammingError, sqlite3.ProgrammingError):
                return []

    def state(self, chat: str, version: int) -> tuple[str, bytes]:
        """(topic, stored state) of one event."""
        ((topic, state),) = self.run(
            f"SELECT topic, state FROM {self.events} WHERE originator_id = ? "
            "AND originator_version = ?",
            self.key(chat),
            version,
        )
        return topic, bytes(state)

    def edit(self, chat: str, version: int, old: bytes, new: bytes) -> bytes:
        """Replace ``old`` with ``new`` in an event's JSON (decompressed, edited, recompressed)."""
        _, state = self.state(chat, version)
        codec = ChunkCompressor()
        content = codec.decompress(state)
        assert old in content, content
        edited = content.replace(old, new, 1)
        self.run(
            f"UPDATE {self.events} SET state = ? WHERE originator_id = ? AND originator_version = ?",
            codec.compress(edited),
            self.key(chat),
            version,
        )
        return edited

    def relink(self, chat: str, start: int) -> None:
        """Recompute every link from ``start`` on, as someone who knows the algorithm would."""
        uid = conversation_id("default", chat)
        previous = GENESIS
        if start > 1:
            ((previous,),) = self.run(
                "SELECT hash FROM chatledger_chain WHERE originator_id = ? AND originator_version = ?",
                self.key(chat),
                start - 1,
            )
        rows = self.run(
            f"SELECT originator_version, topic, state FROM {self.events} "
            "WHERE originator_id = ? AND originator_version >= ? ORDER BY originator_version",
            self.key(chat),
            start,
        )
        for version, topic, state in rows:
            digest = content_digest(ChunkCompressor().decompress(bytes(state)))
            hashed = link_hash(uid, version, topic, digest, bytes(previous))
            self.run(
                "UPDATE chatledger_chain SET digest = ?, hash = ? WHERE originator_id = ? "
                "AND originator_version = ?",
                digest,
                hashed,
                self.key(chat),
                version,
            )
            previous = hashed

    def uuid(self, chat: str) -> UUID:
        """The conversation's id."""
        return conversation_id("default", chat)
