"""Several writer processes on one PostgreSQL database: aggregate chunks/s with 1, 2 and 4 processes.

Each process writes conversations of its own (the bench workload, distinct
indices per process) through its own ``ConversationStore``. The processes
generate their conversations, open their stores and then start together at a
barrier; the figure is every process's chunks over the wall time from the
first start to the last finish. Every measurement gets a fresh schema.

Two write paths are measured in the same run, rounds rotating their order:

- ``chatledger``: the store as it is (no table lock; the feed waits at holes);
- ``table lock``: the same store with ``eventsourcing``'s ``LOCK TABLE ... IN
  EXCLUSIVE MODE`` and the NOTIFY put back into every insert's transaction,
  which is how every insert ran before;
- ``3 shards``: a store over three new databases of the same server (one URL
  listing them), every process writing conversations of all three.

Reported per path and process count: the median chunks/s (min-max) over the
rounds, the ratio to one process of the same path (median of the per-round
ratios), the writer processes' CPU time over the wall time (per process: how
much of its time one writer spends in its own Python rather than waiting for
the server), and the 1-minute load average around the measurements. On a
loaded machine more processes also take a larger share of the CPUs from
other work, so read the ratios with the load beside them. Nothing here
passes or fails.

    python bench/writers.py                       # 3 rounds of 1, 2, 4 processes
    python bench/writers.py --rounds 5 --markdown # Markdown tables for BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from backends import DEFAULT_POSTGRES_URL, postgres_available, postgres_db
from ingest import write_conversation
from progress import log
from stats import median, median_range
from storeapi import load_opener
from workload import DEFAULT_SEED, conversation

_databases = itertools.count()

PATHS = ("chatledger", "table lock", "3 shards")
SHARDS = 3


@dataclass(frozen=True)
class Sample:
    """One measurement: ``processes`` writers on one fresh schema."""

    path: str
    processes: int
    round: int
    chunks: int
    seconds: float
    load_before: float
    load_after: float
    cpu_seconds: float = 0.0
    """CPU time (user + system) of the writer processes together."""

    @property
    def chunks_per_s(self) -> float:
        """Aggregate throughput of all the processes."""
        return self.chunks / self.seconds if self.seconds else 0.0


def _lock_the_table(store: Any) -> None:
    """Put eventsourcing's write path back: LOCK TABLE and NOTIFY inside every insert's transaction."""
    from eventsourcing.postgres import PostgresApplicationRecorder
    from psycopg import sql

    recorder = store.log.recorder
    recorder.lock_table_statements.append(
        sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
            sql.Identifier(recorder.datastore.schema, recorder.events_table_name)
        )
    )
    recorder._notify_channel = lambda curs: PostgresApplicationRecorder._notify_channel(
        recorder, curs
    )
    recorder.wake_listeners = False


def _writer(
    url: str,
    path: str,
    first: int,
    count: int,
    turns: int,
    seed: int,
    barrier: Any,
    results: Any,
) -> None:
    """One process: generate its conversations, open a store, wait for the others, write, report."""
    try:
        convs = [conversation(index, turns, seed) for index in range(first, first + count)]
        store: Any = load_opener()(url)
        if path == "table lock":
            _lock_the_table(store)
        barrier.wait(timeout=120)
        started = time.perf_counter()  # CLOCK_MONOTONIC: comparable between processes
        cpu_start = time.process_time()
        for conv in convs:
            write_conversation(store, conv)
        store.close()
        ended = time.perf_counter()
        cpu = time.process_time() - cpu_start
        results.put(("ok", started, ended, sum(c.chunk_count for c in convs), cpu))
    except BaseException as error:  # reported by the parent
        results.put(("error", f"{type(error).__name__}: {error}", 0.0, 0, 0.0))


@contextmanager
def sharded_db(base_url: str, count: int) -> Iterator[Any]:
    """``count`` new databases on the server of ``base_url`` and the sharded URL over them (dropped on exit)."""
    import psycopg

    names = [f"bench_{os.getpid()}_{next(_databases)}_{i}" for i in range(count)]
    with psycopg.connect(base_url, autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield SimpleNamespace(
            url=urlunsplit(urlsplit(base_url)._replace(path="/" + ",".join(names)))
        )
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            for name in names:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def measure(
    base_url: str, path: str, processes: int, per_process: int, turns: int, seed: int, rnd: int
) -> Sample:
    """Run ``processes`` writers on a fresh schema; their aggregate chunks/s."""
    context = multiprocessing.get_context("fork")
    where = sharded_db(base_url, SHARDS) if path == "3 shards" else postgres_db(base_url)
    with where as db:
        load_opener()(db.url).close()  # tables made before the clock starts
        barrier = context.Barrier(processes)
        results = context.Queue()
        workers = [
            context.Process(
                target=_writer,
                args=(
                    db.url,
                    path,
                    i * per_process,
                    per_process,
                    turns,
                    seed,
                    barrier,
                    results,
                ),
            )
            for i in range(processes)
        ]
        load_before = os.getloadavg()[0]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=900) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
        load_after = os.getloadavg()[0]
    failed = [o[1] for o in outcomes if o[0] != "ok"]
    if failed:
        raise RuntimeError(f"{path}, {processes} processes: {failed[0]}")
    start = min(o[1] for o in outcomes)
    end = max(o[2] for o in outcomes)
    chunks = sum(o[3] for o in outcomes)
    cpu = sum(o[4] for o in outcomes)
    return Sample(path, processes, rnd, chunks, end - start, load_before, load_after, cpu)


def _table(samples: Sequence[Sample], counts: Sequence[int], markdown: bool) -> str:
    header = [
        "write path",
        "processes",
        "chunks/s (median, min-max)",
        "x one process (median of rounds)",
        "writer CPU per process (median)",
        "load 1-min before/after (median)",
    ]
    rows = []
    for path in PATHS:
        mine = [s for s in samples if s.path == path]
        if not mine:
            continue
        for n in counts:
            these = [s for s in mine if s.processes == n]
            ratios = []
            for s in these:
                one = [o for o in mine if o.processes == 1 and o.round == s.round]
                if one and one[0].chunks_per_s:
                    ratios.append(s.chunks_per_s / one[0].chunks_per_s)
            rows.append(
                [
                    path,
                    str(n),
                    median_range([s.chunks_per_s for s in these]),
                    f"{median(ratios):.2f}x" if ratios else "-",
                    f"{median([s.cpu_seconds / s.seconds / s.processes for s in these]):.0%}",
                    f"{median([s.load_before for s in these]):.1f} / "
                    f"{median([s.load_after for s in these]):.1f}",
                ]
            )
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the rounds, print the table, save the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL, help="PostgreSQL server")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (medians over them)")
    parser.add_argument(
        "--processes", default="1,2,4", help="comma-separated process counts (default 1,2,4)"
    )
    parser.add_argument(
        "--conversations", type=int, default=4, help="conversations per process (default 4)"
    )
    parser.add_argument("--turns", type=int, default=8, help="turns per conversation (default 8)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="workload seed")
    parser.add_argument(
        "--paths",
        default=",".join(PATHS),
        help=f"write paths to measure, comma-separated (default {','.join(PATHS)})",
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", type=Path, help="also write every sample to this JSON file")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.processes.split(",")]
    paths = [p.strip() for p in args.paths.split(",")]
    if unknown := [p for p in paths if p not in PATHS]:
        parser.error(f"--paths: unknown {unknown}; choose from {', '.join(PATHS)}")
    if problem := postgres_available(args.postgres_url):
        print(f"PostgreSQL does not answer at {args.postgres_url}: {problem}", file=sys.stderr)
        return 2
    samples: list[Sample] = []
    for rnd in range(args.rounds):
        order = paths[rnd % len(paths) :] + paths[: rnd % len(paths)]
        turn = counts[rnd % len(counts) :] + counts[: rnd % len(counts)]
        for path in order:
            for n in turn:
                sample = measure(
                    args.postgres_url, path, n, args.conversations, args.turns, args.seed, rnd
                )
                samples.append(sample)
                log(
                    f"round {rnd + 1}/{args.rounds} {path:>10} x{n}: "
                    f"{sample.chunks_per_s:,.0f} chunks/s ({sample.chunks} chunks in "
                    f"{sample.seconds:.1f} s, load {sample.load_before:.1f}->{sample.load_after:.1f})"
                )
    print(_table(samples, counts, args.markdown))
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "cpus": os.cpu_count(),
                    "conversations_per_process": args.conversations,
                    "turns": args.turns,
                    "samples": [asdict(s) | {"chunks_per_s": s.chunks_per_s} for s in samples],
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
