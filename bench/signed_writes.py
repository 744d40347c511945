"""What signed writes cost: write throughput and client CPU per turn, with and without, in one run.

"With" opens the store with ``sign_writes`` (an HMAC seal key): every commit
signs its new chain heads and upserts one row per conversation in the same
transaction. "Without" is the same store without the key. Runs alternate
(with, without, without, with, ...) on fresh databases so that the drift of a
shared machine hits both alike; medians are reported, with the machine's load
average before and after.

    python bench/signed_writes.py --conversations 20 --turns 10 --runs 3 [--backend sqlite|postgres|all]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from ingest import write_conversation
from progress import log
from stats import median
from workload import conversation

from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.domain.seal import SealKey

KEY = SealKey.from_text("a benchmark seal key of 32 bytes!")


def one_run(backend: str, signed: bool, convs: list[Any], postgres_url: str) -> tuple[float, float]:
    """(turns/s, client CPU ms/turn) of writing ``convs`` into a fresh database."""
    options = StoreOptions(batch=BatchPolicy(64, 0.05), sign_writes=KEY if signed else None)
    with fresh_db(backend, postgres_url, name="signed") as db:  # type: ignore[arg-type]
        store = open_store(db.url, options)
        turns = 0
        started, cpu = time.perf_counter(), time.process_time()
        try:
            for conv in convs:
                write_conversation(store, conv)
                turns += len(conv.turns)
        finally:
            store.close()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return turns / seconds, cpu * 1000 / turns


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
    load_before = os.getloadavg()
    print("| backend | signed writes | turns/s (median) | client CPU ms/turn (median) |")
    print("| --- | --- | ---: | ---: |")
    for backend in backends:
        results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for run in range(args.runs):
            for signed in (True, False) if run % 2 == 0 else (False, True):
                results[signed].append(one_run(backend, signed, convs, args.postgres_url))
                rate, cpu = results[signed][-1]
                log(
                    f"{backend} run {run + 1} signed={signed}: {rate:,.1f} turns/s, {cpu:.2f} ms CPU/turn"
                )
        rows = {}
        for signed in (False, True):
            rows[signed] = tuple(median([r[i] for r in results[signed]]) for i in range(2))
            rate, cpu = rows[signed]
            print(f"| {backend} | {'on' if signed else 'off'} | {rate:,.1f} | {cpu:.2f} |")
        slower = 1 - rows[True][0] / rows[False][0]
        cpu_more = rows[True][1] - rows[False][1]
        print(f"| {backend} | cost | {slower:+.1%} slower | {cpu_more:+.2f} ms CPU/turn |")
    load_after = os.getloadavg()
    print(
        f"\nload average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
        f"after: {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
