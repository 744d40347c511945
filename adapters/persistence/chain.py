"""Where the hash chain and the seals are kept: each event's link in front of its stored state; seals beside.

The events table stays exactly as ``eventsourcing`` makes it. The recorder,
in the transaction that inserts an event, reads the link of the
conversation's previous event, computes the new event's link
(``chatledger.domain.chain``) and stores the state as
``0xFF || link (16 bytes) || state as the codec made it``. The codec
strips the prefix when decoding; events written before chains (no prefix)
load exactly as before. Keeping the link in the row (rather than in a table
of its own) costs 17 bytes per event and no extra row or index: a row of
its own would cost about five times that.

``chatledger_chain_start`` holds one row: the log position after which every
event has a link (0 for a store created with chains; the last position of
the old events for a store upgraded in place). Seals go in
``chatledger_seals``, the heads each one covers in ``chatledger_seal_heads``,
and notes of what was done despite a failing check (a forced rebuild) in
``chatledger_integrity_notes``; with signed writes on, each conversation's
newest signed head in ``chatledger_head_signatures``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from psycopg import sql

from chatledger.domain.chain import GENESIS, LINK_BYTES, link_hash
from chatledger.domain.errors import StoredDataError
from chatledger.domain.seal import Head, Seal
from chatledger.domain.signed_writes import HeadSignature

__all__ = [
    "MAGIC",
    "PREFIX_BYTES",
    "TABLES",
    "ChainTables",
    "DigestedStoredEvent",
    "HeadCache",
    "chain_events",
    "chain_tables",
    "postgres_chain_ddl",
    "split_link",
    "sqlite_chain_ddl",
]

TABLES = (
    "chatledger_chain_start",
    "chatledger_seals",
    "chatledger_seal_heads",
    "chatledger_integrity_notes",
    "chatledger_export_positions",
    "chatledger_head_signatures",
)
"""The tables kept beside the events for the chain, the seals and the exporters."""

MAGIC = b"\xff"
"""Marks a stored state that starts with its link.

No output of the codec starts with 0xFF (JSON, the ASCII-JSON tag 0x01, the
compressor's tags 0x00 and 0x01), except a ciphertext, which is random: one
encrypted event of 256 written before chains starts with it too. The codec
tells those apart (the cipher refuses the stripped bytes; see
``PydanticMapper.unpack``).
"""
PREFIX_BYTES = len(MAGIC) + LINK_BYTES


def split_link(state: bytes) -> tuple[bytes | None, bytes]:
    """(link, the codec's bytes) of a stored state; (None, state) when it has no link."""
    if state[: len(MAGIC)] == MAGIC and len(state) >= PREFIX_BYTES:
        return bytes(state[len(MAGIC) : PREFIX_BYTES]), bytes(state[PREFIX_BYTES:])
    return None, state


@dataclass(frozen=True)
class DigestedStoredEvent(StoredEvent):
    """A stored event carrying the SHA-256 of its plain content (set by the mapper)."""

    digest: bytes = b""


def sqlite_chain_ddl(events_table: str) -> list[str]:
    """SQLite: create the chain and seal tables; mark where the chain starts (first time only)."""
    return [
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
        "CREATE TABLE IF NOT EXISTS chatledger_export_positions (name TEXT PRIMARY KEY, "
        "position INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS chatledger_head_signatures (originator_id TEXT PRIMARY KEY, "
        "originator_version INTEGER NOT NULL, signature TEXT NOT NULL)",
    ]


def postgres_chain_ddl(schema: str, events_table: str) -> list[sql.Composed]:
    """PostgreSQL: the same tables in the store's schema."""
    names = _postgres_names(schema, events_table)
    return [
        sql.SQL(statement).format(**names)
        for statement in (
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
            "CREATE TABLE IF NOT EXISTS {exports} (name text PRIMARY KEY, position bigint NOT NULL)",
            "CREATE TABLE IF NOT EXISTS {signed} (originator_id uuid PRIMARY KEY, "
            "originator_version bigint NOT NULL, signature text NOT NULL)",
        )
    ]


def _postgres_names(schema: str, events_table: str) -> dict[str, sql.Composable]:
    return {
        "start": sql.Identifier(schema, "chatledger_chain_start"),
        "seals": sql.Identifier(schema, "chatledger_seals"),
        "heads": sql.Identifier(schema, "chatledger_seal_heads"),
        "notes": sql.Identifier(schema, "chatledger_integrity_notes"),
        "exports": sql.Identifier(schema, "chatledger_export_positions"),
        "signed": sql.Identifier(schema, "chatledger_head_signatures"),
        "events": sql.Identifier(schema, events_table),
    }


def chain_events(
    stored_events: Sequence[StoredEvent],
    previous_of: Callable[[UUID, int], bytes | None],
    heads: HeadCache | None = None,
) -> tuple[list[StoredEvent], dict[UUID, tuple[int, bytes]]]:
    """The events to insert (each digested one with its link in front of its state), and the new heads.

    The previous link comes from ``heads`` (what this process committed
    last) when it is the version before, else from ``previous_of(id,
    version)``, which reads the stored link (None if the event has none).
    Give the returned heads to ``heads.update`` once the insert committed.
    """
    out: list[StoredEvent] = []
    last: dict[UUID, tuple[int, bytes]] = {}
    for event in stored_events:
        if not isinstance(event, DigestedStoredEvent) or not event.digest:
            out.append(event)
            continue
        key = event.originator_id
        assert isinstance(key, UUID)
        version = event.originator_version
        known = last.get(key) or (heads.get(key) if heads is not None else None)
        if known is not None and known[0] == version - 1:
            previous = known[1]
        else:
            previous = (previous_of(key, version - 1) if version > 1 else None) or GENESIS
        link = link_hash(key, version, event.topic, event.digest, previous)
        last[key] = (version, link)
        out.append(StoredEvent(key, version, event.topic, MAGIC + link + event.state))
    return out, last


class HeadCache:
    """The last link this process committed per conversation, so most inserts read none.

    Correct across processes: a version, once committed, never changes, and
    an entry is used only for the version right after it; a conversation
    written elsewhere meanwhile is at another version and gets read.
    """

    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._heads: dict[UUID, tuple[int, bytes]] = {}
        self._lock = threading.Lock()

    def get(self, key: UUID) -> tuple[int, bytes] | None:
        """The (version, link) committed last by this process, if remembered."""
        return self._heads.get(key)

    def clear(self) -> None:
        """Forget every head (after the database changed behind the store, e.g. a restore)."""
        with self._lock:
            self._heads.clear()

    def update(self, heads: dict[UUID, tuple[int, bytes]]) -> None:
        """Remember heads just committed (forgetting all when full: it is only a shortcut)."""
        with self._lock:
            if len(self._heads) + len(heads) > self._size:
                self._heads.clear()
            for key, head in heads.items():
                known = self._heads.get(key)
                if known is None or known[0] <= head[0]:
                    self._heads[key] = head


class ChainTables:
    """Reads and writes of the chain and seal tables, for verify and seal (one backend)."""

    def __init__(self, datastore: Any, events_table: str, backend: str) -> None:
        self.datastore = datastore
        self.backend = backend
        if backend == "postgres":
            self._names = _postgres_names(datastore.schema, events_table)
            self._names["position"] = sql.SQL("notification_id")
            self._names["prefix"] = sql.SQL(f"substring(e.state from 1 for {PREFIX_BYTES})")
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
            start="chatledger_chain_start",
            seals="chatledger_seals",
            heads="chatledger_seal_heads",
            notes="chatledger_integrity_notes",
            exports="chatledger_export_positions",
            signed="chatledger_head_signatures",
            events=self._events,
            position="rowid",
            prefix=f"substr(e.state, 1, {PREFIX_BYTES})",
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
        """Every conversation with an event."""
        found = self._run("SELECT DISTINCT originator_id FROM {events}")
        return {_conversation_key(row["originator_id"], "the log") for row in found}

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

    def heads(self) -> list[Head]:
        """Every chained conversation's last event and its link (one statement: a consistent moment)."""
        rows = self._run(
            "SELECT e.originator_id, e.originator_version, {prefix} AS prefix FROM {events} e "
            "JOIN (SELECT originator_id, MAX(originator_version) AS v FROM {events} "
            "GROUP BY originator_id) h "
            "ON e.originator_id = h.originator_id AND e.originator_version = h.v"
        )
        heads = []
        for row in rows:
            link, _ = split_link(bytes(row["prefix"]))
            if link is not None:
                key = _conversation_key(row["originator_id"], "the log")
                heads.append(Head(key, row["originator_version"], link))
        return heads

    def seals(self) -> list[Seal]:
        """Every seal, oldest first."""
        rows = self._run("SELECT seq, body, signature FROM {seals} ORDER BY seq")
        seals = []
        for row in rows:
            try:
                seals.append(
                    Seal.from_json({**json.loads(row["body"]), "signature": row["signature"]})
                )
            except (ValueError, TypeError, KeyError) as error:
                raise StoredDataError(
                    f"seal {row['seq']} cannot be read ({type(error).__name__}: "
                    f"{str(error)[:200]}): the seals were altered"
                ) from error
        return seals

    def sealed(self) -> set[int]:
        """The seals (by number) that heads are stored for."""
        return {int(row["seq"]) for row in self._run("SELECT DISTINCT seq FROM {heads}")}

    def seal_heads(self, seq: int) -> list[Head]:
        """The heads seal ``seq`` covers."""
        rows = self._run(
            "SELECT originator_id, originator_version, hash FROM {heads} WHERE seq = ?", (seq,)
        )
        return [
            Head(
                _conversation_key(row["originator_id"], f"seal {seq}"),
                row["originator_version"],
                bytes(row["hash"]),
            )
            for row in rows
        ]

    def export_position(self, name: str) -> int:
        """How far the exporter ``name`` got in the log (0: nowhere yet)."""
        rows = self._run("SELECT position FROM {exports} WHERE name = ?", (name,))
        return int(rows[0]["position"]) if rows else 0

    def set_export_position(self, name: str, position: int) -> None:
        """Record that the exporter ``name`` sent everything up to ``position``."""
        with self.datastore.transaction(commit=True) as c:
            c.execute(self._statement("DELETE FROM {exports} WHERE name = ?"), (name,))
            c.execute(
                self._statement("INSERT INTO {exports} (name, position) VALUES (?, ?)"),
                (name, position),
            )

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

    def head_signatures(self) -> dict[UUID, HeadSignature]:
        """The newest signed head of each conversation (signed writes; see ``domain.signed_writes``)."""
        rows = self._run("SELECT originator_id, originator_version, signature FROM {signed}")
        return {
            UUID(str(row["originator_id"])): HeadSignature(
                int(row["originator_version"]), str(row["signature"])
            )
            for row in rows
        }

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


def _conversation_key(stored: Any, where: str) -> UUID:
    """A stored conversation id; StoredDataError for one that is no UUID (a hand edit)."""
    try:
        return UUID(str(stored))
    except ValueError:
        raise StoredDataError(
            f"{where} holds a conversation id that is no UUID ({str(stored)[:60]!r}): it was altered"
        ) from None
