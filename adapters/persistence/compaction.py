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
  ``CHECKPOINT`` so the files hold the result. "Before the erasure" means
  before its end (the grant ledgers are rewritten in transactions after its
  own), and a transaction of *another* database counts too: every snapshot
  taken on the server since counts it as running, the rewrite's own
  included, so the rewrite would copy the erased rows as "not removable
  yet". The rewrite's own report (``VERBOSE``: the dead row versions it
  kept) is checked: a table that kept some while anything older than the
  erasure's end held on is rewritten again, or the answer is pending. The
  log's tables are among them only when the erased events were not under a
  data key (no cipher key): under one, destroying the key (its row
  rewritten away) shreds them.

Either answers a ``Compaction``: done, or pending with the cause and how to
finish (``store.operations.finish_erasure()``, ``chatledger finish-erasure``),
and what chatledger cannot reach at all.
"""

from __future__ import annotations

import re
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


def compact_postgres(
    config: StoreConfig, wait: float, tables: tuple[str, ...] = STORE_TABLES
) -> Compaction:
    """Rewrite the store's tables (VACUUM FULL) and checkpoint, once the newest erasure's readers are gone."""
    schema = config.schema or "public"
    deadline = time.monotonic() + max(wait, 0.0)
    cleaned: list[str] = []
    problems: list[str] = []
    holders: list[str] = []
    with direct_connection(config) as db:
        row = db.execute(
            sql.SQL("SELECT xmin::text FROM {} ORDER BY erased_at DESC LIMIT 1").format(
                sql.Identifier(schema, ERASURES_TABLE)
            )
        ).fetchone()
        db.execute(
            "SELECT set_config('lock_timeout', %s, false)", (f"{max(wait, 0.1) * 1000:.0f}",)
        )
        # Not the erasure's own transaction id (row[0]): an erasure goes on in transactions of
        # its own (the grant ledgers rewritten, the read models caught up), each deleting content.
        # Every one of them has committed by now, so it is older than this snapshot's xmax.
        since = db.execute(_SINCE).fetchone()[0] if row else None
        try:
            holders, kept = _compact(db, schema, tables, since, deadline)
            if kept is not None:
                cleaned.append(
                    f"tables rewritten with their indexes (VACUUM FULL): {', '.join(tables)}"
                    + _newer(kept, holders)
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
            f"these still see them: {'; '.join(holders)}; {FINISH}",
        )
    pending = "; ".join(problems) if problems else None
    return Compaction(not problems, tuple(cleaned), pending, outside_of("postgres"))


def _compact(
    db: Any, schema: str, tables: tuple[str, ...], xid: str | None, deadline: float
) -> tuple[list[str], dict[str, int] | None]:
    """Rewrite ``tables`` once nothing older than ``xid`` runs; who still does, and the rows VACUUM kept.

    ``xid`` is the first transaction id after the erasure's (None: nothing
    was erased). VACUUM's report is the check: a table whose rewrite kept
    dead row versions is rewritten again (until ``deadline``) while something
    older than ``xid`` is found to hold them. When nothing is, they are
    versions changed since (a live store's writes, still seen by a
    snapshot): measured, a rewrite beside three writers kept 1-3 nearly
    every time, so they cannot be waited away. The kept counts are ``None``
    when nothing was rewritten (the holders stayed past ``deadline``).
    """
    todo, kept = tables, None
    while True:
        holders = _holders(db, xid, deadline) if xid is not None else []
        if holders:  # a rewrite now would wait for them, and every session behind it
            return holders, kept
        kept = {**(kept or {}), **dict.fromkeys(todo, 0), **_rewrite(db, schema, todo)}
        todo = tuple(table for table, count in kept.items() if count)
        if not todo or xid is None:
            return [], kept
        holders = _holders(db, xid, time.monotonic())  # appeared meanwhile (a standby's feedback)
        if not holders or time.monotonic() >= deadline:
            return holders, kept


def _newer(kept: dict[str, int], holders: list[str]) -> str:
    """What the rewrite kept, when it kept dead row versions that nothing older than the erasure's end sees."""
    left = {table: count for table, count in kept.items() if count}
    if not left or holders:
        return ""
    return (
        "; dead row versions newer than the erasure kept (changed since, still seen by a "
        f"snapshot: no erased content): {', '.join(f'{table} ({count})' for table, count in left.items())}"
    )


_SINCE = "SELECT pg_snapshot_xmax(pg_current_snapshot())::xid::text"
"""The first transaction id not yet given out: every transaction of an erasure that has finished is older."""

_HOLDERS = """
WITH erasure AS (SELECT %(xid)s::text::xid AS xid)
SELECT 'backend ' || pid || coalesce(' (' || nullif(application_name, '') || ')', '')
       || coalesce(' from ' || host(client_addr), '')
       || coalesce(', in a transaction since ' || xact_start::text, '')
       || ' (a snapshot older than the end of the erasure)'
FROM pg_stat_activity, erasure
WHERE pid <> pg_backend_pid() AND (datname = current_database() OR datname IS NULL)
  AND greatest(age(backend_xmin), age(backend_xid)) > age(erasure.xid)
UNION ALL
SELECT 'backend ' || pid || coalesce(' (' || nullif(application_name, '') || ')', '')
       || ' of database ' || quote_ident(datname) || coalesce(' from ' || host(client_addr), '')
       || coalesce(', in a transaction since ' || xact_start::text, '')
       || ' (a transaction older than the end of the erasure: every snapshot taken since on the server, '
       || 'VACUUM''s own included, counts it as running)'
FROM pg_stat_activity, erasure
WHERE datname <> current_database() AND age(backend_xid) > age(erasure.xid)
UNION ALL
SELECT 'replication slot ' || slot_name FROM pg_replication_slots, erasure
WHERE xmin IS NOT NULL AND age(xmin) > age(erasure.xid)
UNION ALL
SELECT 'prepared transaction ' || quote_literal(gid) || ' of database ' || quote_ident(database)
FROM pg_prepared_xacts, erasure WHERE age(transaction) > age(erasure.xid)
UNION ALL
SELECT 'vacuum_defer_cleanup_age (' || setting || ' transactions)'
FROM pg_settings, erasure
WHERE name = 'vacuum_defer_cleanup_age' AND setting::bigint > age(erasure.xid)
UNION ALL
SELECT %(unnamed)s FROM erasure
WHERE age(pg_snapshot_xmin(pg_current_snapshot())::xid) > age(erasure.xid)
"""
"""What may still see the rows erased by the transactions before ``xid``, so VACUUM may not remove them:
sessions of this database (or of none: a WAL sender) whose snapshot or transaction is older than
``xid``; in any database, a transaction or prepared transaction older than it (every snapshot taken
since, in this database too, counts it as running: VACUUM FULL's own would keep the erased rows);
replication slots; ``vacuum_defer_cleanup_age``. The last row holds while any transaction older than
``xid`` runs on the server, named above or not (one this role may not see)."""

_UNNAMED = (
    "a transaction older than the end of the erasure, still running on the server "
    "(pg_stat_activity.backend_xid names it to a superuser)"
)


def _holders(db: Any, xid: str, deadline: float) -> list[str]:
    """Who may still see rows deleted before ``xid``, after waiting until ``deadline`` for them to finish."""
    while True:
        rows = [name for (name,) in db.execute(_HOLDERS, {"xid": xid, "unnamed": _UNNAMED})]
        holders = [name for name in rows if name != _UNNAMED] or rows
        if not holders or time.monotonic() >= deadline:
            return holders
        time.sleep(0.05)


def _rewrite(db: Any, schema: str, tables: tuple[str, ...]) -> dict[str, int]:
    """Rewrite each table with its indexes; the dead row versions VACUUM had to keep, by table.

    ``VACUUM (FULL, VERBOSE)`` says, per table, how many dead row versions
    "cannot be removed yet" (a snapshot may still see them): those stay in
    the new file, bytes and all.
    """
    notices: list[tuple[str | None, str]] = []

    def collect(notice: Any) -> None:  # the notice is valid only during the call
        notices.append((notice.source_function, notice.message_detail or ""))

    kept: dict[str, int] = {}
    db.add_notice_handler(collect)
    try:
        for table in tables:
            notices.clear()
            db.execute(sql.SQL("VACUUM (FULL, VERBOSE) {}").format(sql.Identifier(schema, table)))
            count = sum(_kept(function, detail) for function, detail in notices)
            if count:
                kept[table] = count
    finally:
        db.remove_notice_handler(collect)
    return kept


def _kept(function: str | None, detail: str) -> int:
    """Dead row versions kept, from VACUUM FULL's notice (its DETAIL begins with their number)."""
    if function != "copy_table_data" and "cannot be removed yet" not in detail:
        return 0
    found = re.match(r"\s*(\d+)", detail)
    return int(found.group(1)) if found else 0
