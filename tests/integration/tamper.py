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

from chatledger.adapters.persistence.chain import MAGIC, split_link
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

    def head(self, chat_id: str, tenant: str = "default") -> int:
        """The conversation's last stored version (read raw, before any tampering)."""
        ((head,),) = self.run(
            f"SELECT MAX(originator_version) FROM {self.events} WHERE originator_id = ?",
            self.key(chat_id, tenant),
        )
        return int(head)

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

    def _put(self, chat: str, version: int, state: bytes, tenant: str = "default") -> None:
        self.run(
            f"UPDATE {self.events} SET state = ? WHERE originator_id = ? AND originator_version = ?",
            state,
            self.key(chat, tenant),
            version,
        )

    def edit(self, chat: str, version: int, old: bytes, new: bytes) -> None:
        """Replace ``old`` with ``new`` in an event's JSON (decompressed, edited, recompressed; link kept)."""
        _, state = self.state(chat, version)
        link, inner = split_link(state)
        codec = ChunkCompressor()
        content = codec.decompress(inner)
        assert old in content, content
        edited = codec.compress(content.replace(old, new, 1))
        self._put(chat, version, edited if link is None else MAGIC + link + edited)

    def strip_links(self, chat: str, tenant: str = "default") -> None:
        """Remove the links from a conversation's events (as a store from before chains has them)."""
        for version, _, state in self._rows(chat, 1, tenant):
            self._put(chat, version, split_link(bytes(state))[1], tenant)

    def _rows(self, chat: str, start: int, tenant: str = "default") -> list[tuple[Any, ...]]:
        return self.run(
            f"SELECT originator_version, topic, state FROM {self.events} "
            "WHERE originator_id = ? AND originator_version >= ? ORDER BY originator_version",
            self.key(chat, tenant),
            start,
        )

    def relink(self, chat: str, start: int) -> None:
        """Recompute every link from ``start`` on, as someone who knows the algorithm would."""
        uid = conversation_id("default", chat)
        previous = GENESIS
        if start > 1:
            previous = split_link(self.state(chat, start - 1)[1])[0] or GENESIS
        for version, topic, state in self._rows(chat, start):
            _, inner = split_link(bytes(state))
            digest = content_digest(ChunkCompressor().decompress(inner))
            link = link_hash(uid, version, topic, digest, previous)
            self._put(chat, version, MAGIC + link + inner)
            previous = link

    def uuid(self, chat: str) -> UUID:
        """The conversation's id."""
        return conversation_id("default", chat)

    def tables(self) -> list[str]:
        """Every table of the store's database (SQLite file or PostgreSQL schema)."""
        if self.postgres:
            rows = self.run(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        else:
            rows = self.run(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        return sorted(str(name) for (name,) in rows if not str(name).startswith("copy_"))

    def copy(self) -> None:
        """Keep a copy of every table (an older backup of the whole store)."""
        for table in self.tables():
            self.run(f'DROP TABLE IF EXISTS "copy_{table}"')
            self.run(f'CREATE TABLE "copy_{table}" AS SELECT * FROM "{table}"')

    def roll_back(self) -> None:
        """Put every table back to the copy (the whole store restored from the older backup)."""
        for table in self.tables():
            self.run(f'DELETE FROM "{table}"')
            self.run(f'INSERT INTO "{table}" SELECT * FROM "copy_{table}"')

    def append_copy(self, chat: str, version: int, old: bytes, new: bytes) -> int:
        """Append a copy of an event, ``old`` replaced by ``new``, with a valid link (as anyone can compute)."""
        topic, state = self.state(chat, version)
        head = self.head(chat)
        _, inner = split_link(state)
        codec = ChunkCompressor()
        content = codec.decompress(inner)
        assert old in content, content
        content = content.replace(old, new, 1)
        previous = split_link(self.state(chat, head)[1])[0] or GENESIS
        link = link_hash(self.uuid(chat), head + 1, topic, content_digest(content), previous)
        self.run(
            f"INSERT INTO {self.events} (originator_id, originator_version, topic, state) "
            "VALUES (?, ?, ?, ?)",
            self.key(chat),
            head + 1,
            topic,
            MAGIC + link + codec.compress(content),
        )
        return head + 1
