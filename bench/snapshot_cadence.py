"""Snapshots a long conversation writes, the replay tail after them, and what a load costs.

Writes one conversation of the workload (``workload.conversation``) turn by
turn through ``open_stream``/``append``/``close`` into a fresh database, with
the installed chatledger (run it from each tree's bench/ with that tree's
venv for a before/after). Counts the snapshots written and their stored
bytes, the longest tail of events after the newest snapshot at any commit
(events and stored bytes: what a load of the open conversation replays), and
times ``ConversationLog.load`` (newest snapshot plus the tail, no cache) on a
second handle after each close: the worst and the last, best of 5 each.

    python snapshot_cadence.py --backend sqlite --turns 20 100
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from backends import fresh_db
from stats import median
from workload import conversation


def _run(backend: str, turns: int, postgres_url: str | None) -> dict[str, Any]:
    from chatledger.adapters.store.store import open_store
    from chatledger.domain.aggregate import conversation_id

    conv = conversation(7, turns)
    key = conversation_id("default", conv.chat_id)
    with fresh_db(backend, *([postgres_url] if postgres_url else [])) as db:
        store: Any = open_store(db.url)
        reader: Any = open_store(db.url)
        log = store.log
        real = log._put
        seen: dict[str, Any] = {"snapshots": 0, "snapshot_bytes": 0, "last": 0, "size": 0}
        tail = {"events": 0, "bytes": 0, "max_events": 0, "max_bytes": 0, "size_at_max": 0}

        def put(events: list[Any], **extra: Any) -> Any:
            out = real(events, **extra)
            snaps = [s for s in [extra.get("snapshot"), *extra.get("snapshots", ())] if s]
            tail["events"] += len(events)
            if not snaps:  # the stored bytes: what _put reports, else (older trees) encoded again
                sizes = (
                    out.values()
                    if isinstance(out, dict)
                    else [len(log.mapper.to_stored_event(e).state) for e in events]
                )
                tail["bytes"] += sum(sizes)
            for snap in snaps:
                seen["snapshots"] += 1
                seen["snapshot_bytes"] += len(snap.state)
                seen["size"] = len(snap.state)
                seen["last"] = snap.originator_version
                tail["events"], tail["bytes"] = 0, 0
            if tail["events"] > tail["max_events"]:
                tail["max_events"] = tail["events"]
            if tail["bytes"] > tail["max_bytes"]:
                tail["max_bytes"], tail["size_at_max"] = tail["bytes"], seen["size"]
            return out

        log._put = put
        loads: list[float] = []
        try:
            store.start_conversation(conv.chat_id)
            for turn in conv.turns:
                stream = store.open_stream(conv.chat_id, user_message=turn.user_message)
                for chunk in turn.chunks:
                    stream.append(chunk)
                stream.close(outcome="finished")
                best = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    reader.log.load(key, "default", conv.chat_id)
                    best.append((time.perf_counter() - t0) * 1000)
                loads.append(min(best))
        finally:
            log._put = real
            store.close()
            reader.close()
    return {
        "turns": turns,
        "snapshots": seen["snapshots"],
        "snapshot_kb": seen["snapshot_bytes"] / 1000,
        "last_snapshot_kb": seen["size"] / 1000,
        "max_tail_events": tail["max_events"],
        "max_tail_kb": tail["max_bytes"] / 1000,
        "snapshot_kb_at_max_tail": tail["size_at_max"] / 1000,
        "load_ms_worst": max(loads),
        "load_ms_last": loads[-1],
        "load_ms_median": median(loads),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--postgres-url")
    parser.add_argument("--turns", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args(argv)
    for turns in args.turns:
        result = _run(args.backend, turns, args.postgres_url)
        print(
            " ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
