"""Where the bytes go: a store's size per turn, table by table (and index by index).

Writes the peers' workload (``--conversations`` x ``--turns``, turn by turn
across all conversations, as ``peers.py`` does), reads every conversation once
(which brings the read models up to date, as ``peers.py``'s load does), closes
the store, then prints each table's and index's bytes per turn: SQLite from the
``dbstat`` virtual table (pages in use, and the payload in them), PostgreSQL
from ``pg_total_relation_size`` per table and ``pg_relation_size`` per index,
with the dead tuples the table still holds (rows replaced or deleted and not
yet vacuumed). Also the number of rows and their mean payload.

    python bench/bytes.py --backend sqlite
    python bench/bytes.py --backend postgres --conversations 50 --turns 20
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from typing import Any

import psycopg
from backends import BACKENDS, DEFAULT_POSTGRES_URL, FreshDb, fresh_db
from peer_stores import run_chatledger
from workload import conversation


def _sqlite_rows(db: FreshDb, turns: int) -> list[tuple[str, float, float, int]]:
    assert db.sqlite_path is not None
    conn = sqlite3.connect(db.sqlite_path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        found = conn.execute(
            "SELECT name, sum(pgsize), sum(payload) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
        counts: dict[str, int] = {}
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            counts[name] = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    rows = [(n, size / turns, payload / turns, counts.get(n, -1)) for n, size, payload in found]
    rows.append(("(free pages)", free * page / turns, 0.0, free))
    return rows


def _postgres_rows(db: FreshDb, turns: int) -> list[tuple[str, float, float, int]]:
    assert db.postgres_url is not None and db.schema is not None
    out: list[tuple[str, float, float, int]] = []
    with psycopg.connect(db.postgres_url) as conn:
        tables = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid), pg_total_relation_size(c.oid)"
            " - pg_relation_size(c.oid) - pg_indexes_size(c.oid), c.oid"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY 2 DESC",
            (db.schema,),
        ).fetchall()
        for name, heap, toast, oid in tables:
            stat: Any = conn.execute(
                "SELECT n_live_tup, n_dead_tup FROM pg_stat_user_tables WHERE relid = %s", (oid,)
            ).fetchone()
            live, dead = stat or (0, 0)
            out.append((f"{name} (heap; {dead} dead rows)", heap / turns, 0.0, int(live)))
            if toast:
                out.append((f"{name} (TOAST)", toast / turns, 0.0, -1))
            for index, size in conn.execute(
                "SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x"
                " JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = %s",
                (oid,),
            ).fetchall():
                out.append((f"  index {index}", size / turns, 0.0, -1))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument(
        "--no-read", action="store_true", help="do not read the conversations (the log alone)"
    )
    args = parser.parse_args(argv)
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(args.turns) for c in convs]
    samples = [] if args.no_read else [c.chat_id for c in convs]
    with fresh_db(args.backend, args.postgres_url, name="bytes") as db:
        timing = run_chatledger(db, order, samples)
        rows = (_sqlite_rows if args.backend == "sqlite" else _postgres_rows)(db, timing.turns)
    total = sum(size for name, size, _p, _c in rows if not name.startswith("  "))
    total += sum(size for name, size, _p, _c in rows if name.startswith("  "))
    print(f"{args.backend}: {total / 1024:.2f} KB/turn in all ({timing.turns} turns)\n")
    print("| table or index | bytes/turn | payload bytes/turn | rows |\n|---|---|---|---|")
    for name, size, payload, count in rows:
        shown = "" if count < 0 else f"{count:,}"
        print(f"| {name} | {size:,.0f} | {payload:,.0f} | {shown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
