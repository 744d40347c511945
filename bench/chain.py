"""What the hash chain costs: write throughput and bytes per turn, with and without it, side by side.

"Without" opens the same store with a mapper that hands the recorder plain
stored events (no content digest), so no link is computed or written; all
else is the same code. Runs alternate (with, without, with, ...) on fresh
databases so that drift of a shared machine hits both alike; medians are
reported. Target: under 10 % slower and under 0.2 KB per turn more.

Bytes: how many events a turn becomes depends on timing (a batch is also
committed when it is 50 ms old, a boundary chunk's batch within 5 ms), so on
a loaded machine two runs of the same workload can record different numbers
of events, and comparing bytes per turn then measures that, not the chain.
So each run also counts its events, and the size cost is reported both raw
(median bytes/turn on minus off) and at equal events: (median bytes/event on
minus off) x events/turn, which is what the chain itself adds.

    python bench/chain.py --conversations 20 --turns 10 --runs 3 [--backend sqlite|postgres|all]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from eventsourcing.persistence import StoredEvent
from ingest import write_conversation
from progress import log
from size import postgres_size, sqlite_size
from stats import median
from workload import conversation

from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import BatchPolicy


class ChainlessMapper(PydanticMapper):
    """The store's mapper minus the digest: the recorder then writes no link."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        event = super().to_stored_event(domain_event)
        return StoredEvent(event.originator_id, event.originator_version, event.topic, event.state)


def one_run(
    backend: str, chained: bool, convs: list[Any], postgres_url: str
) -> tuple[float, float, float, float]:
    """(turns/s, bytes/turn, CPU ms/turn, events/turn) of writing ``convs`` into a fresh database."""
    env = {} if chained else {"MAPPER_TOPIC": "chain:ChainlessMapper"}
    with fresh_db(backend, postgres_url, name="chain") as db:  # type: ignore[arg-type]
        store = open_store(db.url, StoreOptions(batch=BatchPolicy(64, 0.05), env=env))
        turns = 0
        started, cpu = time.perf_counter(), time.process_time()
        try:
            for conv in convs:
                write_conversation(store, conv)
                turns += len(conv.turns)
        finally:
            store.close()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        if db.sqlite_path is not None:
            size = sqlite_size(db.sqlite_path).live_bytes
            with sqlite3.connect(db.sqlite_path) as c:
                events = c.execute("SELECT count(*) FROM stored_events").fetchone()[0]
        else:
            assert db.postgres_url is not None and db.schema is not None
            size = postgres_size(db.postgres_url, db.schema).file_bytes
            with psycopg.connect(db.postgres_url) as c:
                row = c.execute(f'SELECT count(*) FROM "{db.schema}".chatledger_events').fetchone()
                events = row[0] if row else 0
    return turns / seconds, size / turns, cpu * 1000 / turns, events / turns


def main() -> int:
    """Measure and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "all"), default="all")
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "all" else [args.backend]
    if "postgres" in backends and (why := postgres_available(args.postgres_url)):
        log(f"PostgreSQL unavailable ({why}); SQLite only")
        backends.remove("postgres")
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    print(
        "| backend | chain | turns/s (median) | client CPU ms/turn (median) | bytes/turn (median) "
        "| events/turn (median) | bytes/event (median) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for backend in backends:
        results: dict[bool, list[tuple[float, float, float, float]]] = {True: [], False: []}
        for run in range(args.runs):
            for chained in (True, False) if run % 2 == 0 else (False, True):
                results[chained].append(one_run(backend, chained, convs, args.postgres_url))
                last = results[chained][-1]
                log(
                    f"{backend} run {run + 1} chain={'on' if chained else 'off'}: "
                    f"{last[0]:,.1f} turns/s, {last[1]:,.0f} B/turn, {last[3]:.2f} events/turn"
                )
        rows = {}
        for chained in (False, True):
            rate, size, cpu, events = (median([r[i] for r in results[chained]]) for i in range(4))
            per_event = median([r[1] / r[3] for r in results[chained]])
            rows[chained] = (rate, size, cpu, events, per_event)
            print(
                f"| {backend} | {'on' if chained else 'off'} | {rate:,.1f} | {cpu:.2f} | "
                f"{size:,.0f} | {events:.2f} | {per_event:,.1f} |"
            )
        slower = 1 - rows[True][0] / rows[False][0]
        cpu_more = rows[True][2] / rows[False][2] - 1
        more = (rows[True][1] - rows[False][1]) / 1024
        at_equal = (rows[True][4] - rows[False][4]) * rows[True][3] / 1024
        print(
            f"| {backend} | cost | {slower:+.1%} slower | {cpu_more:+.1%} CPU | "
            f"{more:+.3f} KB/turn raw | | {at_equal:+.3f} KB/turn at equal events |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
