"""What the flusher's group commit costs per chunk at the live shape: the commit path alone.

N answers are open at once (``open_stream``, ``start``, ``start-step``,
``text-start`` committed); each cycle appends K text deltas to every one of
them, then runs one flusher tick (``Flusher.commit_due``), which commits
every buffered batch in one transaction: one ``ChunksReceived`` event per
answer, with a snapshot every so often. At 10 live streams of 50 chunks a
second and a commit every 35 ms, a commit carries under 2 chunks per stream,
so ``--streams 10 --chunks 2`` is that shape. Reported: this thread's CPU
per cycle and per chunk (appends included), median (min-max) over rounds,
with the 1-minute load; ``--history`` turns written before the answers open
show what a longer conversation adds (its snapshots grow with it).

    python bench/group_commit.py --backend sqlite --rounds 3
    python bench/group_commit.py --backend all --history 20
    python bench/group_commit.py --profile out.pstats   # cProfile one round
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import sys
import time
from typing import Any

from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db
from stats import median
from workload import conversation

HEAD = ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "live"})


def _open_answers(store: Any, streams: int, history: int) -> list[Any]:
    """``streams`` conversations with ``history`` turns each, and an answer open in each."""
    writers = []
    for i in range(streams):
        chat = f"c{i}"
        store.start_conversation(chat, actor="user:bench")
        past = conversation(i, max(history, 1)).turns[:history]
        for turn in past:
            writer = store.open_stream(
                chat, actor="agent:bench", user_message=turn.user_message, user_actor="user:b"
            )
            for chunk in turn.chunks:
                writer.append(chunk)
            writer.close()
        message = {"id": f"u{i}-live", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        writer = store.open_stream(
            chat, actor="agent:bench", user_message=message, user_actor="user:b"
        )
        for chunk in HEAD:
            writer.append(chunk)
        writers.append(writer)
    return writers


def measure(
    url: str, streams: int, chunks: int, cycles: int, history: int, profile: str | None
) -> float:
    """CPU µs per cycle of ``chunks`` appends to each of ``streams`` answers plus one tick."""
    from chatledger import ConversationStore

    store: Any = ConversationStore.open(url)
    try:
        flusher = store._services.flusher
        writers = _open_answers(store, streams, history)
        flusher.commit_due(math.inf)
        delta = {"type": "text-delta", "id": "live", "delta": "hello "}

        def cycle() -> None:
            for writer in writers:
                for _ in range(chunks):
                    writer.append(dict(delta))
            flusher.commit_due(time.monotonic() + 10)  # every batch due: one transaction

        for _ in range(20):  # warm: caches, rendered statements, the first snapshots
            cycle()
        profiler = cProfile.Profile() if profile else None
        started = time.thread_time()
        if profiler:
            profiler.enable()
        for _ in range(cycles):
            cycle()
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile)  # type: ignore[arg-type]
        return (time.thread_time() - started) / cycles * 1e6
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("all", *BACKENDS), default="sqlite")
    parser.add_argument("--streams", type=int, default=10, help="answers open at once")
    parser.add_argument("--chunks", type=int, default=2, help="deltas per answer per commit")
    parser.add_argument("--cycles", type=int, default=300, help="commits measured per round")
    parser.add_argument("--history", type=int, default=0, help="turns before each answer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--profile", metavar="PATH", help="cProfile the first round into PATH")
    args = parser.parse_args()
    backends = BACKENDS if args.backend == "all" else (args.backend,)
    for backend in backends:
        per_cycle: list[float] = []
        loads: list[float] = []
        for round_ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            with fresh_db(backend, args.postgres_url, name="group_commit") as db:  # type: ignore[arg-type]
                profile = args.profile if round_ == 0 else None
                per_cycle.append(
                    measure(db.url, args.streams, args.chunks, args.cycles, args.history, profile)
                )
            print(
                f"{backend} round {round_ + 1}: {per_cycle[-1]:.0f} µs a commit",
                file=sys.stderr,
            )
        chunks = args.streams * args.chunks
        print(
            f"{backend}: {args.streams} answers x {args.chunks} chunks a commit, "
            f"history {args.history} turns: {median(per_cycle):.0f} µs CPU a commit "
            f"({min(per_cycle):.0f}-{max(per_cycle):.0f}), "
            f"{median(per_cycle) / chunks:.1f} µs a chunk "
            f"({min(per_cycle) / chunks:.1f}-{max(per_cycle) / chunks:.1f}), "
            f"{median(per_cycle) / args.streams:.0f} µs an event; "
            f"load {min(loads):.1f}-{max(loads):.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
