"""Many clients leaving the server hanging at once: 50 slow bodies and 200 idle WebSockets, all cut off.

The deadlines are shortened (a body within 1 s, a WebSocket idle 1 s) so the
test runs in seconds; ``bench/slow_clients.py`` measures the same against a
real ``chatledger serve`` with the default deadlines. The slow clients send a
byte every 0.2 s until answered (their pace, not a wait for a race); every one
must get 408 and every socket be closed with 1001, each counted, and the
server must log no ``Exception in ASGI application`` nor any error.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import websockets

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder

SLOW, SOCKETS = 50, 200
HEAD = (
    b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n"
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Any]]:
    """The app on a SQLite store with 1 s deadlines, served by uvicorn in a thread: (port, app)."""
    store = ConversationStore.open(f"sqlite:///{tmp_path / 'http.db'}")
    app = create_app(
        store, responder=demo_responder(), body_read_seconds=1.0, websocket_idle_seconds=1.0
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", lifespan="on", backlog=1024))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:  # startup, bounded
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.01)
    yield sock.getsockname()[1], app
    server.should_exit = True
    thread.join(timeout=30)
    store.close()


async def _slow_body(port: int) -> str:
    """Post a head, then a byte every 0.2 s until the server answers: its status line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HEAD)
    answer = asyncio.ensure_future(reader.read(65536))
    try:
        for _ in range(150):  # 30 s of bytes at most, far past the deadline
            if answer.done():
                break
            writer.write(b" ")
            await writer.drain()
            await asyncio.wait([answer], timeout=0.2)
        return (await asyncio.wait_for(answer, 30)).decode().split("\r\n", 1)[0]
    finally:
        writer.close()


async def _idle_socket(port: int) -> int | None:
    """Open a WebSocket and say nothing: the close code the server sent."""
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/api/chat/ws", open_timeout=30, ping_interval=None
    ) as ws:
        try:
            await asyncio.wait_for(ws.recv(), 30)
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
    return None


async def _all(port: int) -> list[Any]:
    return await asyncio.gather(
        *(_slow_body(port) for _ in range(SLOW)), *(_idle_socket(port) for _ in range(SOCKETS))
    )


@pytest.mark.timeout(120)
def test_fifty_slow_bodies_and_two_hundred_idle_sockets_are_all_cut_off_quietly(
    served: tuple[int, Any], caplog: pytest.LogCaptureFixture
) -> None:
    port, app = served
    caplog.set_level(logging.INFO)
    results = asyncio.run(_all(port))
    bodies, sockets = results[:SLOW], results[SLOW:]
    assert bodies == ["HTTP/1.1 408 Request Timeout"] * SLOW, sorted(set(bodies))
    assert sockets == [1001] * SOCKETS, sorted(set(map(str, sockets)))
    counts = app.state.chatledger.connections
    assert (counts.body_timeouts, counts.idle_websockets_closed) == (SLOW, SOCKETS)
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "Exception in ASGI application" not in text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
