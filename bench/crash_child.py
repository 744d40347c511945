"""Crash-test child: writes a few turns, then streams an endless reply at a steady pace till killed.

Prints ``ready`` once the stream is open, then ``<seq> <CLOCK_MONOTONIC ns>`` for
each chunk right after ``stream.append`` returns. The parent (crash.py) sends
SIGKILL after N chunks. Not meant to be run by hand, though it can be:
``python bench/crash_child.py --url sqlite:////tmp/x.db --max-chunks 100``.
"""

from __future__ import annotations

import argparse
import sys
import time

from ingest import write_turn
from storeapi import AGENT_ACTOR, DEFAULT_STORE, USER_ACTOR, load_opener
from workload import DEFAULT_SEED, crash_conversation, endless_reply


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="store URL")
    parser.add_argument("--store", default=DEFAULT_STORE, help="store class as module:attr")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--earlier-turns", type=int, default=2)
    parser.add_argument("--pace-ms", type=float, default=1.0, help="one chunk every PACE ms")
    parser.add_argument("--max-chunks", type=int, default=100_000, help="close cleanly after this")
    parser.add_argument("--src", help="import chatledger from DIR (installs.py's layout)")
    return parser.parse_args()


def main() -> None:
    """Write the earlier turns, open the stream, append until killed (or ``--max-chunks``)."""
    args = _args()
    if args.src:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, args.src)
    conv = crash_conversation(args.earlier_turns, args.seed)
    *earlier, last = conv.turns
    store = load_opener(args.store)(args.url)
    store.start_conversation(conv.chat_id, actor=USER_ACTOR)
    for turn in earlier:
        write_turn(store, conv.chat_id, turn)
    store.append_message(conv.chat_id, last.user_message, actor=USER_ACTOR)
    stream = store.open_stream(conv.chat_id, actor=AGENT_ACTOR)
    print("ready", flush=True)
    pace = args.pace_ms / 1000
    start = time.perf_counter()
    for seq, chunk in enumerate(endless_reply(last.message_id, args.seed)):
        if seq >= args.max_chunks:
            break
        ahead = start + seq * pace - time.perf_counter()
        if ahead > 0:
            time.sleep(ahead)
        stream.append(chunk)
        print(seq, time.monotonic_ns(), flush=True)
    for chunk in (
        {"type": "text-end", "id": "txt-crash"},
        {"type": "finish-step"},
        {"type": "finish"},
    ):
        stream.append(chunk)
    stream.close(outcome="finished")
    store.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
