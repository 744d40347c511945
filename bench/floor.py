"""This box's floor for writing a turn, measured in the same run as chatledger and its peer.

The peers' shape (``peers.py``): turn by turn across all conversations, each
turn the user message and the reply's chunks as the useChat server records
them. Measured per turn, in one process, in rotated order each round:

- the steps a store that keeps every chunk with a hash chain cannot avoid,
  each alone: one transaction inserting one row (the turn, already encoded);
  encoding the turn as JSON; SHA-256 over it; touching each chunk once in
  Python; and, for reference, zlib with chatledger's preset dictionary;
- **the floor store**: all of those a store needs, end to end, in one loop
  (every chunk kept, encoded, chained with SHA-256 to the previous turn, one
  row and one transaction per turn, no compression): what a minimal Python
  design pays on this box;
- the best per-turn peer (OpenAI Agents ``SQLiteSession`` on SQLite,
  ``SQLAlchemySession`` over asyncpg on PostgreSQL: one ``add_items`` per
  turn, final items only) and chatledger (every chunk through
  ``open_stream``/``append``/``close``, the store's defaults).

Every figure is also given as a multiple of the floor store measured in the
same round (median over rounds), and chatledger against the peer. Wall time
(``ms/turn``) and this process's CPU time (steadier on a shared machine; it
leaves out the PostgreSQL server) are both reported, with the 1-minute load
average before and after each round.

    python bench/floor.py --backend sqlite --rounds 3
    python bench/floor.py --backend all --conversations 100 --turns 20 --markdown
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import peer_stores as ps
import psycopg
import pydantic_core
from backends import BACKENDS, DEFAULT_POSTGRES_URL, FreshDb, fresh_db, postgres_available
from progress import log
from stats import median
from workload import conversation

Measure = Callable[[FreshDb, ps.WriteOrder], ps.Timing]


def _timed(order: ps.WriteOrder, step: Callable[[str, Any], object]) -> ps.Timing:
    c0, t0 = time.process_time(), time.perf_counter()
    for chat, turn in order:
        step(chat, turn)
    return ps.Timing(time.perf_counter() - t0, len(order), [], time.process_time() - c0)


def _payload(turn: Any) -> list[Any]:
    return [turn.user_message, *turn.chunks]


class _Rows:
    """One table ``turns(chat, seq, body)`` and a transaction per insert, on either backend."""

    def __init__(self, db: FreshDb) -> None:
        self.sqlite = db.sqlite_path is not None
        if self.sqlite:
            # chatledger's SQLite settings: WAL, synchronous=NORMAL, autocommit off.
            self.conn: Any = sqlite3.connect(str(db.sqlite_path), isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.sql = "INSERT INTO turns VALUES (?, ?, ?)"
        else:
            self.conn = psycopg.connect(str(db.postgres_url), options=f"-c search_path={db.schema}")
            self.sql = "INSERT INTO turns VALUES (%s, %s, %s)"
        self.conn.execute(
            "CREATE TABLE turns (chat TEXT NOT NULL, seq INTEGER NOT NULL, body BYTEA NOT NULL,"
            " PRIMARY KEY (chat, seq))"
        )
        if not self.sqlite:
            self.conn.commit()
        self.seq: dict[str, int] = {}

    def insert(self, chat: str, body: bytes) -> None:
        seq = self.seq[chat] = self.seq.get(chat, 0) + 1
        if self.sqlite:
            self.conn.execute("BEGIN")
            self.conn.execute(self.sql, (chat, seq, body))
            self.conn.execute("COMMIT")
        else:
            self.conn.execute(self.sql, (chat, seq, body))
            self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def _transaction(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    bodies = {id(turn): pydantic_core.to_json(_payload(turn)) for _, turn in order}
    rows = _Rows(db)
    try:
        return _timed(order, lambda chat, turn: rows.insert(chat, bodies[id(turn)]))
    finally:
        rows.close()


def _encode(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    return _timed(order, lambda chat, turn: pydantic_core.to_json(_payload(turn)))


def _sha256(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    bodies = {id(turn): pydantic_core.to_json(_payload(turn)) for _, turn in order}
    return _timed(order, lambda chat, turn: hashlib.sha256(bodies[id(turn)]).digest())


def _touch(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    kept: list[Any] = []

    def step(chat: str, turn: Any) -> None:
        kept.clear()
        for chunk in turn.chunks:
            kept.append((chunk, chunk.get("type")))

    return _timed(order, step)


def _zlib(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    import importlib

    codec: Any = importlib.import_module("chatledger.adapters.persistence.codec")
    compress = codec.ChunkCompressor().compress
    bodies = {id(turn): pydantic_core.to_json(_payload(turn)) for _, turn in order}
    return _timed(order, lambda chat, turn: compress(bodies[id(turn)]))


def _floor_store(db: FreshDb, order: ps.WriteOrder) -> ps.Timing:
    """Every chunk kept and chained, one row and one transaction per turn."""
    rows = _Rows(db)
    heads: dict[str, bytes] = {}

    def step(chat: str, turn: Any) -> None:
        kept = []
        for chunk in turn.chunks:
            kept.append(chunk)
        body = pydantic_core.to_json([turn.user_message, *kept])
        link = hashlib.sha256(heads.get(chat, b"") + hashlib.sha256(body).digest()).digest()
        heads[chat] = link
        rows.insert(chat, link[:16] + body)

    try:
        return _timed(order, step)
    finally:
        rows.close()


def _peer(backend: str) -> tuple[str, Measure, str | None]:
    agents = ps.missing("agents", "openai-agents")
    if backend == "sqlite":
        return "SQLiteSession", lambda db, o: ps.run_sqlite_session(db, o, [], False), agents
    why = (
        agents
        or ps.missing("sqlalchemy.ext.asyncio", "sqlalchemy")
        or ps.missing("asyncpg", "asyncpg")
    )
    return "SQLAlchemySession", lambda db, o: ps.run_sqlalchemy_session(db, o, [], False), why


FLOOR = "floor store"
STEPS: list[tuple[str, Measure]] = [
    ("one transaction (one row)", _transaction),
    ("encode the turn (JSON)", _encode),
    ("SHA-256 of it", _sha256),
    ("touch each chunk", _touch),
    ("zlib it (chatledger's dictionary)", _zlib),
    (FLOOR, _floor_store),
]


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(args.turns) for c in convs]
    result: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "conversations": args.conversations,
        "turns": args.turns,
        "rounds": [],
        "skipped": {},
    }
    for backend in BACKENDS if args.backend == "all" else (args.backend,):
        if backend == "postgres" and (why := postgres_available(args.postgres_url)):
            result["skipped"]["postgres"] = why
            log(f"PostgreSQL skipped: {why}")
            continue
        peer, peer_run, why = _peer(backend)
        runs: list[tuple[str, Measure]] = [
            *STEPS,
            ("chatledger", lambda db, o: ps.run_chatledger(db, o, [])),
        ]
        if why:
            result["skipped"][f"{backend}: {peer}"] = why
        else:
            runs.append((peer, peer_run))
        for _name, measure in runs:  # imports and first use stay out of the rounds
            with fresh_db(backend, args.postgres_url, name="warm") as db:
                measure(db, order[:4])
        for r in range(args.rounds):
            rotated = runs[r % len(runs) :] + runs[: r % len(runs)]
            entry: dict[str, Any] = {"backend": backend, "round": r, "load_before": os.getloadavg()}
            for name, measure in rotated:
                with fresh_db(backend, args.postgres_url, name="floor") as db:
                    timing = measure(db, order)
                entry[name] = {
                    "ms_turn": timing.seconds * 1000 / timing.turns,
                    "cpu_ms_turn": timing.cpu_seconds * 1000 / timing.turns,
                }
                log(f"{backend} round {r}: {name}: {entry[name]['ms_turn']:.3f} ms/turn")
            entry["load_after"] = os.getloadavg()
            result["rounds"].append(entry)
    return result


def _fmt(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def markdown(result: dict[str, Any]) -> str:
    """One table per backend: each figure, its multiple of the floor store, chatledger / peer."""
    lines = [
        f"Run {result['started']}: {result['conversations']} conversations x {result['turns']}"
        " turns, turn by turn across all conversations.",
        "",
    ]
    for backend in BACKENDS:
        rounds = [e for e in result["rounds"] if e["backend"] == backend]
        if not rounds:
            continue
        names = [k for k in rounds[0] if isinstance(rounds[0][k], dict)]
        names.sort(key=lambda n: [s for s, _ in STEPS].index(n) if n in dict(STEPS) else 99)
        loads = ", ".join(f"{e['load_before'][0]:.1f}->{e['load_after'][0]:.1f}" for e in rounds)
        lines += [
            f"**{backend}**, {len(rounds)} rounds (1-min load average before->after each: {loads})",
            "",
            "| what | ms/turn (min-max) | x floor store | CPU ms/turn | x floor store, CPU |",
            "|---|---|---|---|---|",
        ]
        for name in names:
            ms = [e[name]["ms_turn"] for e in rounds]
            cpu = [e[name]["cpu_ms_turn"] for e in rounds]
            x = [e[name]["ms_turn"] / e[FLOOR]["ms_turn"] for e in rounds]
            xc = [e[name]["cpu_ms_turn"] / e[FLOOR]["cpu_ms_turn"] for e in rounds]
            lines.append(
                f"| {name} | {_fmt(median(ms))} ({_fmt(min(ms))}-{_fmt(max(ms))}) | "
                f"{median(x):.2f} | {_fmt(median(cpu))} | {median(xc):.2f} |"
            )
        peers = [n for n in names if n.endswith("Session")]
        for peer in peers:
            r = [e["chatledger"]["ms_turn"] / e[peer]["ms_turn"] for e in rounds]
            rc = [e["chatledger"]["cpu_ms_turn"] / e[peer]["cpu_ms_turn"] for e in rounds]
            lines += [
                "",
                f"chatledger / {peer} (per round, then median): wall {median(r):.2f}"
                f" ({min(r):.2f}-{max(r):.2f}), CPU {median(rc):.2f} ({min(rc):.2f}-{max(rc):.2f})",
            ]
        lines.append("")
    for what, why in result["skipped"].items():
        lines.append(f"- skipped {what}: {why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("all", *BACKENDS), default="all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--json", type=Path, help="also write the raw result here")
    args = parser.parse_args(argv)
    result = run(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
