"""Clients that leave the server hanging: bodies sent a byte a second, and idle WebSockets, at once.

A script, not a test. A real ``chatledger serve`` (SQLite, default deadlines:
a body must arrive within 30 s, a WebSocket silent for 300 s is closed) gets,
at the same moment:

* ``--slow`` clients (default 50) that post ``/api/chat`` with a
  ``Content-Length`` of 1,000 and then send one byte a second;
* ``--sockets`` WebSockets (default 500) to ``/api/chat/ws`` that send nothing.

Reported: how many slow clients got 408 and when (seconds after their request
began: min / median / max), how many sockets were closed by the server, with
which code and when, how many were still open at the end, and how many times
the server logged ``Exception in ASGI application`` (or any traceback).

Run: ``python bench/slow_clients.py`` (about 5.5 minutes with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

HEAD = (
    "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Authorization: Bearer slow-token\r\nContent-Length: 1000\r\n\r\n"
)
TOKENS = "slow-token=slow"


async def slow_client(port: int) -> tuple[str, float]:
    """Send the head, then a byte a second; (the answer's status line, seconds until it came)."""
    began = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HEAD.encode())
    await writer.drain()
    answer = asyncio.ensure_future(reader.read(65536))
    sent = 0
    try:
        while not answer.done() and sent < 1000:
            writer.write(b" ")
            await writer.drain()
            sent += 1
            await asyncio.wait([answer], timeout=1.0)
        data = await asyncio.wait_for(answer, 30)
        status = data.decode(errors="replace").split("\r\n", 1)[0] or "closed without answer"
    except (TimeoutError, ConnectionError) as error:
        status = f"{type(error).__name__}"
    finally:
        writer.close()
    return status, time.monotonic() - began


async def idle_socket(port: int, limit: float) -> tuple[str, float]:
    """Open a WebSocket and say nothing; (how it ended, seconds until it did)."""
    began = time.monotonic()
    try:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/api/chat/ws",
            open_timeout=60,
            ping_interval=None,
            additional_headers={"Authorization": "Bearer slow-token"},
        ) as ws:
            try:
                await asyncio.wait_for(ws.recv(), limit)
                return "a frame came", time.monotonic() - began
            except websockets.ConnectionClosed as closed:
                return (
                    f"closed {closed.rcvd.code if closed.rcvd else None}",
                    time.monotonic() - began,
                )
            except TimeoutError:
                return "still open", time.monotonic() - began
    except Exception as error:  # could not connect: shown
        return f"{type(error).__name__}", time.monotonic() - began


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return (
        f"median {statistics.median(values):.1f} s (min {min(values):.1f}, max {max(values):.1f})"
    )


async def run(port: int, slow: int, sockets: int, limit: float) -> None:
    load = os.getloadavg()[0]
    results = await asyncio.gather(
        *(slow_client(port) for _ in range(slow)),
        *(idle_socket(port, limit) for _ in range(sockets)),
    )
    bodies, waits = results[:slow], results[slow:]
    timed_out = [t for status, t in bodies if status.startswith("HTTP/1.1 408")]
    print(f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print(
        f"slow bodies: {len(timed_out)} of {slow} answered 408, {spread(timed_out)} after the "
        f"request began; others: {sorted({s for s, _ in bodies if not s.startswith('HTTP/1.1 408')})}"
    )
    closed = [t for how, t in waits if how.startswith("closed")]
    print(
        f"idle WebSockets: {len(closed)} of {sockets} closed by the server "
        f"({sorted({h for h, _ in waits})}), {spread(closed)} after they opened"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=50)
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--limit", type=float, default=330.0, help="give up waiting after this")
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    work = Path(tempfile.mkdtemp(prefix="slow-clients-"))
    log = (work / "serve.log").open("w+")
    command = [
        sys.executable,
        "-m",
        "chatledger",
        "serve",
        "--url",
        f"sqlite:///{work}/s.db",
        "--port",
        str(port),
        "--log-level",
        "info",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_TOKEN")}
    env["CHATLEDGER_TOKENS"] = TOKENS
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.1)
        asyncio.run(run(port, args.slow, args.sockets, args.limit))
    finally:
        server.terminate()
        server.wait(timeout=30)
    log.seek(0)
    text = log.read()
    print(
        f"server log: {text.count('Exception in ASGI application')} 'Exception in ASGI "
        f"application', {text.count('Traceback')} tracebacks, {len(text.splitlines())} lines"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
