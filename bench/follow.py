"""Live-follow delay: from ``stream.append`` in one process to ``follow()`` delivering it in another.

The writer (this process) opens a store with ``batch_chunks=1``, so every
``append`` commits its chunk before it returns, and streams a reply at a steady
pace. A follower process (this script with ``--child``) runs
``follow(chat)`` and notes when each chunk arrives. Both read CLOCK_MONOTONIC,
which is shared by all processes on Linux, so the delay of a chunk is its
arrival time minus the time ``append`` was called (commit included). Figures
are medians over runs of each run's p50 and p99; nothing passes or fails.

    python bench/follow.py                     # both backends, ~15 s
    python bench/follow.py --backend sqlite --runs 5 --chunks 500 --pace-ms 5
    python bench/follow.py --poll-ms 5         # follower's SQLite polling period

SQLite followers poll (default every 20 ms: expect about half of that on
average); PostgreSQL followers are woken by LISTEN/NOTIFY.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from stats import median, percentile

CHAT = "follow-bench"


@dataclass
class Run:
    """One measured stream: per chunk, the delay to the follower and the time ``append`` took (ms)."""

    delays_ms: list[float]
    append_ms: list[float]


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *BACKENDS], default="all")
    parser.add_argument("--runs", type=int, default=3, help="streams per backend (default 3)")
    parser.add_argument("--chunks", type=int, default=200, help="text deltas per stream")
    parser.add_argument("--pace-ms", type=float, default=10.0, help="one chunk every PACE ms")
    parser.add_argument(
        "--poll-ms", type=float, default=None, help="follower polling period (default: the store's)"
    )
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--child", nargs=2, metavar=("URL", "CHAT"), help=argparse.SUPPRESS)
    return parser.parse_args()


def child(url: str, chat: str, poll_ms: float | None) -> None:
    """Follower process: follow the open stream, then print ``[[position, monotonic_ns], ...]``."""
    from chatledger import ConversationStore
    from chatledger.adapters.store.reads.follow import follow

    poll = poll_ms / 1000 if poll_ms else None
    arrivals: list[tuple[int, int]] = []
    with ConversationStore.open(url) as store:
        chunks = follow(store, chat, timeout=60, poll_seconds=poll)
        print("ready", flush=True)
        for item in chunks:
            arrivals.append((item.position, time.monotonic_ns()))
    print(json.dumps(arrivals), flush=True)


def measure(url: str, chunks: int, pace_ms: float, poll_ms: float | None) -> Run:
    """Stream ``chunks`` deltas into a fresh conversation while a follower process reads them."""
    from chatledger import ConversationStore

    with ConversationStore.open(url, batch_chunks=1) as store:
        store.start_conversation(CHAT)
        store.append_message(
            CHAT, {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Go."}]}
        )
        stream = store.open_stream(CHAT)
        command = [sys.executable, __file__, "--child", url, CHAT]
        if poll_ms:
            command += ["--poll-ms", str(poll_ms)]
        follower = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        try:
            assert follower.stdout is not None
            if follower.stdout.readline().strip() != "ready":
                raise RuntimeError("the follower process did not start")
            called: dict[int, int] = {}
            append_ms: list[float] = []
            reply: list[dict[str, Any]] = [{"type": "start"}, {"type": "text-start", "id": "t"}]
            reply += [{"type": "text-delta", "id": "t", "delta": f" w{i}"} for i in range(chunks)]
            reply += [{"type": "text-end", "id": "t"}, {"type": "finish"}]
            pace = pace_ms / 1000
            start = time.perf_counter()
            for index, chunk in enumerate(reply):
                ahead = start + index * pace - time.perf_counter()
                if ahead > 0:
                    time.sleep(ahead)
                before = time.monotonic_ns()
                position = stream.append(chunk).position
                append_ms.append((time.monotonic_ns() - before) / 1e6)
                called[position] = before
            stream.close()
            out, _ = follower.communicate(timeout=120)
        finally:
            if follower.poll() is None:
                follower.kill()
    arrivals = json.loads(out.strip().splitlines()[-1])
    if len(arrivals) != len(reply):
        raise RuntimeError(f"the follower got {len(arrivals)} of {len(reply)} chunks")
    delays = [(arrived - called[position]) / 1e6 for position, arrived in arrivals]
    return Run(delays, append_ms)


def main() -> None:
    """Measure each backend and print the table."""
    args = _args()
    if args.child:
        url, chat = args.child
        child(url, chat, args.poll_ms)
        return
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    if "postgres" in backends and (problem := postgres_available(args.postgres_url)):
        if args.backend == "postgres":
            sys.exit(f"PostgreSQL is not reachable at {args.postgres_url}: {problem}")
        print(f"PostgreSQL skipped (not reachable: {problem})", file=sys.stderr)
        backends.remove("postgres")
    rows = []
    for backend in backends:
        runs = []
        for number in range(args.runs):
            print(f"{backend}: run {number + 1}/{args.runs}", file=sys.stderr)
            with fresh_db(backend, args.postgres_url) as db:
                runs.append(measure(db.url, args.chunks, args.pace_ms, args.poll_ms))
        waits = "LISTEN/NOTIFY" if backend == "postgres" else f"poll {args.poll_ms or 20:g} ms"
        rows.append(
            (
                backend,
                waits,
                f"{args.runs} x {len(runs[0].delays_ms)}",
                median([median(run.append_ms) for run in runs]),
                median([percentile(run.delays_ms, 50) for run in runs]),
                median([percentile(run.delays_ms, 99) for run in runs]),
                max(max(run.delays_ms) for run in runs),
            )
        )
    print(
        f"\nfollow() delay, append in one process -> delivery in another (pace {args.pace_ms:g} ms)"
    )
    header = ("backend", "follower waits", "chunks", "append p50", "delay p50", "delay p99", "max")
    print("{:<9} {:<15} {:>9} {:>11} {:>10} {:>10} {:>9}".format(*header))
    for backend, waits, count, append_p50, p50, p99, worst in rows:
        print(
            f"{backend:<9} {waits:<15} {count:>9} {append_p50:>8.2f} ms {p50:>7.2f} ms "
            f"{p99:>7.2f} ms {worst:>6.1f} ms"
        )


if __name__ == "__main__":
    main()
