"""What a data key per conversation costs, and what erasing one takes: side by side in one run.

In a store with a cipher key, "store key" writes as before data keys (every
event encrypted with the store's key: the mapper's data keys switched off),
"data keys" as now (each conversation's events and snapshots with its own
wrapped key). Runs alternate on fresh databases; medians are reported, with
the erase time per conversation (every conversation of the run erased).

    python bench/envelope.py --conversations 20 --turns 10 --runs 3 [--backend sqlite|postgres|all]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from eventsourcing.cryptography import AESCipher
from ingest import write_conversation
from progress import log
from stats import median
from workload import conversation

from chatledger.adapters.store import ConversationStore


def one_run(
    backend: str, data_keys: bool, convs: list[Any], postgres_url: str
) -> tuple[float, float]:
    """(turns per second, ms per erase) of writing then erasing ``convs`` in a fresh database."""
    with fresh_db(backend, postgres_url, name="envelope") as db:  # type: ignore[arg-type]
        store = ConversationStore.open(db.url, cipher_key=AESCipher.create_key(32))
        keys = store.log.mapper.data_keys  # type: ignore[attr-defined]
        if not data_keys:
            store.log.mapper.data_keys = None  # type: ignore[attr-defined]
        try:
            turns = 0
            started, cpu = time.perf_counter(), time.process_time()
            for conv in convs:
                write_conversation(store, conv)
                turns += len(conv.turns)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            store.log.mapper.data_keys = keys  # type: ignore[attr-defined]
            started = time.perf_counter()
            for conv in convs:
                store.operations.erase(conv.chat_id, actor="bench", reason="bench")
            erase_ms = (time.perf_counter() - started) * 1000 / len(convs)
        finally:
            store.close()
    return turns / seconds, cpu * 1000 / turns, erase_ms


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
    print("| backend | encryption | turns/s | client CPU ms/turn | erase ms/conversation |")
    print("| --- | --- | ---: | ---: | ---: |")
    for backend in backends:
        results: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
        for run in range(args.runs):
            for keyed in (True, False) if run % 2 == 0 else (False, True):
                results[keyed].append(one_run(backend, keyed, convs, args.postgres_url))
                log(
                    f"{backend} run {run + 1} data keys={keyed}: {results[keyed][-1][0]:,.1f} turns/s"
                )
        rows = {k: [median([r[i] for r in v]) for i in range(3)] for k, v in results.items()}
        for keyed in (False, True):
            rate, cpu, erase = rows[keyed]
            name = "data keys" if keyed else "store key only"
            print(f"| {backend} | {name} | {rate:,.1f} | {cpu:.2f} | {erase:,.1f} |")
        slower = 1 - rows[True][0] / rows[False][0]
        cpu_more = rows[True][1] / rows[False][1] - 1
        print(f"| {backend} | cost | {slower:+.1%} | {cpu_more:+.1%} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
