"""Where the hash chain and the seals are kept: tables beside eventsourcing's events table.

The events table stays exactly as ``eventsourcing`` makes it, so events
written before chains existed (and tools that read the table) are untouched.
Each event's link (``digest``, ``hash``; see ``chatledger.domain.chain``) goes
in ``chatledger_chain``, written by the recorder in the transaction that
inserts the event, so an event is never stored without its link.
``chatledger_chain_start`` holds one row: the log position after which every
event has a link (0 for a store created with chains; the last position of the
old events for a store upgraded in place). Seals go in ``chatledger_seals``
and the heads each one covers in ``chatledger_seal_heads``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from psycopg import sql

from chatledger.domain.chain import GENESIS, Link, link_hash
from chatledger.domain.seal import Head, Seal

__all__ = [
    "ChainTables",
    "DigestedStoredEvent",
    "chain_tables",
    "postgres_chain_ddl",
    "sqlite_chain_ddl",
]


@dataclass(frozen=True)
class DigestedStoredEvent(StoredEvent):
    """A stored event carrying the SHA-256 of its plain content (set by the mapper)."""

    digest: bytes = b""


def sqlite_chain_ddl(events_table: str) -> list[str]:
    """SQLite: create the chain and seal tables; mark where the chain starts (first time only)."""
    return [
        "CREATE TABLE IF NOT EXISTS chatledger_chain (originator_id TEXT, "
        "originator_version INTEGER, digest BLOB NOT NULL, hash BLOB NOT NULL, "
        "PRIMARY KEY (originator_id, originator_version)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS chatledger_chain_start (id INTEGER PRIMARY KEY "
        "CHECK (id = 1), after_position INTEGER NOT NULL, started_at TEXT NOT NULL)",
        "INSERT OR IGNORE INTO chatledger_chain_start "
        f"SELECT 1, COALESCE(MAX(rowid), 0), datetime('now') FROM {events_table}",
        "CREATE TABLE IF NOT EXISTS chatledger_seals (seq INTEGER PRIMARY KEY, "
        "body TEXT NOT NULL, signature TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS chatledger_seal_heads (seq INTEGER, originator_id TEXT, "
        "originator_version INTEGER NOT NULL, hash BLOB NOT NULL, "
        "PRIMARY KEY (seq, originator_id)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS chatledger_integrity_notes (at TEXT NOT NULL, "
        "action TEXT NOT NULL, detail TEXT NOT NULL)",
    ]


def postgres_chain_ddl(schema: str, events_table: str) -> list[sql.Composed]:
    """PostgreSQL: the same tables in the store's schema."""
    names = _postgres_names(schema, events_table)
    return [
        sql.SQL(statement).format(**names)
        for statement in (
            "CREATE TABLE IF NOT EXISTS {chain} (originator_id uuid NOT NULL, "
            "originator_version bigint NOT NULL, digest bytea NOT NULL, hash bytea NOT NULL, "
            "PRIMARY KEY (originator_id, originator_version))",
            "CREATE TABLE IF NOT EXISTS {start} (id integer PRIMARY KEY CHECK (id = 1), "
            "after_position bigint NOT NULL, started_at timestamptz NOT NULL)",
            "INSERT INTO {start} SELECT 1, COALESCE(MAX(notification_id), 0), now() "
            "FROM {events} ON CONFLICT (id) DO NOTHING",
            "CREATE TABLE IF NOT EXISTS {seals} (seq bigint PRIMARY KEY, "
            "body text NOT NULL, signature text NOT NULL)",
            "CREATE TABLE IF NOT EXISTS {heads} (seq bigint NOT NULL, originator_id uuid NOT NULL, "
            "originator_version bigint NOT NULL, hash bytea NOT NULL, "
            "PRIMARY KEY (seq, originator_id))",
            "CREATE TABLE IF NOT EXISTS {notes} (at text NOT NULL, action text NOT NULL, "
            "detail text NOT NULL)",
        )
    ]


def _postgres_names(schema: str, events_table: str) -> dict[str, sql.Composable]:
    return {
        "chain": sql.Identifier(schema, "chatledger_chain"),
        "start": sql.Identifier(schema, "chatledger_chain_start"),
        "seals": sql.Identifier(schema, "chatledger_seals"),
        "heads": sql.Identifier(schema, "chatledger_seal_heads"),
        "notes": sql.Identifier(schema, "chatledger_integrity_notes"),
        "events": sql.Identifier(schema, events_table),
    }


def new_links(
    stored_events: Sequence[StoredEvent], previous_of: Any
) -> list[tuple[UUID, int, bytes, bytes]]:
    """``(id, version, digest, hash)`` for each digested event; ``previous_of(id, version)`` reads a stored hash."""
    rows: list[tuple[UUID, int, bytes, bytes]] = []
    last: dict[UUID, tuple[int, bytes]] = {}
    for event in stored_events:
        if not isinstance(event, DigestedStoredEvent) or not event.digest:
            continue
        key = event.originator_id
        assert isinstance(key, UUID)
        version = event.originator_version
        known = last.get(key)
        if known is not None and known[0] == version - 1:
            previous = known[1]
        else:
            previous = (previous_of(key, version - 1) if version > 1 else None) or GENESIS
        digest = event.digest
        hashed = link_hash(key, version, event.topic, digest, previous)
        last[key] = (version, hashed)
        rows.append((key, version, digest, hashed))
    return rows


class ChainTables:
    """Reads and writes of the chain and seal tables, for verify and seal (one backend)."""

    def __init__(self, datastore: Any, events_table: str, backend: str) -> None:
        self.datastore = datastore
        self.backend = backend
        if backend == "postgres":
            self._names = _postgres_names(datastore.schema, events_table)
            self._names["position"] = sql.SQL("notification_id")
        self._events = events_table

    def _run(self, template: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of one SELECT."""
        with self.datastore.transaction(commit=False) as c:
            c.execute(self._statement(template), params)
            return list(c.fetchall())

    def _statement(self, template: str) -> Any:
        if self.backend == "postgres":
            return sql.SQL(template.replace("?", "%s")).format(**self._names)
        return template.format(
            chain="chatledger_chain",
            start="chatledger_chain_start",
            seals="chatledger_seals",
            heads="chatledger_seal_heads",
            notes="chatledger_integrity_notes",
            events=self._events,
            position="rowid",
        )

    def _key(self, conversation: UUID) -> Any:
        return conversation if self.backend == "postgres" else conversation.hex

    def chain_start(self) -> tuple[int, str]:
        """The log position after which every event has a link, and when chains started."""
        rows = self._run("SELECT after_position, started_at FROM {start}")
        if not rows:
            return 0, ""
        return int(rows[0]["after_position"]), str(rows[0]["started_at"])

    def conversations(self) -> set[UUID]:
        """Every conversation with an event or a link."""
        found = self._run(
            "SELECT DISTINCT originator_id FROM {events} UNION SELECT DISTINCT originator_id FROM {chain}"
        )
        return {UUID(str(row["originator_id"])) for row in found}

    def events(self, conversation: UUID) -> list[tuple[int, str, bytes, int]]:
        """``(version, topic, state, position)`` of the conversation's events, in order."""
        rows = self._run(
            "SELECT originator_version, topic, state, {position} AS position FROM {events} "
            "WHERE originator_id = ? ORDER BY originator_version",
            (self._key(conversation),),
        )
        return [
            (row["originator_version"], row["topic"], bytes(row["state"]), row["position"])
            for row in rows
        ]

    def links(self, conversation: UUID) -> dict[int, Link]:
        """The conversation's links by version."""
        rows = self._run(
            "SELECT originator_version, digest, hash FROM {chain} WHERE originator_id = ?",
            (self._key(conversation),),
        )
        return {
            row["originator_version"]: Link(bytes(row["digest"]), bytes(row["hash"]))
            for row in rows
        }

    def heads(self) -> list[Head]:
        """Every conversation's last link (one statement: a consistent moment)."""
        rows = self._run(
            "SELECT c.originator_id, c.originator_version, c.hash FROM {chain} c JOIN "
            "(SELECT originator_id, MAX(originator_version) AS v FROM {chain} GROUP BY originator_id) h "
            "ON c.originator_id = h.originator_id AND c.originator_version = h.v"
        )
        return [
            Head(UUID(str(row["originator_id"])), row["originator_version"], bytes(row["hash"]))
            for row in rows
        ]

    def seals(self) -> list[Seal]:
        """Every seal, oldest first."""
        rows = self._run("SELECT seq, body, signature FROM {seals} ORDER BY seq")
        return [
            Seal.from_json({**json.loads(row["body"]), "signature": row["signature"]})
            for row in rows
        ]

    def seal_heads(self, seq: int) -> list[Head]:
        """The heads seal ``seq`` covers."""
        rows = self._run(
            "SELECT originator_id, originator_version, hash FROM {heads} WHERE seq = ?", (seq,)
        )
        return [
            Head(UUID(str(row["originator_id"])), row["originator_version"], bytes(row["hash"]))
            for row in rows
        ]

    def add_note(self, at: str, action: str, detail: str) -> None:
        """Record that something was done despite a failing check (e.g. a forced rebuild)."""
        with self.datastore.transaction(commit=True) as c:
            c.execute(
                self._statement("INSERT INTO {notes} (at, action, detail) VALUES (?, ?, ?)"),
                (at, action, detail),
            )

    def notes(self) -> list[tuple[str, str, str]]:
        """Every recorded note: (time, action, detail), oldest first."""
        rows = self._run("SELECT at, action, detail FROM {notes} ORDER BY at")
        return [(row["at"], row["action"], row["detail"]) for row in rows]

    def add_seal(self, seal: Seal, heads: Sequence[Head]) -> None:
        """Store a seal and its heads (one transaction; a concurrent seal of the same number fails)."""
        body = seal.body_bytes().decode("ascii")
        with self.datastore.transaction(commit=True) as c:
            c.execute(
                self._statement("INSERT INTO {seals} (seq, body, signature) VALUES (?, ?, ?)"),
                (seal.seq, body, seal.signature),
            )
            rows = [(seal.seq, self._key(h.conversation), h.version, h.hash) for h in heads]
            if rows:
                c.executemany(
                    self._statement(
                        "INSERT INTO {heads} (seq, originator_id, originator_version, hash) "
                        "VALUES (?, ?, ?, ?)"
                    ),
                    rows,
                )


def chain_tables(recorder: Any, backend: str) -> ChainTables | None:
    """The chain tables of a log's recorder (None for ``memory://``, which keeps no chain)."""
    if backend not in ("sqlite", "postgres"):
        return None
    return ChainTables(recorder.datastore, recorder.events_table_name, backend)
