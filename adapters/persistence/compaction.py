"""After an erasure: removing the erased content from the database's files, or saying what still holds it.

Deleting a row does not remove its bytes from disk:

* SQLite keeps old page images in the write-ahead log (``-wal``) until a
  checkpoint copies the new pages into the file and the log is truncated.
  Neither can happen while another connection has a read open that began
  before the erasure (a ``serve`` following a stream, a backup in progress,
  a ``sqlite3`` shell): its snapshot still needs the old pages.
  ``compact_sqlite`` waits for such readers within a bound, then checkpoints
  and truncates the WAL, and checks that the WAL is empty.
* PostgreSQL keeps every dead row version (of each deleted or updated row)
  in the table's pages. Overwriting a row before deleting it does not help:
  an UPDATE writes a new version and leaves the old one dead, content and
  all. A plain ``VACUUM`` is not enough either (measured): it frees the dead
  versions but leaves their bytes in the page's free space until something
  overwrites them, and a GIN index keeps its words. Only a rewrite removes
  them: ``compact_postgres`` waits (within a bound) for the transactions
  whose snapshots predate the erasure, rewrites the tables whose dead rows
  hold readable content with their indexes (``VACUUM FULL``: each table is
  locked while it is rewritten, the time of copying it) and runs a
  ``CHECKPOINT`` so the files hold the result. The log's tables are among
  them only when the erased events were not under a data key (no cipher
  key): under one, destroying the key (its row rewritten away) shreds them.

Either answers a ``Compaction``: done, or pending with the cause and how to
finish (``store.operations.finish_erasure()``, ``chatledger finish-erasure``),
and what chatledger cannot reach at all.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from chatledger.adapters.persistence.blobs import BLOBS_TABLE
from chatledger.adapters.persistence.config import StoreConfig
from chatledger.adapters.persistence.data_keys import ERASURES_TABLE, KEYS_TABLE
from chatledger.adapters.persistence.read_models.dialect import QUARANTINE, SEARCH_TABLE, TABLES
from chatledger.adapters.persistence.schema import GRANTS_TABLE, STORE_TABLES, direct_connection

__all__ = [
    "DEFAULT_WAIT_SECONDS",
    "FINISH",
    "LOG_TABLES",
    "PURGED_TABLES",
    "Compaction",
    "compact_postgres",
    "compact_sqlite",
    "outside_of",
]

PURGED_TABLES = (*TABLES.values(), QUARANTINE, KEYS_TABLE, GRANTS_TABLE)
"""PostgreSQL tables whose dead rows hold readable content after an erasure: the read models
(sealed with the store key at most), the data keys (each would decrypt its conversation) and the
grant ledgers (their events that named the conversation, rewritten)."""
LOG_TABLES = ("chatledger_events", "chatledger_snapshots", BLOBS_TABLE)
"""The log's tables (and its attachments): their dead rows are readable only when not under a data
key (a store without a cipher key, or events from before data keys); under one, the destroyed key
shreds them."""


DEFAULT_WAIT_SECONDS = 5.0
"""How long erasure waits for readers that still see the erased content, by default."""

FINISH = (
    "once they have finished, run 'chatledger finish-erasure' "
    "(or call store.operations.finish_erasure())"
)
"""How to complete a pending compaction."""

SQLITE_OUTSIDE = (
    "copies of the database file made before the erasure (backups, snapshots of the disk)",
    "freed blocks of the file system (the WAL is truncated, not overwritten)",
)
POSTGRES_OUTSIDE = (
    "PostgreSQL's write-ahead log (pg_wal) until its segments are recycled and overwritten",
    "WAL archives (archive_command), streaming and logical replicas",
    "base backups and dumps made before the erasure",
    "freed blocks of the file system (the rewritten tables' old files are unlinked)",
)


def outside_of(backend: str) -> tuple[str, ...]:
    """What a store on ``backend`` cannot erase from: copies outside its files."""
    return (
        *(POSTGRES_OUTSIDE if backend == "postgres" else SQLITE_OUTSIDE),
        "bundles written by 'chatledger export' and spans sent by 'export-otel'",
    )


@dataclass(frozen=True)
class Compaction:
    """Where the erased content is, on disk, after an erasure's cleanup."""

    done: bool
    """True only when no file chatledger controls holds the erased content any more."""
    cleaned: tuple[str, ...]
    """What was done (checkpoint, truncation, VACUUM, reindex...)."""
    pending: str | None
    """When not done: what still holds the content, why, and how to finish."""
    outside: tuple[str, ...]
    """Copies chatledger cannot reach (backups, replicas, archives): the operator's to handle."""

    @property
    def status(self) -> str:
        """``done`` or ``pending``."""
        return "done" if self.done else "pending"

    def to_json(self) -> dict[str, Any]:
        """The compaction as JSON (the HTTP routes' ``files`` field)."""
        return {
            "status": self.status,
            "cleaned": list(self.cleaned),
            "pending": self.pending,
            "outside": list(self.outside),
        }

    def lines(self) -> list[str]:
        """The compaction as the receipt's lines of text (the CLI prints them)."""
        head = f"files: {self.status}" + (f": {'; '.join(self.cleaned)}" if self.cleaned else "")
        return [
            head,
            *([f"PENDING: {self.pending}"] if self.pending else []),
            "outside the store (yours to handle): " + "; ".join(self.outside),
        ]

    @staticmethod
    def of_all(parts: list[Compaction]) -> Compaction | None:
        """The compaction of several databases (a sharded store): done only when each is."""
        if not parts:
            return None
        pending = [p.pending for p in parts if p.pending]
        return Compaction(
            all(p.done for p in parts),
            tuple(dict.fromkeys(c for p in parts for c in p.cleaned)),
            "; ".join(pending) if pending else None,
            tuple(dict.fromkeys(o for p in parts for o in p.outside)),
        )


def compact_sqlite(datastore: Any, path: Path, wait: float) -> Compaction:
    """Optimise the full-text index, then checkpoint and truncate the WAL, waiting ``wait`` s for readers."""
    with datastore.transaction(commit=True) as c:
        c.execute(f"INSERT INTO {SEARCH_TABLE}({SEARCH_TABLE}) VALUES ('optimize')")
    cleaned = ["full-text index optimised (deleted words merged away)"]
    deadline = time.monotonic() + max(wait, 0.0)
    with closing(sqlite3.connect(path, timeout=max(wait, 0.0), isolation_level=None)) as db:
        while True:
            busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            wal = path.with_name(path.name + "-wal")
            left = wal.stat().st_size if wal.exists() else 0
            if not busy and left == 0:
                cleaned.append("WAL checkpointed into the file and truncated")
                return Compaction(True, tuple(cleaned), None, outside_of("sqlite"))
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
    pending = (
        f"the WAL ({wal.name}, {left:,} bytes) and the file's old pages still hold erased "
        f"content: another connection kept a read open past {wait:g} s (a 'serve' following "
        "a stream, a backup in progress, a sqlite3 shell), so the WAL could not be "
        f"checkpointed and truncated; {FINISH}"
    )
    return Compaction(False, tuple(cleaned), pending, outside_of("sqlite"))


_HOLDERS = """
SELECT 'backend ' || pid || coalesce(' (' || nullif(application_name, '') || ')', '')
       || coalesce(' from ' || host(client_addr), '')
       || coalesce(', in a transaction since ' || xact_start::text, '')
FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND age(backend_xmin) >= age(%(xid)s::text::xid)
  AND (datname = current_database() OR datname IS NULL)
UNION ALL
SELECT 'replication slot ' || slot_name FROM pg_replication_slots
WHERE xmin IS NOT NULL AND age(xmin) >= age(%(xid)s::text::xid)
UNION ALL
SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts
WHERE age(transaction) >= age(%(xid)s::text::xid) AND database = current_database()
"""
"""What still sees the rows erased by transaction ``xid``, so VACUUM may not remove them: sessions and
prepared transactions of this database (another database's do not hold its rows back; a WAL sender,
of no database, may), and replication slots."""


def compact_postgres(
    config: StoreConfig, wait: float, tables: tuple[str, ...] = STORE_TABLES
) -> Compaction:
    """Rewrite the store's tables (VACUUM FULL) and checkpoint, once the newest erasure's readers are gone."""
    schema = config.schema or "public"
    cleaned: list[str] = []
    problems: list[str] = []
    with direct_connection(config) as db:
        row = db.execute(
            sql.SQL("SELECT xmin::text FROM {} ORDER BY erased_at DESC LIMIT 1").format(
                sql.Identifier(schema, ERASURES_TABLE)
            )
        ).fetchone()
        holders = _holders(db, row[0], wait) if row else []
        db.execute(
            "SELECT set_config('lock_timeout', %s, false)", (f"{max(wait, 0.1) * 1000:.0f}",)
        )
        try:
            if not holders:  # else the rewrite would wait for them, and every session behind it
                _rewrite(db, schema, tables)
                cleaned.append(
                    f"tables rewritten with their indexes (VACUUM FULL): {', '.join(tables)}"
                )
        except psycopg.errors.LockNotAvailable:
            problems.append(
                f"tables of the store: another session held a lock on one past {wait:g} s "
                f"(a long transaction, a running VACUUM or DDL); {FINISH}"
            )
        try:
            db.execute("CHECKPOINT")
            cleaned.append("CHECKPOINT (the cleaned pages written to the relation files)")
        except psycopg.errors.InsufficientPrivilege:
            problems.append(
                "the relation files until PostgreSQL's next checkpoint (checkpoint_timeout): "
                "CHECKPOINT needs a superuser or the pg_checkpoint role"
            )
    if holders:
        problems.insert(
            0,
            "dead row versions of the erased content, which VACUUM may not remove while "
            f"{', '.join(holders)} still see(s) them (a snapshot older than the erasure); "
            f"{FINISH}",
        )
    pending = "; ".join(problems) if problems else None
    return Compaction(not problems, tuple(cleaned), pending, outside_of("postgres"))


def _rewrite(db: Any, schema: str, tables: tuple[str, ...]) -> None:
    """Rewrite each table with its indexes: no dead row's bytes are left in a page."""
    for table in tables:
        db.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(schema, table)))


def _holders(db: Any, xid: str, wait: float) -> list[str]:
    """Who still sees transaction ``xid``'s deleted rows, after waiting up to ``wait`` s for them to finish."""
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        holders = [name for (name,) in db.execute(_HOLDERS, {"xid": xid}).fetchall()]
        if not holders or time.monotonic() >= deadline:
            return holders
        time.sleep(0.05)
