"""Size measurement: bytes on disk after ingest, per turn.

SQLite: the file plus its WAL after ``PRAGMA wal_checkpoint(TRUNCATE)``, and the
live pages (``page_count * page_size`` minus the freelist). PostgreSQL: the sum
of ``pg_total_relation_size`` (heap, TOAST and indexes) over every table in the
schema. Call only after the store is closed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import psycopg


@dataclass(frozen=True)
class SizeResult:
    """Bytes used by one ingested database; ``live_bytes`` excludes free pages (SQLite)."""

    file_bytes: int
    live_bytes: int
    tables: int

    def per_turn(self, turns: int) -> tuple[float, float]:
        """(file bytes per turn, live bytes per turn)."""
        return self.file_bytes / turns, self.live_bytes / turns


def sqlite_size(path: Path) -> SizeResult:
    """Checkpoint the WAL into the file, then measure the file, the WAL and the live pages."""
    if not path.exists():
        raise FileNotFoundError(f"no SQLite file at {path}: does the store read the URL as given?")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[
            0
        ]
    finally:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    file_bytes = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return SizeResult(file_bytes, (pages - free) * page_size, tables)


def postgres_size(url: str, schema: str) -> SizeResult:
    """Total relation size (with TOAST and indexes) of every table in ``schema``."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0), count(*)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (schema,),
        ).fetchone()
    assert row is not None
    total, tables = int(row[0]), int(row[1])
    return SizeResult(total, total, tables)
