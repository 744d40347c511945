"""A client that leaves a request hanging is cut off, and one that hangs up is counted, quietly.

A real uvicorn server (in a thread of the test, so its log and the app's
counts are at hand) and raw sockets: a body sent a byte at a time past the
read deadline gets 408; a client that hangs up mid-body is counted and
logs no "Exception in ASGI application"; an idle WebSocket is closed.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from websockets.sync.client import connect

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder


class Served:
    """A running server: its base address and the app's ``ChatApp``."""

    def __init__(self, port: int, app: Any) -> None:
        self.port = port
        self.chat = app.state.chatledger

    def raw(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """The app on a SQLite store, short deadlines, served by uvicorn in a thread."""
    store = ConversationStore.open(f"sqlite:///{tmp_path / 'http.db'}")
    app = create_app(
        store,
        responder=demo_responder(),
        body_read_seconds=0.5,
        websocket_idle_seconds=0.5,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:  # startup, bounded
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.01)
    yield Served(sock.getsockname()[1], app)
    server.should_exit = True
    thread.join(timeout=30)
    store.close()


def _post_head(length: int) -> bytes:
    return (
        "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _wait_for(condition: Any) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.01)


@pytest.mark.timeout(60)
def test_a_body_slower_than_the_deadline_gets_408(served: Served) -> None:
    """The body never completes: the server answers 408 at the deadline and counts it."""
    with served.raw() as client:
        client.sendall(_post_head(1000) + b'{"id": "slow", ')  # and nothing more
        answer = client.recv(65536).decode()
    assert answer.startswith("HTTP/1.1 408"), answer
    assert "RequestTimeoutError" in answer
    assert served.chat.connections.body_timeouts == 1


@pytest.mark.timeout(60)
def test_a_client_hanging_up_mid_body_is_counted_quietly(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    """Half a body, then the client is gone: counted, and no traceback in the log."""
    caplog.set_level(logging.INFO)
    with served.raw() as client:
        client.sendall(_post_head(1000) + b'{"id": "gone", ')
    counts = getattr(served.chat, "connections", None)
    _wait_for(
        lambda: (
            (counts is not None and counts.disconnects == 1)
            or any(r.levelno >= logging.ERROR for r in caplog.records)
        )
    )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "Exception in ASGI application" not in text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert counts is not None and counts.disconnects == 1


@pytest.mark.timeout(60)
def test_an_idle_websocket_is_closed_and_counted(served: Served) -> None:
    """No frame and nothing in flight for the idle limit: closed with 1001 and counted."""
    with connect(f"ws://127.0.0.1:{served.port}/api/chat/ws", open_timeout=10) as ws:
        with pytest.raises(Exception) as closed:
            ws.recv(timeout=20)
        assert "1001" in str(closed.value) or ws.close_code == 1001, closed.value
    assert served.chat.connections.idle_websockets_closed == 1
