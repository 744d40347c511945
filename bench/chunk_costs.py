"""What one chunk costs the aggregate's fold, by kind: source trees side by side, in the same run.

The peers' turns (``workload.py``: ~160 AI SDK v6 chunks a turn, a tool call
every fourth turn) go through ``Conversation.receive`` with no store behind
it, each call timed alone in the thread's CPU time (``thread_time_ns``, less
the clock's own cost, measured first: the machine's load hardly moves it); a
turn's stream is opened, then flushed and closed outside the timing. Reported per tree: mean µs per
chunk for the bare deltas, the framing chunks (start, start-step, text-start,
text-end, finish-step, finish) and the tool chunks (tool-input-*,
tool-output-available), and the fold's µs per turn; medians (min-max) over
rounds, the trees' order rotating each round, with the load per round.

    python bench/chunk_costs.py --rounds 5 before=/tmp/before after=.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from installs import _layout
from stats import median

FRAMING = frozenset({"start", "start-step", "text-start", "text-end", "finish-step", "finish"})
KINDS = ("delta", "framing", "tool")


def _kind(chunk: dict[str, Any]) -> str:
    if chunk["type"] in FRAMING:
        return "framing"
    return "tool" if chunk["type"].startswith("tool-") else "delta"


def _child(args: argparse.Namespace) -> int:
    if args.src:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, args.src)
    import importlib

    from workload import conversation

    aggregate: Any = importlib.import_module("chatledger.domain.aggregate")
    limits_module: Any = importlib.import_module("chatledger.domain.limits")
    limits = limits_module.Limits()
    totals = dict.fromkeys(KINDS, 0)
    counts = dict.fromkeys(KINDS, 0)
    by_type: dict[str, list[int]] = {}
    turns = 0
    clock = time.thread_time_ns
    calibration = []
    for _ in range(20000):
        started = clock()
        calibration.append(clock() - started)
    overhead = sorted(calibration)[len(calibration) // 2]
    for index in range(args.conversations):
        chat = conversation(index, args.turns)
        conv = aggregate.Conversation.start("acme", chat.chat_id, actor="user:bench")
        for t, turn in enumerate(chat.turns):
            conv.append_message(turn.user_message, actor="user:bench", limits=limits)
            stream_id = f"s{t}"
            conv.open_stream(
                stream_id, turn.message_id, continuation=False, trigger="submit-message",
                actor="bot",
            )  # fmt: skip
            receive = conv.receive
            for chunk in turn.chunks:
                kind = _kind(chunk)
                started = clock()
                receive(stream_id, chunk, limits=limits)
                spent = clock() - started - overhead
                totals[kind] += spent
                counts[kind] += 1
                by_type.setdefault(chunk["type"], [0, 0])
                by_type[chunk["type"]][0] += spent
                by_type[chunk["type"]][1] += 1
            conv.close_stream(stream_id, "finished", None, actor="bot")
            conv.collect_events()
            turns += 1
    result = {kind: totals[kind] / counts[kind] / 1000 for kind in KINDS}
    result["turn"] = sum(totals.values()) / turns / 1000
    for name, (spent, count) in by_type.items():
        result[name] = spent / count / 1000
    result["load"] = os.getloadavg()[0]
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("entries", nargs="*", help="NAME=SOURCE_TREE ...")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--by-type", action="store_true", help="also a median per chunk type")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    entries = [entry.split("=", 1) for entry in args.entries]
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in entries}
    with tempfile.TemporaryDirectory(prefix="chatledger-chunk-costs-") as tmp:
        sources = {name: str(_layout(Path(tree), Path(tmp) / name)) for name, tree in entries}
        for r in range(args.rounds):
            for name, _ in entries[r % len(entries) :] + entries[: r % len(entries)]:
                command = [sys.executable, __file__, "--child", "--src", sources[name]]
                command += ["--conversations", str(args.conversations), "--turns", str(args.turns)]
                out = subprocess.run(command, capture_output=True, text=True, check=False)
                if out.returncode:
                    raise SystemExit(out.stderr[-3000:])
                results[name].append(json.loads(out.stdout.splitlines()[-1]))
            print(
                f"round {r}: "
                + ", ".join(
                    f"{n} {v[-1]['turn']:.0f} µs/turn (load {v[-1]['load']:.1f})"
                    for n, v in results.items()
                ),
                file=sys.stderr,
                flush=True,
            )
    first = entries[0][0]
    print(f"{args.conversations} conversations x {args.turns} turns, {args.rounds} rounds\n")
    print("| entry | delta µs | framing µs | tool µs | fold µs/turn | turn / " + first + " |")
    print("|---|---|---|---|---|---|")
    for name, _ in entries:
        rows = results[name]
        cells = []
        for key in (*KINDS, "turn"):
            xs = [row[key] for row in rows]
            cells.append(f"{median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})")
        ratios = [a["turn"] / b["turn"] for a, b in zip(rows, results[first], strict=True)]
        cells.append(f"{median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.by_type:
        print("\n| chunk type | " + " | ".join(f"{name} µs" for name, _ in entries) + " |")
        print("|---|" + "---|" * len(entries))
        kinds = [key for key in results[first][0] if key not in (*KINDS, "turn", "load")]
        for kind in kinds:
            cells = [median([row[kind] for row in results[name]]) for name, _ in entries]
            print(f"| {kind} | " + " | ".join(f"{cell:.2f}" for cell in cells) + " |")
    loads = [row["load"] for rows in results.values() for row in rows]
    print(f"\n1-minute load average at the measurements: {min(loads):.1f}-{max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
