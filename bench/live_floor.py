"""This box's floor for serving a streamed chunk: store it, send it to the poster and to one follower.

Each step a server cannot avoid for one text delta, timed alone in this
process (CPU time, the best of 5 timings of 2,000 calls each: a busy box adds no wait):

- **parse**: ``json.loads`` of the chunk as it arrives on the stream-in route;
- **fold**: ``StreamWriter.append`` on a memory store whose batches never
  fill (check the chunk, fold it into the message, buffer it: no commit);
- **encode + chain**: the chunk's share of one batch event encoded as JSON
  with SHA-256 over it (a batch of ``--batch`` chunks, the 50 ms batch at
  50 chunks/s);
- **SQL**: its share of one row per stream batch, ``--streams`` batches in
  one SQLite transaction (WAL, ``synchronous=NORMAL``), the group commit;
- **SSE frame**: ``sse_event`` for the poster and, with its cursor, for the
  follower;
- **two sends**: two writes of the frame on connected TCP sockets of an
  asyncio loop (``transport.write``; what an ASGI send ends in, without the
  framework's layers), the reader draining them;
- **wake-up**: one coroutine woken through a future (the follower's).

The floor is their sum: what a minimal Python design pays per followed chunk
on this box. ``live_load.py --floor`` measures it in the same run and gives
each server's CPU per followed chunk as a multiple of it.

    python bench/live_floor.py --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from statistics import median

__all__ = ["measure"]

_CHUNK = {"type": "text-delta", "id": "t", "delta": "1764300000.123456 "}


def _timed(step: Callable[[], object], number: int, repeat: int, per: int = 1) -> float:
    """Microseconds per call of ``step`` (divided by ``per``: the chunks one call serves)."""
    taken = timeit.repeat(step, number=number, repeat=repeat, timer=time.process_time)
    return min(taken) / number / per * 1e6


def _fold(number: int, repeat: int) -> float:
    from chatledger import ConversationStore

    store = ConversationStore.open("memory://", batch_chunks=10**9, batch_ms=10**9)
    try:
        store.start_conversation("c")
        store.append_message(
            "c", {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        )
        writer = store.open_stream("c")
        for chunk in ({"type": "start"}, {"type": "start-step"}, {"type": "text-start", "id": "t"}):
            writer.append(chunk)
        return _timed(lambda: writer.append(dict(_CHUNK)), number, repeat)
    finally:
        store.close()


def _sql(streams: int, batch: int, repeat: int) -> float:
    with tempfile.TemporaryDirectory(prefix="chatledger-floor-") as tmp:
        db = sqlite3.connect(os.path.join(tmp, "f.db"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE e (k INTEGER, v INTEGER, s BLOB, PRIMARY KEY (k, v))")
        row = json.dumps([_CHUNK] * batch).encode()
        version = [0]

        def commit() -> None:
            version[0] += 1
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO e VALUES (?, ?, ?)", [(k, version[0], row) for k in range(streams)]
            )
            db.execute("COMMIT")

        took = _timed(commit, 50, repeat, per=streams * batch)
        db.close()
        return took


async def _sends(number: int) -> float:
    frame = ("data: " + json.dumps(_CHUNK) + "\n\n").encode()
    received = asyncio.Event()
    total = [0]

    class Drain(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            total[0] += len(data)
            if total[0] >= 2 * number * len(frame):
                received.set()

    loop = asyncio.get_running_loop()
    server = await loop.create_server(Drain, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    poster, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    follower, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    started = time.process_time()
    for _ in range(number):
        poster.write(frame)
        follower.write(frame)
        await asyncio.sleep(0)  # one send per tick, as a live stream sends
    await received.wait()
    took = (time.process_time() - started) / number * 1e6
    poster.close()
    follower.close()
    server.close()
    return took


async def _wakeup(number: int) -> float:
    loop = asyncio.get_running_loop()

    async def woken(future: asyncio.Future[None]) -> None:
        await future

    started = time.process_time()
    for _ in range(number):
        future = loop.create_future()
        task = loop.create_task(woken(future))
        await asyncio.sleep(0)
        future.set_result(None)
        await task
    return (time.process_time() - started) / number * 1e6 / 2  # a task start and a wake-up


def measure(
    *, number: int = 2000, repeat: int = 5, batch: int = 3, streams: int = 50
) -> dict[str, float]:
    """Each step's µs per followed chunk, and their sum (``floor``)."""
    from chatledger.adapters.http.sse import sse_event

    text = json.dumps(_CHUNK)
    steps = {
        "parse": _timed(lambda: json.loads(text), number, repeat),
        "fold": _fold(number, repeat),
        "encode + chain": _timed(
            lambda: hashlib.sha256(json.dumps([_CHUNK] * batch).encode()).digest(),
            number,
            repeat,
            per=batch,
        ),
        "SQL": _sql(streams, batch, repeat),
        "SSE frames": _timed(
            lambda: (sse_event(_CHUNK), sse_event(_CHUNK, "s:1:2")), number, repeat
        ),
        "two sends": min(asyncio.run(_sends(number)) for _ in range(repeat)),
        "wake-up": min(asyncio.run(_wakeup(number)) for _ in range(repeat)),
    }
    steps["floor"] = sum(steps.values())
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="write every round here too")
    args = parser.parse_args()
    rounds = []
    for _ in range(args.rounds):
        load = float(Path("/proc/loadavg").read_text().split()[0])
        rounds.append({**measure(), "load": load})
    print("| step | µs per followed chunk, median (min-max) |\n|---|---|")
    for step in rounds[0]:
        values = [r[step] for r in rounds]
        print(f"| {step} | {median(values):.1f} ({min(values):.1f}-{max(values):.1f}) |")
    if args.json:
        Path(args.json).write_text(json.dumps(rounds, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
