"""Where chatledger's write time goes: the peers' workload under cProfile, one backend at a time.

Writes ``--conversations`` x ``--turns`` turns (turn by turn across all
conversations, as ``peers.py`` does) through the store under ``cProfile`` and
prints the functions with the most cumulative time, plus the share of the
total spent under a few places named in issue 16 (the aggregate's fold, the
commit, the recorder's insert). Run it on an otherwise quiet machine; profile
overhead inflates the per-chunk Python share, so read the shares, not the ms.

    python bench/profile_writes.py --backend sqlite
    python bench/profile_writes.py --backend postgres --top 40
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from typing import Any

from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db
from peer_stores import run_chatledger
from workload import conversation

PLACES = {
    "StreamWriter.append (all of it)": ("writer.py", "append"),
    "Conversation.receive (check, limits, fold)": ("aggregate.py", "receive"),
    "UnitOfWork.commit (all of it)": ("unit_of_work.py", "commit"),
    "ConversationLog.record -> Application.save": ("log.py", "record"),
    "mapper: to_stored_event (serialise, compress)": ("", "to_stored_event"),
    "recorder: insert_events": ("", "insert_events"),
    "snapshot taken on close": ("snapshot.py", "take"),
    "append_message (user message)": ("store.py", "append_message"),
    "open_stream": ("store.py", "open_stream"),
    "StreamWriter.close": ("writer.py", "close"),
}


def _cumulative(stats: pstats.Stats, file_part: str, name: str) -> float:
    raw: Any = stats.stats  # type: ignore[attr-defined]
    total = 0.0
    for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in raw.items():
        if func == name and file_part in filename:
            total = max(total, ct)  # recursion-safe: the outermost entry
    return total


def _calls(stats: pstats.Stats, file_part: str, name: str) -> int:
    raw: Any = stats.stats  # type: ignore[attr-defined]
    return sum(
        nc
        for (filename, _l, func), (_cc, nc, *_rest) in raw.items()
        if func == name and file_part in filename
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument(
        "--old-cadence",
        action="store_true",
        help="commit as before issue 16: after every boundary, user message apart from the open",
    )
    parser.add_argument(
        "--batch-chunks",
        type=int,
        help="BatchPolicy.max_chunks (64: the default before batches were committed on age)",
    )
    args = parser.parse_args(argv)
    options: dict[str, Any] = (
        {"settle": 0.0, "message_with_open": False, "batch_chunks": 64} if args.old_cadence else {}
    )
    if args.batch_chunks is not None:
        options["batch_chunks"] = args.batch_chunks
    convs = [conversation(i, args.turns) for i in range(args.conversations)]
    order = [(c.chat_id, c.turns[t]) for t in range(args.turns) for c in convs]
    with fresh_db(args.backend, args.postgres_url, name="warm") as db:
        run_chatledger(
            db, order[:5], [], **options
        )  # imports and first-use work stay out of the profile
    profiler = cProfile.Profile()
    with fresh_db(args.backend, args.postgres_url, name="profile") as db:
        profiler.enable()
        timing = run_chatledger(db, order, [], **options)
        profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(
        _cumulative(stats, file_part, name)
        for file_part, name in (
            ("store.py", "start_conversation"),
            ("store.py", "append_message"),
            ("store.py", "open_stream"),
            ("writer.py", "append"),
            ("writer.py", "close"),
        )
    )
    commits = _calls(stats, "log.py", "record")
    print(
        f"{args.backend}: {timing.seconds * 1000 / timing.turns:.2f} ms/turn under the profiler,"
        f" {commits / timing.turns:.2f} commits/turn"
    )
    print("\n| where (cumulative) | share of write time |\n|---|---|")
    for label, (file_part, name) in PLACES.items():
        print(f"| {label} | {100 * _cumulative(stats, file_part, name) / total:.0f} % |")
    print()
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
