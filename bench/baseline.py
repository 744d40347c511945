"""Raw baselines: the same rows written with plain ``executemany``, one row per chunk.

Row shape: ``(conversation_id, seq, JSON text)`` into a table with primary key
``(conversation_id, seq)``; the user message of each turn is one more row. Two
commit cadences:

* ``turn``: one transaction per turn (the cheapest a store may reasonably be);
* ``store``: the store's default cadence: a commit every 64 chunks and right after
  a chunk others act on (tool input/output, approval request, finish-step, finish,
  error, abort), so the ratio store/raw isolates the library's own cost.

SQLite runs in WAL mode with ``synchronous=FULL`` by default (sqlite3's default,
which ``eventsourcing`` 9.5 leaves in place; ``run.py --raw-sqlite-synchronous
NORMAL`` to match a store that lowers it); PostgreSQL with default settings.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Literal

import psycopg
from ingest import IngestResult
from progress import log
from workload import JSON, Conversation

from chatledger.domain.aggregate import is_boundary  # the store's own commit points

Cadence = Literal["turn", "store"]
CADENCES: tuple[Cadence, ...] = ("turn", "store")
BATCH_CHUNKS = 64  # the store's default batch size
Row = tuple[str, int, str]
_CREATE = (
    "CREATE TABLE {table} (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " chunk TEXT NOT NULL, PRIMARY KEY (conversation_id, seq))"
)


def batches(chunks: list[JSON], cadence: Cadence) -> Iterator[list[JSON]]:
    """Split one reply into the groups committed together under ``cadence``."""
    if cadence == "turn":
        yield chunks
        return
    batch: list[JSON] = []
    for chunk in chunks:
        batch.append(chunk)
        if len(batch) >= BATCH_CHUNKS or is_boundary(chunk):
            yield batch
            batch = []
    if batch:
        yield batch


def _drive(
    convs: Iterable[Conversation],
    cadence: Cadence,
    insert: Callable[[list[Row]], object],
    commit: Callable[[], object],
) -> IngestResult:
    busy, chunks, turns, commits = 0.0, 0, 0, 0
    for n, conv in enumerate(convs, 1):
        t0 = time.perf_counter()
        seq = 0
        for turn in conv.turns:
            rows = [(conv.chat_id, seq, json.dumps(turn.user_message))]
            seq += 1
            for batch in batches(turn.chunks, cadence):
                for chunk in batch:
                    rows.append((conv.chat_id, seq, json.dumps(chunk)))
                    seq += 1
                insert(rows)
                commit()
                commits += 1
                rows = []
        busy += time.perf_counter() - t0
        chunks += conv.chunk_count
        turns += len(conv.turns)
        if n % 50 == 0:
            log(f"  raw/{cadence}: {n} conversations, {chunks / busy:,.0f} chunks/s so far")
    return IngestResult(chunks, turns, busy, commits=commits)


def ingest_raw_sqlite(
    path: Path, convs: Iterable[Conversation], cadence: Cadence, synchronous: str = "FULL"
) -> IngestResult:
    """sqlite3 ``executemany`` into a fresh file at ``path`` (WAL, ``PRAGMA synchronous``)."""
    if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(f"not a PRAGMA synchronous level: {synchronous!r}")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute(_CREATE.format(table="raw_chunks"))
        conn.commit()
        sql = "INSERT INTO raw_chunks (conversation_id, seq, chunk) VALUES (?, ?, ?)"
        return _drive(convs, cadence, lambda rows: conn.executemany(sql, rows), conn.commit)
    finally:
        conn.close()


def ingest_raw_postgres(
    url: str, schema: str, convs: Iterable[Conversation], cadence: Cadence
) -> IngestResult:
    """psycopg 3 ``executemany`` into a fresh table in ``schema``."""
    table = f'"{schema}".raw_chunks'
    with psycopg.connect(url) as conn:
        conn.execute(_CREATE.format(table=table))
        conn.commit()
        sql = f"INSERT INTO {table} (conversation_id, seq, chunk) VALUES (%s, %s, %s)"
        with conn.cursor() as cur:
            return _drive(convs, cadence, lambda rows: cur.executemany(sql, rows), conn.commit)
