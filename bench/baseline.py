"""Raw baselines: the same rows written with plain ``executemany``, one row per chunk.

Row shape: ``(conversation_id, seq, JSON text)`` into a table with primary key
``(conversation_id, seq)``; the user message of each turn is one more row. Two
commit cadences:

* ``turn``: one transaction per turn (the cheapest a store may reasonably be);
* ``store``: exactly where the store committed in the same run (its commit points,
  recorded turn by turn by ``ingest.CommitPoints``: the user message with the stream
  open, then each batch, the last with the close), so the ratio store/raw isolates
  the library's own cost from the transactions. Without recorded points (``--raw-only``)
  it falls back to the store's rule for plain chunks alone: a commit every
  ``BATCH_CHUNKS`` and right after every boundary chunk.

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

from chatledger.domain.stream_rules import is_boundary  # the store's own commit points

Cadence = Literal["turn", "store"]
CADENCES: tuple[Cadence, ...] = ("turn", "store")
BATCH_CHUNKS = 64  # the fallback rule's batch size (the store's default before it batched by age)
Row = tuple[str, int, str]
_CREATE = (
    "CREATE TABLE {table} (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " chunk TEXT NOT NULL, PRIMARY KEY (conversation_id, seq))"
)


def batches(
    chunks: list[JSON], cadence: Cadence, points: list[int] | None = None
) -> Iterator[list[JSON]]:
    """Split one reply into the groups committed together under ``cadence``.

    ``points`` (store cadence): how many chunks had been appended at each of the
    store's commits in this turn; the first group is committed with the user row.
    """
    if cadence == "turn":
        yield chunks
        return
    if points is not None:
        start = 0
        for point in points:  # one group per store commit, even an empty one (the close)
            yield chunks[start:point]
            start = point
        if start < len(chunks):
            yield chunks[start:]
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
    points: list[list[int]] | None = None,
) -> IngestResult:
    busy, chunks, turns, commits = 0.0, 0, 0, 0
    at = iter(points) if points else None
    for n, conv in enumerate(convs, 1):
        t0 = time.perf_counter()
        seq = 0
        for turn in conv.turns:
            rows = [(conv.chat_id, seq, json.dumps(turn.user_message))]
            seq += 1
            for batch in batches(turn.chunks, cadence, next(at) if at else None):
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
    path: Path,
    convs: Iterable[Conversation],
    cadence: Cadence,
    synchronous: str = "FULL",
    points: list[list[int]] | None = None,
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
        return _drive(convs, cadence, lambda rows: conn.executemany(sql, rows), conn.commit, points)
    finally:
        conn.close()


def ingest_raw_postgres(
    url: str,
    schema: str,
    convs: Iterable[Conversation],
    cadence: Cadence,
    points: list[list[int]] | None = None,
) -> IngestResult:
    """psycopg 3 ``executemany`` into a fresh table in ``schema``."""
    table = f'"{schema}".raw_chunks'
    with psycopg.connect(url) as conn:
        conn.execute(_CREATE.format(table=table))
        conn.commit()
        sql = f"INSERT INTO {table} (conversation_id, seq, chunk) VALUES (%s, %s, %s)"
        with conn.cursor() as cur:
            return _drive(
                convs, cadence, lambda rows: cur.executemany(sql, rows), conn.commit, points
            )
