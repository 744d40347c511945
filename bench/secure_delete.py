"""What ``PRAGMA secure_delete`` (on by default, so erased text leaves no trace in the file) costs SQLite writes.

Writes the workload (long conversations: each turn replaces the snapshot,
whose freed pages secure_delete zeroes) with the pragma OFF, FAST (the
default of a store with a key) and ON (without a key), runs rotating on
fresh files; medians of turns/s, client CPU ms/turn and the file's size.

    python bench/secure_delete.py --conversations 8 --turns 40 --runs 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import write_conversation
from progress import log
from stats import median
from workload import conversation

from chatledger.adapters.bootstrap import StoreOptions
from chatledger.adapters.store.store import open_store
from chatledger.adapters.store.streams.policy import BatchPolicy


def one_run(mode: str, convs: list, turns: int) -> tuple[float, float, float]:  # type: ignore[type-arg]
    """(turns/s, client CPU ms per turn, file KB) of writing ``convs`` into a fresh SQLite file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        env = {"SQLITE_SECURE_DELETE": mode}
        store = open_store(f"sqlite:///{path}", StoreOptions(batch=BatchPolicy(64, 0.05), env=env))
        started, cpu = time.perf_counter(), time.process_time()
        try:
            for conv in convs:
                write_conversation(store, conv)
        finally:
            store.close()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        total = len(convs) * turns
        return total / seconds, cpu * 1000 / total, path.stat().st_size / 1024


def main() -> int:
    """Measure and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=8)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    modes = ["OFF", "FAST", "ON"]
    results: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in modes}
    for run in range(args.runs):
        for mode in modes[run % 3 :] + modes[: run % 3]:
            results[mode].append(one_run(mode, convs, args.turns))
            log(f"run {run + 1} secure_delete={mode}: {results[mode][-1][0]:,.1f} turns/s")
    print("| secure_delete | turns/s | client CPU ms/turn | file KB |")
    print("| --- | ---: | ---: | ---: |")
    rows = {k: [median([r[i] for r in v]) for i in range(3)] for k, v in results.items()}
    for mode in modes:
        rate, cpu, size = rows[mode]
        print(f"| {mode} | {rate:,.1f} | {cpu:.2f} | {size:,.0f} |")
    for mode in ("FAST", "ON"):
        print(
            f"| {mode} vs OFF | {1 - rows[mode][0] / rows['OFF'][0]:+.1%} slower | "
            f"{rows[mode][1] / rows['OFF'][1] - 1:+.1%} | |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
