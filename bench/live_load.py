"""Live load on one node: N answers streaming at once through ``chatledger serve``, each resumed by a follower.

For each backend and each N (``--streams``), a fresh database and a real
``chatledger serve`` process whose responder (``live_responder.py``) writes a
text answer at ``--rate`` chunks per second (default 50), each delta stamped
with the wall-clock time it was yielded. N clients post a new conversation
each at the same moment and read their answer; as soon as a client has the
answer's first event, a second client resumes it from the log
(``GET /api/chat/{id}/stream``: the follower). Clients speak plain HTTP/1.0
over asyncio sockets (no HTTP library: the load generator shares the two
CPUs with the server and PostgreSQL, so it must be cheap; its own CPU is
reported too).

Reported per run, over a window of ``--window`` seconds starting ``--warm``
seconds after the posts:

* offered chunks/s (N x rate) and delivered chunks/s: text deltas the
  followers received in the window (what went through the store to a
  resumed client), and those the posting clients received;
* append-to-follower latency p50 / p99: from the responder yielding a delta
  to its follower reading it, over the window's deltas (and to the posting
  client, which gets each chunk as soon as it is stored, before its commit);
* first event p50 / p99: from sending the POST to its first event, and from
  sending the resume to its first event;
* resumes answered 204 (nothing streaming) and failed streams;
* server CPU (% of one core, all its processes) and CPU time per followed
  chunk (a figure less sensitive to a busy machine), the most threads it had,
  and its database connections (PostgreSQL: TCP connections to the server's
  port; SQLite: open descriptors of the database file), the load generator's
  own CPU, and the machine's 1-minute load average before and after;
* PostgreSQL: transactions committed per second in the whole database
  (``pg_stat_database.xact_commit``: reads and NOTIFYs too, and anything
  else using that database; point ``--postgres-url`` at a database of its
  own), and the transactions per second that inserted the store's events
  (distinct ``xmin`` of the rows written in the window).

``--server "NAME=PYTHON [SERVE ARGS]"`` (repeatable) runs each measurement
with the server of another installation too (a virtualenv of an older
checkout), or with other ``chatledger serve`` arguments (``--workers 2``), in
the same run, rotating the order: before/after figures from one run.

    python bench/live_load.py --backend sqlite --streams 10,25,50
    python bench/live_load.py --streams 50 --profile /tmp/p && python bench/stacks.py /tmp/p/<file>
    python bench/live_load.py --backend postgres --streams 50 \\
        --server before=/tmp/base/.venv/bin/python --server after=.venv/bin/python \
        --server "2 workers=.venv/bin/python --workers 2"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import live_floor
import psycopg
from backends import BACKENDS, DEFAULT_POSTGRES_URL, fresh_db, postgres_available
from stats import percentile

HERE = Path(__file__).resolve().parent
DELTA = b'"delta":"'
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Stream:
    """What one conversation's two clients saw."""

    chat: str
    post_sent: float = 0.0
    post_first: float | None = None
    post_deltas: int = 0
    post_done: bool = False
    resume_sent: float | None = None
    resume_status: int | None = None
    resume_first: float | None = None
    follow_deltas: int = 0
    follow_done: bool = False
    error: str | None = None


@dataclass
class Window:
    """The measured window and what arrived in it."""

    start: float
    end: float
    follow_deltas: int = 0
    post_deltas: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    post_latencies_ms: list[float] = field(default_factory=list)

    def holds(self, now: float) -> bool:
        return self.start <= now < self.end


# -- the clients -----------------------------------------------------------------


async def _request(
    port: int, method: str, path: str, body: bytes = b""
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """Send one HTTP/1.0 request (the response body then ends with the connection); its status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    head = f"{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    writer.write(head.encode() + b"\r\n" + body)
    await writer.drain()
    headers = await reader.readuntil(b"\r\n\r\n")
    return int(headers.split(b" ", 2)[1]), reader, writer


async def _read_events(
    reader: asyncio.StreamReader, window: Window, on_event: Any, *, follower: bool
) -> bool:
    """Read SSE events to the end; count deltas; True if ``[DONE]`` came."""
    buffer = b""
    while True:
        data = await reader.read(1 << 16)
        if not data:
            return False
        buffer += data
        *events, buffer = buffer.split(b"\n\n")
        now = time.time()
        for event in events:
            on_event(now)
            at = event.find(DELTA)
            if at >= 0 and window.holds(now):
                sent = float(event[at + len(DELTA) : event.index(b" ", at + len(DELTA))])
                if follower:
                    window.follow_deltas += 1
                    window.latencies_ms.append((now - sent) * 1000)
                else:
                    window.post_deltas += 1
                    window.post_latencies_ms.append((now - sent) * 1000)
            elif event.endswith(b"[DONE]"):
                return True


async def _post_and_follow(port: int, stream: Stream, window: Window) -> None:
    """Post a new conversation, read the answer; resume it from the log at its first event."""
    body = json.dumps(
        {
            "id": stream.chat,
            "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}],
        }
    ).encode()
    follower: asyncio.Task[None] | None = None

    def on_post_event(now: float) -> None:
        nonlocal follower
        if stream.post_first is None:
            stream.post_first = now
            follower = asyncio.create_task(_follow(port, stream, window))
        stream.post_deltas += 1

    writer = None
    try:
        stream.post_sent = time.time()
        status, reader, writer = await _request(port, "POST", "/api/chat", body)
        if status != 200:
            stream.error = f"POST answered {status}"
            return
        stream.post_done = await _read_events(reader, window, on_post_event, follower=False)
    except (OSError, asyncio.IncompleteReadError) as error:
        stream.error = f"POST: {error!r}"
    finally:
        if writer is not None:
            writer.close()
        if follower is not None:
            await follower


async def _follow(port: int, stream: Stream, window: Window) -> None:
    def on_event(now: float) -> None:
        if stream.resume_first is None:
            stream.resume_first = now
        stream.follow_deltas += 1

    writer = None
    try:
        stream.resume_sent = time.time()
        status, reader, writer = await _request(port, "GET", f"/api/chat/{stream.chat}/stream")
        stream.resume_status = status
        if status == 200:
            stream.follow_done = await _read_events(reader, window, on_event, follower=True)
    except (OSError, asyncio.IncompleteReadError) as error:
        stream.error = f"resume: {error!r}"
    finally:
        if writer is not None:
            writer.close()


async def _drive(
    port: int, n: int, args: argparse.Namespace, tag: str
) -> tuple[list[Stream], Window, float]:
    start = time.time()
    window = Window(start + args.warm, start + args.warm + args.window)
    streams = [Stream(f"{tag}-{i}") for i in range(n)]
    deadline = args.chunks / args.rate * 4 + 60
    tasks = [asyncio.create_task(_post_and_follow(port, s, window)) for s in streams]
    _, pending = await asyncio.wait(tasks, timeout=deadline)
    for task in pending:
        task.cancel()
    for stream in streams:
        if stream.error is None and not (stream.post_done and stream.follow_done):
            if stream.resume_status not in (None, 200):
                continue
            stream.error = "did not finish" if pending else "ended without [DONE]"
    return streams, window, time.time() - start


# -- the server and the machine ------------------------------------------------------


def _processes(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def _threads(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("Threads:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _db_connections(pids: list[int], sqlite_path: Path | None, pg_port: int) -> int:
    """PostgreSQL: established TCP connections to ``pg_port``; SQLite: open descriptors of the file."""
    if sqlite_path is not None:
        count = 0
        for pid in pids:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == str(sqlite_path):
                        count += 1
                except OSError:
                    continue
        return count
    inodes: set[str] = set()
    for pid in pids:
        inodes |= _socket_inodes(pid)
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            if parts[3] == "01" and remote_port == pg_port and parts[9] in inodes:
                count += 1
    return count


class Sampler:
    """Samples the server's threads and database connections every half second."""

    def __init__(self, root: int, sqlite_path: Path | None, pg_port: int) -> None:
        self.root, self.sqlite_path, self.pg_port = root, sqlite_path, pg_port
        self.threads = 0
        self.connections = 0

    async def run(self) -> None:
        while True:
            pids = _processes(self.root)
            self.threads = max(self.threads, _threads(pids))
            self.connections = max(
                self.connections, _db_connections(pids, self.sqlite_path, self.pg_port)
            )
            await asyncio.sleep(0.5)


def _pg_mark(url: str) -> tuple[int, int] | None:
    """PostgreSQL: (transactions committed in the database so far, the store's last event position)."""
    if not url.startswith("postgres"):
        return None
    base, _, query = url.partition("?")
    table = f'"{dict(parse_qsl(query))["schema"]}"."chatledger_events"'
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        xact = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        position = conn.execute(f"SELECT COALESCE(MAX(notification_id), 0) FROM {table}").fetchone()
    return int(xact[0]) if xact else 0, int(position[0]) if position else 0


def _pg_event_transactions(url: str, after: int, upto: int) -> int:
    """PostgreSQL: how many transactions inserted the events at positions (after, upto] (by xmin)."""
    base, _, query = url.partition("?")
    table = f'"{dict(parse_qsl(query))["schema"]}"."chatledger_events"'
    with psycopg.connect(base, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT COUNT(DISTINCT xmin::text) FROM {table} "
            "WHERE notification_id > %s AND notification_id <= %s",
            (after, upto),
        ).fetchone()
    return int(row[0]) if row else 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("chatledger serve exited at start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"GET /openapi.json HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                if b" 200 " in conn.recv(64):
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("chatledger serve did not answer within 60 s")


def _serve_help(python: str) -> str:
    """``chatledger serve --help`` of an installation (older ones lack some flags)."""
    return subprocess.run(
        [python, "-m", "chatledger", "serve", "--help"], capture_output=True, text=True, check=True
    ).stdout


def _loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def measure(
    server_spec: str,
    url: str,
    sqlite_path: Path | None,
    n: int,
    args: argparse.Namespace,
    folder: Path,
) -> dict[str, Any]:
    """One run: a fresh server (``PYTHON [SERVE ARGS]``) on ``url``, N streams with a follower each."""
    python, *serve_args = server_spec.split()
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(folder),
        "LIVE_CHUNKS": str(args.chunks),
        "LIVE_RATE": str(args.rate),
    }
    command = [python, "-m", "chatledger", "serve", "--url", url, "--port", str(port)]
    command += ["--responder", "live_responder:responder", "--log-level", "warning"]
    command += [flag for flag in ("--no-auth", "--no-continuations") if flag in _serve_help(python)]
    command += [*serve_args, *args.serve_arg]
    log_file = open(folder / f"server-{port}.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(command, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        _wait_for(port, server)
        load_before = _loadavg()
        profiler = None
        if args.profile:
            out = Path(args.profile) / f"{Path(url.split('?')[0]).name or 'pg'}-{n}-{port}.txt"
            profiler = subprocess.Popen(
                ["py-spy", "record", "-p", str(server.pid), "-o", str(out), "-d",
                 str(int(args.warm + args.window)), "--subprocesses", "--nonblocking",
                 "--format", "raw", "--gil", "--rate", "500"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip

        async def run() -> tuple[list[Stream], Window, float, float, float, Sampler]:
            sampler = Sampler(server.pid, sqlite_path, int(args.pg_port))
            sampling = asyncio.create_task(sampler.run())
            mark: dict[str, float] = {}

            async def clock() -> None:
                await asyncio.sleep(args.warm)
                mark["server"] = _cpu_seconds(_processes(server.pid))
                mark["self"] = sum(os.times()[:2])
                pg_start = await asyncio.to_thread(_pg_mark, url)
                await asyncio.sleep(args.window)
                mark["server"] = _cpu_seconds(_processes(server.pid)) - mark["server"]
                mark["self"] = sum(os.times()[:2]) - mark["self"]
                pg_end = await asyncio.to_thread(_pg_mark, url)
                if pg_start is not None and pg_end is not None:
                    mark["db_commits"] = pg_end[0] - pg_start[0]
                    mark["event_transactions"] = await asyncio.to_thread(
                        _pg_event_transactions, url, pg_start[1], pg_end[1]
                    )

            clocking = asyncio.create_task(clock())
            streams, window, took = await _drive(port, n, args, f"n{n}")
            await clocking
            sampling.cancel()
            db_rates.update(
                (k, mark[k] / args.window)
                for k in ("db_commits", "event_transactions")
                if k in mark
            )
            return streams, window, took, mark["server"], mark["self"], sampler

        db_rates: dict[str, float] = {}
        streams, window, took, server_cpu, self_cpu, sampler = asyncio.run(run())
        if profiler is not None:
            profiler.wait(timeout=120)
        load_after = _loadavg()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log_file.close()
    firsts = [(s.post_first - s.post_sent) * 1000 for s in streams if s.post_first]
    resumes = [
        (s.resume_first - s.resume_sent) * 1000 for s in streams if s.resume_first and s.resume_sent
    ]
    errors = [s.error for s in streams if s.error]
    return {
        "n": n,
        "offered": n * args.rate,
        "followed_per_s": window.follow_deltas / args.window,
        "posted_per_s": window.post_deltas / args.window,
        "latency_p50": percentile(window.latencies_ms, 50),
        "latency_p99": percentile(window.latencies_ms, 99),
        "post_latency_p50": percentile(window.post_latencies_ms, 50),
        "post_latency_p99": percentile(window.post_latencies_ms, 99),
        "cpu_us_per_chunk": server_cpu / max(window.follow_deltas, 1) * 1e6,
        "first_p50": percentile(firsts, 50),
        "first_p99": percentile(firsts, 99),
        "resume_first_p99": percentile(resumes, 99),
        "no_content": sum(1 for s in streams if s.resume_status == 204),
        "errors": len(errors),
        "error_sample": errors[:3],
        "server_cpu": server_cpu / args.window * 100,
        "loadgen_cpu": self_cpu / args.window * 100,
        "threads": sampler.threads,
        "connections": sampler.connections,
        "db_commits_per_s": db_rates.get("db_commits"),
        "event_transactions_per_s": db_rates.get("event_transactions"),
        "load_before": load_before,
        "load_after": load_after,
        "seconds": took,
    }


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *BACKENDS], default="all")
    parser.add_argument(
        "--streams", default="10,25,50", help="comma-separated N (default 10,25,50)"
    )
    parser.add_argument("--rate", type=float, default=50.0, help="chunks per second per answer")
    parser.add_argument(
        "--chunks", type=int, default=1000, help="text deltas per answer (default 1000: 20 s)"
    )
    parser.add_argument("--warm", type=float, default=5.0, help="seconds before the window opens")
    parser.add_argument("--window", type=float, default=10.0, help="seconds measured")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each measurement")
    parser.add_argument(
        "--server", action="append", default=[], metavar="NAME=PYTHON [SERVE ARGS]",
        help="a server installation to measure (repeatable; default: this one)",
    )  # fmt: skip
    parser.add_argument(
        "--serve-arg", action="append", default=[], metavar="ARG",
        help="an extra argument for every chatledger serve (repeatable), e.g. --serve-arg=--workers=2",
    )  # fmt: skip
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="record py-spy collapsed stacks of each run (the thread holding the GIL) into DIR",
    )
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--pg-port", default="5432", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="PATH", help="write every result here too")
    parser.add_argument(
        "--floor", action="store_true",
        help="measure this box's floor per followed chunk (live_floor.py) before each round: "
        "CPU per followed chunk is also given as a multiple of it",
    )  # fmt: skip
    return parser.parse_args()


def _row(backend: str, name: str, r: dict[str, Any]) -> str:
    return (
        f"| {backend} | {name} | {r['n']} | {r['offered']:,.0f} | {r['followed_per_s']:,.0f} "
        f"| {r['posted_per_s']:,.0f} | {r['latency_p50']:,.0f} / {r['latency_p99']:,.0f} "
        f"| {r['post_latency_p50']:,.0f} / {r['post_latency_p99']:,.0f} "
        f"| {r['first_p50']:,.0f} / {r['first_p99']:,.0f} | {r['resume_first_p99']:,.0f} "
        f"| {r['no_content']} | {r['errors']} | {r['server_cpu']:.0f} "
        f"| {r['cpu_us_per_chunk']:,.0f} | {r['loadgen_cpu']:.0f} "
        f"| {r['threads']} | {r['connections']} | {_rate(r['db_commits_per_s'])} "
        f"| {_rate(r['event_transactions_per_s'])} | {r['load_before']:.1f} / {r['load_after']:.1f} "
        f"| {_times(r.get('floor_us'), r['cpu_us_per_chunk'])} |"
    )


def _times(floor: float | None, cpu: float) -> str:
    return "-" if floor is None else f"{cpu / floor:.1f}x of {floor:.0f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def main() -> int:
    args = _args()
    servers = [s.split("=", 1) for s in args.server] or [["this", sys.executable]]
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    if "postgres" in backends and (problem := postgres_available(args.postgres_url)):
        print(f"PostgreSQL does not answer ({problem})", file=sys.stderr)
        if args.backend == "postgres":
            return 1
        backends.remove("postgres")
    print(
        "| backend | server | N | offered chunks/s | to followers chunks/s | to posters chunks/s "
        "| append-to-follower p50 / p99 ms | to poster p50 / p99 ms | first event p50 / p99 ms "
        "| resume first event p99 ms | 204s | failed | server CPU % "
        "| server CPU µs per followed chunk | load generator CPU % | threads (max) "
        "| DB connections (max) | PostgreSQL commits/s (whole database) "
        "| event-writing transactions/s | load avg before / after "
        "| CPU per followed chunk, x floor (µs) |"
    )
    print("|" + "---|" * 21, flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="chatledger-live-") as tmp:
        folder = Path(tmp)
        shutil.copy(HERE / "live_responder.py", folder / "live_responder.py")
        for backend in backends:
            for n in [int(x) for x in args.streams.split(",")]:
                for round_ in range(args.rounds):
                    floor = live_floor.measure()["floor"] if args.floor else None
                    order = servers[round_ % len(servers) :] + servers[: round_ % len(servers)]
                    for name, python in order:
                        print(
                            f"{backend} {name}: {n} streams (round {round_ + 1})...",
                            file=sys.stderr,
                        )
                        with fresh_db(backend, args.postgres_url) as db:
                            result = measure(python, db.url, db.sqlite_path, n, args, folder)
                        result.update(
                            backend=backend, server=name, round=round_ + 1, floor_us=floor
                        )
                        results.append(result)
                        if result["error_sample"]:
                            print(f"  failures: {result['error_sample']}", file=sys.stderr)
                        print(_row(backend, name, result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
