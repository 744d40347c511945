"""A burst of followers: M clients resume one open answer at the same moment while others use the server.

For each backend, round and server, a fresh database and a real ``chatledger
serve`` whose responder (``live_responder.py``) writes a long text answer at
``--rate`` chunks per second. Once answer A has ``--before-burst`` deltas in
its log, at one moment:

* ``--followers`` clients (default 200) resume A (``GET /api/chat/{id}/stream``):
  each must be caught up from the log, then follows live;
* one client posts a new conversation B (``POST /api/chat``): the time to its
  answer's first event is what a new user waits;
* one client reads A's status (``GET /api/chats/{id}/status``) again and
  again, one after the other, for ``--window`` seconds: its p50 / p99.

Also reported: the followers' time to their first event (p50 / p99) and to
the last delta A had when the burst began (caught up), the server's CPU (all
its threads) from the burst to the end of the window (the least noisy figure
on a shared machine), and the machine's 1-minute load average before and after (the
machine is shared: read the figures with it). Nothing passes or fails.

``--before DIR`` measures a checkout of another version too (e.g. a
``git worktree`` of main), laid out as installed and put first on the
server's ``PYTHONPATH``, in the same run, alternating which goes first:

    git worktree add --detach /tmp/main main
    python bench/follow_burst.py --before /tmp/main --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from live_load import _cpu_seconds, _free_port, _loadavg, _processes, _request, _wait_for
from stats import median, percentile

HERE = Path(__file__).resolve().parent
DELTA = b'"delta":"'


@dataclass
class Burst:
    """What the clients saw in one measurement (times in ms from the burst)."""

    follower_first: list[float] = field(default_factory=list)
    follower_caught_up: list[float] = field(default_factory=list)
    new_answer_first: float | None = None
    status_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cpu_at_burst: float = 0.0
    burst_cpu: float = 0.0
    """Server CPU seconds (all its threads) from the burst to the end of the window."""


async def _first_events(
    port: int, method: str, path: str, body: bytes, until: float, marker: bytes | None
) -> tuple[float | None, float | None]:
    """Time of the response's first event, and of the event holding ``marker``; read until ``until``."""
    first = found = None
    status, reader, writer = await _request(port, method, path, body)
    try:
        if status != 200:
            raise RuntimeError(f"{method} {path} answered {status}")
        buffer = b""
        while time.monotonic() < until and (found is None or first is None):
            try:
                data = await asyncio.wait_for(reader.read(1 << 16), until - time.monotonic())
            except TimeoutError:
                break
            if not data:
                break
            now = time.monotonic()
            buffer += data
            if first is None and b"\n\n" in buffer:
                first = now
            if marker is not None and found is None and marker in buffer:
                found = now
            buffer = buffer[-len(marker or b"") - 1 :] if found is None else b""
    finally:
        writer.close()
    return first, found


async def _status_reads(port: int, chat: str, until: float, into: list[float]) -> None:
    while time.monotonic() < until:
        sent = time.monotonic()
        status, reader, writer = await _request(port, "GET", f"/api/chats/{chat}/status")
        await reader.read()
        writer.close()
        if status != 200:
            raise RuntimeError(f"status answered {status}")
        into.append((time.monotonic() - sent) * 1000)


async def _last_delta(port: int, chat: str, deltas: int) -> bytes:
    """Follow ``chat`` until it has ``deltas`` text deltas; the last one's text (its stamp)."""
    while True:  # 204 until the answer's stream is open
        status, reader, writer = await _request(port, "GET", f"/api/chat/{chat}/stream")
        if status == 200:
            break
        writer.close()
        await asyncio.sleep(0.05)
    seen, last, buffer = 0, b"", b""
    try:
        while seen < deltas:
            data = await reader.read(1 << 16)
            if not data:
                raise RuntimeError(f"answer {chat} ended before {deltas} deltas")
            *events, buffer = (buffer + data).split(b"\n\n")
            for event in events:
                at = event.find(DELTA)
                if at >= 0:
                    seen += 1
                    last = event[at + len(DELTA) : event.index(b" ", at + len(DELTA))]
    finally:
        writer.close()
    return last


def _post_body(chat: str) -> bytes:
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}
    return json.dumps({"id": chat, "trigger": "submit-message", "messages": [message]}).encode()


async def _burst(port: int, args: argparse.Namespace, server_cpu: Any) -> Burst:
    result = Burst()
    first_answer = asyncio.create_task(
        _first_events(port, "POST", "/api/chat", _post_body("a"), time.monotonic() + 600, None)
    )
    stamp = await _last_delta(port, "a", args.before_burst)  # A has this many deltas by now
    marker = DELTA + stamp
    result.cpu_at_burst = server_cpu()
    start = time.monotonic()
    until = start + args.window
    resumes = [
        asyncio.create_task(_first_events(port, "GET", "/api/chat/a/stream", b"", until, marker))
        for _ in range(args.followers)
    ]
    new_answer = asyncio.create_task(
        _first_events(port, "POST", "/api/chat", _post_body("b"), until, None)
    )
    status = asyncio.create_task(_status_reads(port, "a", until, result.status_ms))
    for task in [*resumes, new_answer, status]:
        try:
            got = await task
        except Exception as error:  # reported, not raised: the other clients' figures still count
            result.errors.append(repr(error))
            continue
        if isinstance(got, tuple):
            first, found = got
            ms = [None if t is None else (t - start) * 1000 for t in (first, found)]
            if task is new_answer:
                result.new_answer_first = ms[0]
            else:
                if ms[0] is not None:
                    result.follower_first.append(ms[0])
                if ms[1] is not None:
                    result.follower_caught_up.append(ms[1])
    result.burst_cpu = server_cpu() - result.cpu_at_burst
    first_answer.cancel()
    return result


def _layout(checkout: Path, folder: Path) -> Path:
    """``checkout`` laid out as installed (``chatledger/`` with its three layers inside) under ``folder``."""
    root = folder / "before"
    shutil.copytree(checkout / "chatledger", root / "chatledger")
    for layer in ("domain", "projections", "adapters"):
        shutil.copytree(checkout / layer, root / "chatledger" / layer)
    return root


def measure(url: str, path: Path | None, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """One measurement: a fresh server (its code first on ``PYTHONPATH`` from ``path``), one burst."""
    port = _free_port()
    pythonpath = [str(folder)] if path is None else [str(path), str(folder)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "LIVE_CHUNKS": str(args.chunks),
        "LIVE_RATE": str(args.rate),
    }
    command = [sys.executable, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--responder", "live_responder:responder", "--log-level", "warning"]
    command += ["--no-auth", "--no-continuations"]
    where = subprocess.run(
        [sys.executable, "-c", "import chatledger.adapters.store.reads as r; print(r.__file__)"],
        env=env, cwd=folder, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    print(f"  server code: {Path(where).parents[3]}", file=sys.stderr)
    log_file = open(folder / f"server-{port}.log", "wb")  # noqa: SIM115 - closed below
    server = (
        subprocess.Popen(  # run in ``folder``: a chatledger/ in the current directory would win
            command, env=env, stdout=log_file, stderr=subprocess.STDOUT, cwd=folder
        )
    )
    try:
        _wait_for(port, server)
        load_before = _loadavg()
        cpu_before = _cpu_seconds(_processes(server.pid))
        began = time.monotonic()
        burst = asyncio.run(_burst(port, args, lambda: _cpu_seconds(_processes(server.pid))))
        cpu = _cpu_seconds(_processes(server.pid)) - cpu_before
        took = time.monotonic() - began
        load_after = _loadavg()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log_file.close()
    return {
        "new_answer_first_ms": burst.new_answer_first,
        "status_p50_ms": percentile(burst.status_ms, 50),
        "status_p99_ms": percentile(burst.status_ms, 99),
        "status_reads": len(burst.status_ms),
        "follower_first_p50_ms": percentile(burst.follower_first, 50),
        "follower_first_p99_ms": percentile(burst.follower_first, 99),
        "caught_up_p50_ms": percentile(burst.follower_caught_up, 50),
        "caught_up_p99_ms": percentile(burst.follower_caught_up, 99),
        "caught_up": len(burst.follower_caught_up),
        "errors": burst.errors[:3],
        "server_cpu": cpu / took * 100,
        "burst_cpu_s": burst.burst_cpu,
        "load_before": load_before,
        "load_after": load_after,
    }


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *BACKENDS], default="all")
    parser.add_argument("--followers", type=int, default=200, help="clients resuming at once")
    parser.add_argument("--rate", type=float, default=100.0, help="chunks per second per answer")
    parser.add_argument("--chunks", type=int, default=5000, help="text deltas per answer")
    parser.add_argument(
        "--before-burst", type=int, default=1000, help="deltas answer A has when the burst comes"
    )
    parser.add_argument("--window", type=float, default=5.0, help="seconds measured from the burst")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of the version to compare with")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--json", metavar="PATH", help="write every result here too")
    return parser.parse_args()


def _ms(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:,.0f}"


def main() -> int:
    args = _args()
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    if "postgres" in backends and (problem := postgres_available(args.postgres_url)):
        print(f"PostgreSQL does not answer ({problem})", file=sys.stderr)
        backends.remove("postgres")
    print(
        f"{args.followers} followers resume answer A (with {args.before_burst} deltas, "
        f"{args.rate:g} chunks/s) at once; answer B posted then; A's status read meanwhile"
    )
    print(
        "| backend | server | round | B first event ms | status p50 / p99 ms (reads) "
        "| followers first event p50 / p99 ms | caught up p50 / p99 ms (n) | server CPU % "
        "| server CPU s in the window | load before / after |"
    )
    print("|" + "---|" * 10, flush=True)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="chatledger-burst-") as tmp:
        folder = Path(tmp)
        shutil.copy(HERE / "live_responder.py", folder / "live_responder.py")
        servers: list[tuple[str, Path | None]] = [("after", None)]
        if args.before is not None:
            servers.insert(0, ("before", _layout(args.before.resolve(), folder)))
        for backend in backends:
            for round_ in range(args.rounds):
                order = servers[round_ % len(servers) :] + servers[: round_ % len(servers)]
                for name, path in order:
                    with fresh_db(backend, args.postgres_url) as db:
                        r = measure(db.url, path, args, folder)
                    r.update(backend=backend, server=name, round=round_ + 1)
                    results.append(r)
                    if r["errors"]:
                        print(f"  failures: {r['errors']}", file=sys.stderr)
                    print(
                        f"| {backend} | {name} | {round_ + 1} | {_ms(r['new_answer_first_ms'])} "
                        f"| {_ms(r['status_p50_ms'])} / {_ms(r['status_p99_ms'])} "
                        f"({r['status_reads']}) | {_ms(r['follower_first_p50_ms'])} / "
                        f"{_ms(r['follower_first_p99_ms'])} | {_ms(r['caught_up_p50_ms'])} / "
                        f"{_ms(r['caught_up_p99_ms'])} ({r['caught_up']}) | {r['server_cpu']:.0f} "
                        f"| {r['burst_cpu_s']:.2f} "
                        f"| {r['load_before']:.1f} / {r['load_after']:.1f} |",
                        flush=True,
                    )
    print("\nMedians over rounds:")
    for backend in backends:
        for name, _ in servers:
            mine = [r for r in results if r["backend"] == backend and r["server"] == name]
            figures = {
                key: median([r[key] for r in mine if r[key] is not None])
                for key in (
                    "new_answer_first_ms",
                    "status_p99_ms",
                    "caught_up_p99_ms",
                    "burst_cpu_s",
                )
            }
            print(
                f"  {backend} {name}: B first event {_ms(figures['new_answer_first_ms'])} ms, "
                f"status p99 {_ms(figures['status_p99_ms'])} ms, "
                f"followers caught up p99 {_ms(figures['caught_up_p99_ms'])} ms, "
                f"server CPU in the window {figures['burst_cpu_s']:.2f} s"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
